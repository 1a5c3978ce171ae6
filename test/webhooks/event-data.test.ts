import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalAnalysis } from '../../src/domain/analysis.ts';
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

const ID = '0b5c5f0e-7f37-4d4e-9a0f-1d2c3b4a5968';
const AT = new Date('2026-06-15T10:00:00.000Z');
const keys = (o: object) => Object.keys(o).sort();
const analysis = canonicalAnalysis({ summary: 'Needs a plumber.', lead_score: 7 });

test('call.completed data has exactly the spec’s twelve keys', () => {
  const d = callCompletedData(
    {
      id: ID,
      direction: 'inbound',
      callerPhone: '+14155552671',
      customerPhoneE164: '+14155552671',
      customerPhoneNational: '(415) 555-2671',
      companyPhoneE164: null,
      createdAt: AT,
      duration: 12.5,
    },
    { appUrl: `https://x.test/app/calls/${ID}`, recordingUrl: null, analysis, transcriptOriginal: 'Hi' },
  );
  assert.deepEqual(d, {
    call_id: ID,
    direction: 'inbound',
    caller_phone: '+14155552671',
    customer_phone_e164: '+14155552671',
    customer_phone_national: '(415) 555-2671',
    company_phone_e164: null,
    call_created_at: '2026-06-15T10:00:00.000Z',
    app_url: `https://x.test/app/calls/${ID}`,
    duration: 12.5,
    recording_url: null,
    transcript_processed: analysis,
    transcript_original: 'Hi',
  });
});

test('call.transcribed carries no call metadata and no recording link', () => {
  assert.deepEqual(keys(callTranscribedData(ID, null, analysis)), [
    'call_id',
    'transcript_original',
    'transcript_processed',
  ]);
});

test('follow-up and tracker data have exactly their keys', () => {
  assert.deepEqual(followupDraftedData(ID, { subject: 's', body: 'b', language: 'en' }), {
    call_id: ID,
    subject: 's',
    body: 'b',
    language: 'en',
  });
  const m = { tracker_id: ID, name: 'n', matched_terms: ['a'], excerpts: [], extra: 1 };
  assert.deepEqual(trackerMatchedData(ID, [m]), {
    call_id: ID,
    matches: [{ tracker_id: ID, name: 'n', matched_terms: ['a'], excerpts: [] }],
  });
});

test('outbound event data have exactly the spec’s keys', () => {
  assert.deepEqual(
    keys(
      outboundAttemptedData({
        callId: ID,
        agentUserId: ID,
        customerPhone: '415 555 2671',
        customerPhoneE164: '+14155552671',
        outboundLifecycle: 'completed',
        duration: null,
        attemptedAt: AT,
        hasRecording: true,
      }),
    ),
    [
      'agent_user_id',
      'attempted_at',
      'call_id',
      'customer_phone',
      'customer_phone_e164',
      'duration',
      'has_recording',
      'outbound_lifecycle',
    ],
  );
  assert.deepEqual(callFailedData(ID, 'customer_no_answer', 'customer_busy'), {
    call_id: ID,
    outbound_lifecycle: 'customer_no_answer',
    failure_reason: 'customer_busy',
  });
  assert.deepEqual(lifecycleRepairedData(ID, AT), {
    call_id: ID,
    previous_lifecycle: 'agent_only',
    new_lifecycle: 'completed',
    repaired_at: '2026-06-15T10:00:00.000Z',
  });
});

test('deletion and recording event data have exactly the spec’s keys', () => {
  assert.deepEqual(deletionScheduledData(ID, AT, 'user_erasure'), {
    call_id: ID,
    pending_deletion_at: '2026-06-15T10:00:00.000Z',
    reason: 'user_erasure',
  });
  assert.deepEqual(
    keys(
      recordingDeletedData({
        callId: ID,
        reason: null,
        recordingSid: null,
        deletionKind: 'hard_deleted',
        deletedAt: AT,
      }),
    ),
    ['call_id', 'deleted_at', 'deletion_kind', 'reason', 'recording_sid'],
  );
  assert.deepEqual(keys(recordingReadyData(ID, null, null)), ['call_id', 'duration', 'recording_url']);
});

test('contact.created is a full snapshot without notes and tags; contact.updated carries the diff', () => {
  const c = {
    id: ID,
    phone: '+1 415 555 2671',
    first_name: 'Ana',
    last_name: null,
    email: null,
    company: null,
  };
  assert.deepEqual(contactCreatedData({ ...c, notes: 'x', tags: ['y'] } as typeof c), { contact: c });
  assert.deepEqual(contactUpdatedData(ID, { email: 'a@b.test' }), {
    contact_id: ID,
    diff: { email: 'a@b.test' },
  });
});

test('a stored analysis comes back in the spec’s key order with every key present', () => {
  assert.deepEqual(Object.keys(canonicalAnalysis({ lead_score: 3, detected_language: 'de', extra: 1 })), [
    'caller_name',
    'summary',
    'subject',
    'service_needed',
    'services_match',
    'lead_score',
    'preferred_date',
    'client_city',
    'client_address',
    'additional_details',
    'caller_location',
    'client_country',
    'counterparty_name',
    'detected_language',
    'proposal_items',
  ]);
  assert.equal('detected_language' in canonicalAnalysis({}), false);
});
