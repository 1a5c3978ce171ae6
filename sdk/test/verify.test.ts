import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  WebhookConfigurationError,
  WebhookPayloadError,
  WebhookSignatureMalformedError,
  WebhookSignatureMismatchError,
  WebhookSignatureMissingError,
  WebhookTimestampError,
  WebhookVerificationError,
} from '../src/webhooks/errors.ts';
import { signPayload } from '../src/webhooks/sign.ts';
import { verifyWebhook } from '../src/webhooks/verify.ts';
import { atT, CALL_ID, callCompletedBody, deliveryHeaders, EVENT_ID, SECRET, T } from './fixtures.ts';

const body = callCompletedBody();
const headers = deliveryHeaders(body);

test('a good signature is accepted and the parsed event returned', () => {
  const event = verifyWebhook(body, headers, SECRET, { now: atT() });
  assert.equal(event.event_id, EVENT_ID);
  assert.equal(event.event_type, 'call.completed');
  assert.equal(event.resource_id, CALL_ID);
  assert.deepEqual(event, JSON.parse(body));
});

test('a tampered body is rejected with a mismatch that asks about the raw body', () => {
  const tampered = body.replace('"duration":73', '"duration":74');
  assert.notEqual(tampered, body);
  assert.throws(
    () => verifyWebhook(tampered, headers, SECRET, { now: atT() }),
    (error: unknown) =>
      error instanceof WebhookSignatureMismatchError &&
      error instanceof WebhookVerificationError &&
      error.code === 'signature_mismatch' &&
      /raw request body/.test(error.message),
  );
});

test('a re-serialised body (same JSON, different bytes) is rejected', () => {
  const reserialised = JSON.stringify(JSON.parse(body), null, 2);
  assert.throws(
    () => verifyWebhook(reserialised, headers, SECRET, { now: atT() }),
    WebhookSignatureMismatchError,
  );
});

test('a wrong secret is rejected', () => {
  assert.throws(
    () => verifyWebhook(body, headers, 'whsec_other', { now: atT() }),
    WebhookSignatureMismatchError,
  );
});

test('several secrets are accepted when one of them matches (rotation)', () => {
  const event = verifyWebhook(body, headers, ['whsec_new_not_yet_used', SECRET], { now: atT() });
  assert.equal(event.event_id, EVENT_ID);
  const signedWithNew = deliveryHeaders(body, 'whsec_new');
  assert.equal(verifyWebhook(body, signedWithNew, [SECRET, 'whsec_new'], { now: atT() }).event_id, EVENT_ID);
});

test('empty and whitespace-only secrets are dropped, never accepted as a key', () => {
  const signedWithEmpty = deliveryHeaders(body, '');
  assert.throws(
    () => verifyWebhook(body, signedWithEmpty, ['', '  ', SECRET], { now: atT() }),
    WebhookSignatureMismatchError,
  );
  assert.equal(verifyWebhook(body, headers, ['', ' \n', SECRET], { now: atT() }).event_id, EVENT_ID);
});

test('no non-empty secret at all is a configuration error, not a verification failure', () => {
  for (const secrets of ['', [], ['', '   ']]) {
    assert.throws(
      () => verifyWebhook(body, headers, secrets, { now: atT() }),
      (error: unknown) =>
        error instanceof WebhookConfigurationError &&
        !(error instanceof WebhookVerificationError) &&
        /No webhook signing secret/.test(error.message),
    );
  }
});

test('a secret with a trailing newline (read from a file) still matches', () => {
  assert.equal(verifyWebhook(body, headers, `${SECRET}\n`, { now: atT() }).event_id, EVENT_ID);
});

test('a timestamp 600 s old is accepted and 601 s old is rejected', () => {
  assert.equal(verifyWebhook(body, headers, SECRET, { now: atT(600) }).event_id, EVENT_ID);
  assert.throws(
    () => verifyWebhook(body, headers, SECRET, { now: atT(601) }),
    (error: unknown) =>
      error instanceof WebhookTimestampError && error.timestamp === T && /601 s old/.test(error.message),
  );
});

test('a timestamp 300 s ahead is accepted and 301 s ahead is rejected', () => {
  assert.equal(verifyWebhook(body, headers, SECRET, { now: atT(-300) }).event_id, EVENT_ID);
  assert.throws(
    () => verifyWebhook(body, headers, SECRET, { now: atT(-301) }),
    (error: unknown) => error instanceof WebhookTimestampError && /301 s ahead/.test(error.message),
  );
});

