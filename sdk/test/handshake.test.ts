import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WebhookPayloadError } from '../src/webhooks/errors.ts';
import { answerHandshake, HANDSHAKE_MAX_BYTES, isVerificationHandshake } from '../src/webhooks/handshake.ts';

const handshake = JSON.stringify({
  event_type: 'webhook.subscription.verify',
  challenge: 'c_9f2e "quoted" ☎',
});

test('a handshake is recognised from a string, bytes or a parsed object', () => {
  assert.ok(isVerificationHandshake(handshake));
  assert.ok(isVerificationHandshake(Buffer.from(handshake)));
  assert.ok(isVerificationHandshake(JSON.parse(handshake)));
});

test('anything but exactly the two handshake keys is not a handshake', () => {
  const notHandshakes: unknown[] = [
    JSON.stringify({ event_type: 'webhook.subscription.verify', challenge: 'c', event_id: 'x' }),
    JSON.stringify({ event_type: 'webhook.subscription.verify' }),
    JSON.stringify({ event_type: 'webhook.subscription.verify', challenge: 42 }),
    JSON.stringify({ event_type: 'call.completed', challenge: 'c' }),
    '["webhook.subscription.verify"]',
    'not json',
    null,
    JSON.stringify({ event_type: 'webhook.subscription.verify', challenge: 'x'.repeat(HANDSHAKE_MAX_BYTES) }),
  ];
  for (const body of notHandshakes) assert.equal(isVerificationHandshake(body), false, String(body));
});

test('the handshake answer is 200 JSON echoing the exact challenge in both modes', () => {
  for (const mode of ['permissive', 'strict'] as const) {
    const answer = answerHandshake(handshake, mode);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.headers, { 'content-type': 'application/json' });
    assert.deepEqual(JSON.parse(answer.body), { challenge: 'c_9f2e "quoted" ☎' });
  }
});

test('answering something that is not a handshake throws a payload error', () => {
  assert.throws(() => answerHandshake('{"event_type":"call.completed"}'), WebhookPayloadError);
});
