/**
 * A valid `data` for every event type, built by the product's own payload builders: what the
 * webhook-engine tests emit when the content does not matter. Every delivered event is validated
 * against the OpenAPI catalogue (test/helpers/receiver.ts), so fixtures must be real payloads too.
 * The analysis carries non-ASCII text, so signing is exercised over multi-byte UTF-8.
 */
import { canonicalAnalysis } from '../../src/domain/analysis.ts';
import { newId } from '../../src/ids.ts';
import {
  callCompletedData,
  callTranscribedData,
  followupDraftedData,
  trackerMatchedData,
} from '../../src/webhooks/outbox/event-data/call-processing.ts';
import { contactCreatedData, contactUpdatedData } from '../../src/webhooks/outbox/event-data/contact.ts';
import { deletionScheduledData } from '../../src/webhooks/outbox/event-data/deletion.ts';
import {
  callFailedData,
  lifecycleRepairedData,
  outboundAttemptedData,
} from '../../src/webhooks/outbox/event-data/outbound.ts';
import { recordingDeletedData, recordingReadyData } from '../../src/webhooks/outbox/event-data/recording.ts';
import type { EventType } from '../../src/webhooks/outbox/event-types.ts';
import { testEventData } from '../../src/webhooks/subscriptions/test-event.ts';

const analysis = () =>
  canonicalAnalysis({ summary: 'héllo — “quoted” ✓', subject: 'Boiler repair', detected_language: 'en' });

/**
 * data of `eventType` about `resourceId` (the call id of call events, the contact id of contact
 * events; webhook.test derives its synthetic call from it).
 */
export function sampleEventData(eventType: string, resourceId: string, at: Date): Record<string, unknown> {
  const id = resourceId;
  const samples: Record<EventType, () => Record<string, unknown>> = {
    'call.completed': () =>
      callCompletedData(
        {
          id,
          direction: 'inbound',
          callerPhone: '+14155552671',
          customerPhoneE164: '+14155552671',
          customerPhoneNational: '(415) 555-2671',
          companyPhoneE164: '+14155550100',
          createdAt: at,
          duration: 42,
        },
        {
          appUrl: `https://calls.example.test/app/calls/${id}`,
          recordingUrl: null,
          analysis: analysis(),
          transcriptOriginal: 'héllo — “quoted” ✓',
        },
      ),
    'call.outbound.attempted': () =>
      outboundAttemptedData({
        callId: id,
        agentUserId: newId(),
        customerPhone: '415 555 2671',
        customerPhoneE164: '+14155552671',
        outboundLifecycle: 'completed',
        duration: 42,
        attemptedAt: at,
        hasRecording: true,
      }),
    'call.recording.ready': () => recordingReadyData(id, `https://calls.example.test/r/${id}.mp3`, 42),
    'call.transcribed': () => callTranscribedData(id, 'héllo — “quoted” ✓', analysis()),
    'call.failed': () => callFailedData(id, 'customer_no_answer', 'customer_busy'),
    'call.outbound.lifecycle_repaired': () => lifecycleRepairedData(id, at),
    'call.deletion_scheduled': () => deletionScheduledData(id, at, 'user_erasure'),
    'call.recording.deleted': () =>
      recordingDeletedData({
        callId: id,
        reason: 'user_erasure',
        recordingSid: null,
        deletionKind: 'hard_deleted',
        deletedAt: at,
      }),
    'call.followup_email.drafted': () =>
      followupDraftedData(id, {
        subject: 'Your boiler',
        body: 'Hello — thanks for calling.',
        language: 'en',
      }),
    'call.tracker.matched': () =>
      trackerMatchedData(id, [
        { tracker_id: newId(), name: 'Pricing', matched_terms: ['quote'], excerpts: ['a quote'] },
      ]),
    'contact.created': () =>
      contactCreatedData({
        id,
        phone: '+14155552671',
        first_name: 'Zoë',
        last_name: null,
        email: null,
        company: null,
      }),
    'contact.updated': () => contactUpdatedData(id, { first_name: 'Zoë', email: 'zoe@example.test' }),
    'webhook.test': () => testEventData(id, at, 'https://calls.example.test'),
  };
  const sample = samples[eventType as EventType];
  if (!sample) throw new Error(`sampleEventData: unknown event type ${eventType}`);
  return sample();
}