test('the tolerance windows are configurable', () => {
  const options = { now: atT(61), toleranceSeconds: 60 };
  assert.throws(() => verifyWebhook(body, headers, SECRET, options), WebhookTimestampError);
  const ahead = { now: atT(-11), futureToleranceSeconds: 10 };
  assert.throws(() => verifyWebhook(body, headers, SECRET, ahead), WebhookTimestampError);
});

test('a missing signature header is rejected', () => {
  const { 'service-signature': _omitted, ...unsigned } = headers;
  assert.throws(
    () => verifyWebhook(body, unsigned, SECRET, { now: atT() }),
    (error: unknown) => error instanceof WebhookSignatureMissingError && error.code === 'signature_missing',
  );
  assert.throws(
    () => verifyWebhook(body, { ...headers, 'service-signature': '' }, SECRET, { now: atT() }),
    WebhookSignatureMissingError,
  );
});

test('malformed signature headers are rejected as malformed', () => {
  const v1 = signPayload(body, SECRET, T).split(',')[1];
  const malformed = [
    'garbage',
    v1,
    `t=${T}`,
    `t=${T},v1=abc123`,
    `t=${T},v1=${'A'.repeat(64)}`,
    `t=soon,${v1}`,
    `t=${T},t=${T},${v1}`,
    `t=-5,${v1}`,
  ];
  for (const value of malformed) {
    assert.throws(
      () => verifyWebhook(body, { 'service-signature': value }, SECRET, { now: atT() }),
      WebhookSignatureMalformedError,
      value,
    );
  }
});

test('several v1 entries are tolerated and unknown schemes ignored', () => {
  const good = signPayload(body, SECRET, T);
  const v1 = good.split(',')[1];
  const value = `t=${T}, v0=${'1'.repeat(64)}, v1=${'0'.repeat(64)}, ${v1}, v2=whatever`;
  assert.equal(
    verifyWebhook(body, { 'service-signature': value }, SECRET, { now: atT() }).event_id,
    EVENT_ID,
  );
});

test('a string body and a Buffer body of the same bytes verify alike', () => {
  const unicode = callCompletedBody({ created_at: '2026-06-20T10:00:00Z' }).replace(
    'Jana Novak',
    'Jana Nováková ☎',
  );
  const h = deliveryHeaders(unicode);
  const fromString = verifyWebhook(unicode, h, SECRET, { now: atT() });
  const fromBuffer = verifyWebhook(Buffer.from(unicode, 'utf8'), h, SECRET, { now: atT() });
  const fromUint8 = verifyWebhook(new TextEncoder().encode(unicode), h, SECRET, { now: atT() });
  assert.deepEqual(fromBuffer, fromString);
  assert.deepEqual(fromUint8, fromString);
});

test('an already parsed body is refused with a hint about the raw body', () => {
  const parsed = JSON.parse(body) as unknown as string;
  assert.throws(() => verifyWebhook(parsed, headers, SECRET, { now: atT() }), /raw request body/);
});

test('service-event-id and service-event-type must equal the signed body when present', () => {
  const badId = { ...headers, 'service-event-id': '00000000-0000-5000-8000-000000000000' };
  assert.throws(() => verifyWebhook(body, badId, SECRET, { now: atT() }), WebhookPayloadError);
  const badType = { ...headers, 'service-event-type': 'contact.created' };
  assert.throws(() => verifyWebhook(body, badType, SECRET, { now: atT() }), WebhookPayloadError);
  const { 'service-event-id': _a, 'service-event-type': _b, ...bare } = headers;
  assert.equal(verifyWebhook(body, bare, SECRET, { now: atT() }).event_id, EVENT_ID);
});

test('a validly signed body that is not an event envelope is a payload error', () => {
  for (const bad of [
    'not json',
    '[]',
    callCompletedBody({ api_version: '2027-01-01' }),
    callCompletedBody({ data: null }),
  ]) {
    assert.throws(
      () => verifyWebhook(bad, { 'service-signature': signPayload(bad, SECRET, T) }, SECRET, { now: atT() }),
      WebhookPayloadError,
      bad,
    );
  }
});

test('the default clock is the real one', () => {
  const now = Math.floor(Date.now() / 1000);
  const h = { 'service-signature': signPayload(body, SECRET, now) };
  assert.equal(verifyWebhook(body, h, SECRET).event_id, EVENT_ID);
});
