import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryEventIdStore } from '../src/webhooks/dedupe.ts';
import { WebhookConfigurationError, WebhookSignatureMismatchError } from '../src/webhooks/errors.ts';
import type { WebhookEvent } from '../src/webhooks/events.ts';
import { handleWebhook } from '../src/webhooks/handle.ts';
import { signPayload } from '../src/webhooks/sign.ts';
import { atT, callCompletedBody, deliveryHeaders, EVENT_ID, SECRET, T } from './fixtures.ts';

const body = callCompletedBody();

function setup() {
  const seen: WebhookEvent[] = [];
  const store = new MemoryEventIdStore();
  const base = {
    secrets: SECRET,
    store,
    onEvent: (event: WebhookEvent) => void seen.push(event),
    verifyOptions: { now: atT() },
  };
  return { seen, store, base };
}

test('a new event is processed once and answered 200', async () => {
  const { seen, base } = setup();
  const result = await handleWebhook({ ...base, rawBody: body, headers: deliveryHeaders(body) });
  assert.equal(result.status, 200);
  assert.equal(result.outcome, 'processed');
  assert.deepEqual(JSON.parse(result.body), { received: true });
  assert.deepEqual(
    seen.map((e) => e.event_id),
    [EVENT_ID],
  );
});

test('a redelivered event is answered 200 without processing it again', async () => {
  const { seen, base } = setup();
  await handleWebhook({ ...base, rawBody: body, headers: deliveryHeaders(body) });
  const again = await handleWebhook({
    ...base,
    rawBody: body,
    headers: deliveryHeaders(body, SECRET, T + 120),
  });
  assert.equal(again.status, 200);
  assert.equal(again.outcome, 'duplicate');
  assert.equal(seen.length, 1);
});

test('a request failing verification is answered 400 and not processed', async () => {
  const { seen, base } = setup();
  const result = await handleWebhook({
    ...base,
    rawBody: body,
    headers: deliveryHeaders(body, 'whsec_wrong'),
  });
  assert.equal(result.status, 400);
  assert.equal(result.outcome, 'rejected');
  assert.ok(result.error instanceof WebhookSignatureMismatchError);
  assert.equal(JSON.parse(result.body).error.code, 'signature_mismatch');
  assert.equal(seen.length, 0);
});

test('an unsigned handshake is answered with the challenge, without a secret and without processing', async () => {
  const { seen, store, base } = setup();
  const challenges: string[] = [];
  const handshake = JSON.stringify({ event_type: 'webhook.subscription.verify', challenge: 'ch_1' });
  const result = await handleWebhook({
    ...base,
    secrets: '',
    rawBody: handshake,
    headers: { 'content-type': 'application/json' },
    mode: 'strict',
    onHandshake: (c) => void challenges.push(c),
  });
  assert.equal(result.status, 200);
  assert.equal(result.outcome, 'handshake');
  assert.equal(result.body, '{"challenge":"ch_1"}');
  assert.deepEqual(challenges, ['ch_1']);
  assert.equal(seen.length, 0);
  assert.equal(store.size, 0);
});

test('a handshake-shaped body carrying a signature header is verified as an event, not echoed', async () => {
  const { base } = setup();
  const handshake = JSON.stringify({ event_type: 'webhook.subscription.verify', challenge: 'ch_1' });
  const result = await handleWebhook({
    ...base,
    rawBody: handshake,
    headers: { 'service-signature': signPayload(handshake, 'whsec_attacker', T) },
  });
  assert.equal(result.status, 400);
});

test('when processing throws, the claim is released and the answer is 500 so the service retries', async () => {
  const { seen, base } = setup();
  const failing = { ...base, onEvent: () => Promise.reject(new Error('CRM down')) };
  const first = await handleWebhook({ ...failing, rawBody: body, headers: deliveryHeaders(body) });
  assert.equal(first.status, 500);
  assert.equal(first.outcome, 'failed');
  assert.equal((first.error as Error).message, 'CRM down');
  assert.doesNotMatch(first.body, /CRM down/);
  const retry = await handleWebhook({ ...base, rawBody: body, headers: deliveryHeaders(body) });
  assert.equal(retry.outcome, 'processed');
  assert.equal(seen.length, 1);
});

test('an event of an unknown type is acknowledged without reaching onEvent', async () => {
  const { seen, base } = setup();
  const later = callCompletedBody({ event_type: 'call.sentiment.scored' });
  const unknown: string[] = [];
  const result = await handleWebhook({
    ...base,
    rawBody: later,
    headers: deliveryHeaders(later),
    onUnknownEvent: (e) => void unknown.push(e.event_type),
  });
  assert.equal(result.status, 200);
  assert.equal(result.outcome, 'unknown_type');
  assert.equal(seen.length, 0);
  assert.deepEqual(unknown, ['call.sentiment.scored']);
});

test('a receiver without any secret fails fast on a signed event', async () => {
  const { base } = setup();
  await assert.rejects(
    handleWebhook({ ...base, secrets: ['  '], rawBody: body, headers: deliveryHeaders(body) }),
    WebhookConfigurationError,
  );
});

test('the delivery environment (service-environment) reaches onEvent and the answer; absent, it is undefined', async () => {
  const contexts: unknown[] = [];
  const { base } = setup();
  const onEvent = (_event: WebhookEvent, context: { environment: 'live' | 'test' | undefined }) =>
    void contexts.push(context);
  const test1 = await handleWebhook({
    ...base,
    onEvent,
    rawBody: body,
    headers: { ...deliveryHeaders(body), 'Service-Environment': 'test' },
  });
  assert.equal(test1.outcome, 'processed');
  assert.equal(test1.environment, 'test');
  const again = await handleWebhook({
    ...base,
    onEvent,
    rawBody: body,
    headers: { ...deliveryHeaders(body), 'service-environment': 'test' },
  });
  assert.equal(again.outcome, 'duplicate');
  assert.equal(again.environment, 'test');

  const other = setup();
  const none = await handleWebhook({ ...other.base, onEvent, rawBody: body, headers: deliveryHeaders(body) });
  assert.equal(none.outcome, 'processed');
  assert.equal('environment' in none, false);
  const odd = setup();
  await handleWebhook({
    ...odd.base,
    onEvent,
    rawBody: body,
    headers: { ...deliveryHeaders(body), 'service-environment': 'staging' },
  });
  assert.deepEqual(contexts, [
    { environment: 'test' },
    { environment: undefined },
    { environment: undefined },
  ]);
});
