import { v5 as uuidv5 } from 'uuid';
import { MINUTE } from '../../clock.ts';
import { scopeParams } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import type { ProcessedAnalysis } from '../../domain/analysis.ts';
import { callAppUrl } from '../../domain/call-view.ts';
import type { TenantScope } from '../../domain/tenant.ts';
import { AppError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { callCompletedData } from '../outbox/event-data/call-processing.ts';
import type { WebhookTestData } from '../outbox/event-schemas.ts';
import { TEST_EVENT_TYPE } from '../outbox/event-types.ts';
import { eventIdFor, serializeEvent } from '../outbox/outbox.ts';
import { wakeWorkers } from './handshake.ts';

/**
 * The manual Test action (spec "webhook.test"): one event whose data is a synthetic call.completed
 * payload plus _test, _message and _sent_at, and ONE delivery to that subscription only (whatever
 * its event selection). A rotation test passes secretId: the engine then signs with that pending
 * secret and adds service-secret-rotation-id.
 */
export const TEST_EVENT_MESSAGE =
  'This is a test event sent from the webhook settings. It is not a real call: do not process it as business data.';
/** Namespace for synthetic call ids: call_id = UUIDv5(event_id, namespace), stable per test event. */
const TEST_CALL_NAMESPACE = '0b6d7c1e-5f3a-4d2b-9c8e-7a1f2e3d4c5b';

export const subscriptionInactive = () =>
  new AppError(
    'SUBSCRIPTION_INACTIVE',
    'The webhook subscription is not active (inactive or paused); re-verify it with POST /app/api/webhook-subscriptions/{id}/verify first.',
    { status: 409 },
  );

/** data of a webhook.test event: a call.completed payload with demo values (recording_url null) plus the test keys. */
export function testEventData(eventId: string, sentAt: Date, publicBaseUrl: string): WebhookTestData {
  const callId = uuidv5(eventId, TEST_CALL_NAMESPACE);
  const analysis: ProcessedAnalysis = {
    caller_name: 'Jane Example',
    summary: 'Jane asked for a quote to replace a leaking kitchen tap and would like a visit next week.',
    subject: 'Quote for kitchen tap replacement',
    service_needed: 'Tap replacement',
    services_match: true,
    lead_score: 8,
    preferred_date: 'next Tuesday morning',
    client_city: 'San Francisco',
    client_address: null,
    additional_details: null,
    caller_location: null,
    client_country: 'US',
    counterparty_name: null,
    detected_language: 'en',
    proposal_items: null,
  };
  const completed = callCompletedData(
    {
      id: callId,
      direction: 'inbound',
      callerPhone: '+14155550123',
      customerPhoneE164: '+14155550123',
      customerPhoneNational: '(415) 555-0123',
      companyPhoneE164: '+14155550100',
      createdAt: new Date(sentAt.getTime() - 5 * MINUTE),
      duration: 93,
    },
    {
      appUrl: callAppUrl(publicBaseUrl, callId),
      recordingUrl: null,
      analysis,
      transcriptOriginal:
        'Agent: Thanks for calling, how can I help? Caller: Hi, this is Jane, my kitchen tap is leaking and I need a quote.',
    },
  );
  return { ...completed, _test: true, _message: TEST_EVENT_MESSAGE, _sent_at: sentAt.toISOString() };
}

/**
 * Inserts the event (body serialised once) and its one delivery, then wakes the workers. Call
 * inside a transaction that has checked the subscription is active and lies within the scope: the
 * event belongs to the subscription's environment (its delivery carries service-environment).
 */
export async function enqueueTestEvent(
  tx: Queryable,
  t: {
    scope: TenantScope;
    subscriptionId: string;
    secretId: string | null;
    now: Date;
    publicBaseUrl: string;
  },
): Promise<{ event_id: string; delivery_id: string }> {
  // Each Test click is its own fact: a fresh key, so two clicks are two events.
  const eventId = eventIdFor(TEST_EVENT_TYPE, `${t.subscriptionId}:${newId()}`);
  const body = serializeEvent(
    {
      organizationId: t.scope.organizationId,
      environment: t.scope.environment,
      eventType: TEST_EVENT_TYPE,
      resourceId: t.subscriptionId,
      callId: null,
      factKey: '',
      data: testEventData(eventId, t.now, t.publicBaseUrl),
      createdAt: t.now,
    },
    eventId,
  );
  // call_id stays NULL: the synthetic call must not count as reach for deletion events.
  await tx.query(
    `INSERT INTO events (id, organization_id, environment, event_type, resource_id, call_id, body, created_at)
     VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)`,
    [eventId, ...scopeParams(t.scope), TEST_EVENT_TYPE, t.subscriptionId, body, t.now],
  );
  const deliveryId = newId();
  await tx.query(
    `INSERT INTO webhook_deliveries (id, organization_id, subscription_id, event_id, event_type, status,
       next_attempt_at, secret_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $6, $6)`,
    [deliveryId, t.scope.organizationId, t.subscriptionId, eventId, TEST_EVENT_TYPE, t.now, t.secretId],
  );
  await wakeWorkers(tx);
  return { event_id: eventId, delivery_id: deliveryId };
}
