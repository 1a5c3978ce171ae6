import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type CallCompletedData,
  isKnownEvent,
  isKnownEventType,
  isTestEvent,
  type ProcessedAnalysis,
  WEBHOOK_EVENT_TYPES,
  type WebhookEvent,
} from '../src/webhooks/index.ts';
import { signPayload } from '../src/webhooks/sign.ts';
import { verifyWebhook } from '../src/webhooks/verify.ts';
import { atT, callCompletedBody, deliveryHeaders, SECRET, T } from './fixtures.ts';

/** Compiles only while the union narrows `data` per event type (checked by `tsc --noEmit`). */
function describeEvent(event: WebhookEvent): string {
  // @ts-expect-error: before narrowing, `data` is a union and has no common `transcript_processed`.
  void event.data.transcript_processed;
  switch (event.event_type) {
    case 'call.completed': {
      const data: CallCompletedData = event.data;
      const analysis: ProcessedAnalysis = data.transcript_processed;
      return `completed ${data.duration}s lead ${analysis.lead_score}`;
    }
    case 'call.failed':
      return `failed at ${event.data.outbound_lifecycle}: ${event.data.failure_reason}`;
    case 'contact.created':
      return `contact ${event.data.contact.phone}`;
    case 'contact.updated':
      return `contact diff ${Object.keys(event.data.diff).join(',')}`;
    case 'webhook.test':
      return `test ${event.data._message}`;
    case 'call.outbound.attempted':
    case 'call.recording.ready':
    case 'call.transcribed':
    case 'call.outbound.lifecycle_repaired':
    case 'call.deletion_scheduled':
    case 'call.recording.deleted':
    case 'call.followup_email.drafted':
    case 'call.tracker.matched':
      return event.event_type;
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

test('the event type list has the thirteen v1 types, each once', () => {
  assert.equal(WEBHOOK_EVENT_TYPES.length, 13);
  assert.equal(new Set(WEBHOOK_EVENT_TYPES).size, 13);
  assert.ok(isKnownEventType('call.tracker.matched'));
  assert.ok(!isKnownEventType('webhook.subscription.verify'));
});

test('a verified event narrows by event_type to its typed data', () => {
  const event = verifyWebhook(callCompletedBody(), deliveryHeaders(callCompletedBody()), SECRET, {
    now: atT(),
  });
  assert.ok(isKnownEvent(event));
  assert.equal(describeEvent(event), 'completed 73s lead 8');
  if (event.event_type === 'call.completed') {
    // Unknown extra analysis fields survive, typed as unknown through the index signature.
    assert.equal(event.data.transcript_processed.sentiment_hint, 'positive');
  }
});

test('an event of a type added later is verified but not known', () => {
  const body = callCompletedBody({ event_type: 'call.sentiment.scored', data: { call_id: 'x', score: 3 } });
  const event = verifyWebhook(body, { 'service-signature': signPayload(body, SECRET, T) }, SECRET, {
    now: atT(),
  });
  assert.equal(event.event_type, 'call.sentiment.scored');
  assert.equal(isKnownEvent(event), false);
});

test('webhook.test events are recognised as tests', () => {
  const body = callCompletedBody({
    event_type: 'webhook.test',
    data: {
      ...JSON.parse(callCompletedBody()).data,
      _test: true,
      _message: 'hello',
      _sent_at: '2026-06-20T10:00:00Z',
    },
  });
  const event = verifyWebhook(body, deliveryHeaders(body), SECRET, { now: atT() });
  assert.ok(isTestEvent(event));
  assert.ok(isKnownEvent(event));
  assert.equal(describeEvent(event), 'test hello');
  const real = verifyWebhook(callCompletedBody(), deliveryHeaders(callCompletedBody()), SECRET, {
    now: atT(),
  });
  assert.equal(isTestEvent(real), false);
});
