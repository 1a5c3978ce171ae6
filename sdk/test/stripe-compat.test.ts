/**
 * Our scheme is byte-for-byte Stripe's (t=…,v1=HMAC-SHA256 hex over "<t>.<body>"), so the official stripe
 * package must accept a header made by signPayload. This guards against drift in either direction.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Stripe from 'stripe';
import { signPayload } from '../src/webhooks/sign.ts';
import { callCompletedBody, EVENT_ID, SECRET } from './fixtures.ts';

const stripe = new Stripe('sk_test_x');
const body = callCompletedBody();

test('the stripe package accepts a header made by signPayload', () => {
  const header = signPayload(body, SECRET, Math.floor(Date.now() / 1000));
  const event = stripe.webhooks.constructEvent(body, header, SECRET) as unknown as { event_id: string };
  assert.equal(event.event_id, EVENT_ID);
  assert.deepEqual(event, JSON.parse(body));
});

test('the stripe package rejects our header on a tampered body', () => {
  const header = signPayload(body, SECRET, Math.floor(Date.now() / 1000));
  const tampered = body.replace('"duration":73', '"duration":7300');
  assert.throws(
    () => stripe.webhooks.constructEvent(tampered, header, SECRET),
    (error: unknown) => error instanceof Stripe.errors.StripeSignatureVerificationError,
  );
});

test('the stripe package agrees with signPayload on the exact header it would generate', () => {
  const timestamp = 1_781_000_000;
  const theirs = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp });
  assert.equal(signPayload(body, SECRET, timestamp), theirs);
});
