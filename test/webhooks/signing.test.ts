import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import Stripe from 'stripe';
import { verifyWebhook } from '../../sdk/src/webhooks/verify.ts';
import { newId } from '../../src/ids.ts';
import { encryptSecret } from '../../src/webhooks/delivery/secret-box.ts';
import { signatureHeader } from '../../src/webhooks/delivery/signing.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import {
  attemptsOf,
  createEnv,
  deliveryFor,
  drain,
  type Env,
  emit,
  insertSubscription,
} from '../helpers/webhooks.ts';

let env: Env;
let rx: Receiver;
before(async () => {
  env = await createEnv();
  rx = await startReceiver();
});
after(async () => {
  await rx?.close();
  await env?.close();
});

test('signatureHeader is t=<seconds>,v1=<HMAC-SHA256 hex of "<t>.<body>">', () => {
  const body = '{"a":"é"}';
  const expected = createHmac('sha256', 'whsec_k').update(`1781517600.${body}`).digest('hex');
  assert.equal(signatureHeader('whsec_k', body, 1781517600), `t=1781517600,v1=${expected}`);
  assert.match(signatureHeader('s', '', 0), /^t=0,v1=[0-9a-f]{64}$/);
});

test(`on ${engine}, a delivery carries exactly content-type, service-signature, service-event-id, service-event-type and service-environment`, async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const eventId = await emit(env.deps, { orgId, eventType: 'call.transcribed' });
  rx.requests.length = 0;
  await drain(env.deps);
  assert.equal(rx.requests.length, 1);
  const r = rx.requests[0];
  assert.equal(r.method, 'POST');
  assert.equal(r.url, '/hooks');
  const t = Math.floor(env.clock.now().getTime() / 1000);
  assert.deepEqual(Object.keys(r.headers).sort(), [
    'connection',
    'content-length',
    'content-type',
    'host',
    'service-environment',
    'service-event-id',
    'service-event-type',
    'service-signature',
  ]);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['service-event-id'], eventId);
  assert.equal(r.headers['service-environment'], 'live');
  assert.equal(r.headers['service-event-type'], 'call.transcribed');
  assert.equal(r.headers['service-signature'], signatureHeader(sub.secret, r.body, t));
  assert.equal(String(r.headers['service-signature']).match(/v1=/g)?.length, 1, 'exactly one v1');
  const { rows } = await env.db.query<{ body: string }>('SELECT body FROM events WHERE id = $1', [eventId]);
  assert.equal(r.body, rows[0].body, 'the stored bytes, never re-serialised');
  assert.equal(Number(r.headers['content-length']), Buffer.byteLength(rows[0].body));
  const [attempt] = await attemptsOf(env.db, (await deliveryFor(env.db, sub.subscriptionId, eventId)).id);
  assert.equal(attempt.secret_id, sub.secretId);
  assert.equal(Number(attempt.signature_timestamp), t);
});

test('the SDK verifier and the official stripe package both accept a delivery as received', async () => {
  env.clock.set(new Date());
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const eventId = await emit(env.deps, { orgId });
  rx.requests.length = 0;
  await drain(env.deps);
  const r = rx.requests[0];
  const event = verifyWebhook(r.body, r.headers, sub.secret, { now: () => env.clock.now().getTime() });
  assert.equal(event.event_id, eventId);
  const stripe = new Stripe('sk_test_x');
  const viaStripe = stripe.webhooks.constructEvent(
    r.body,
    String(r.headers['service-signature']),
    sub.secret,
  ) as unknown as {
    event_id: string;
  };
  assert.equal(viaStripe.event_id, eventId);
  assert.throws(() =>
    stripe.webhooks.constructEvent(r.body, String(r.headers['service-signature']), 'whsec_other'),
  );
});

test('a rotation test delivery is signed with its own secret and carries service-secret-rotation-id', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const pendingId = newId();
  const pendingSecret = 'whsec_pending_rotation_secret';
  await env.db.query(
    `INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at)
     VALUES ($1, $2, $3, $4, 'pending', 'standard', $5)`,
    [
      pendingId,
      sub.subscriptionId,
      orgId,
      encryptSecret(env.deps.keys.secretEncryptionKey, pendingSecret),
      env.clock.now(),
    ],
  );
  const eventId = await emit(env.deps, { orgId, eventType: 'contact.created', callId: null });
  const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  await env.db.query('UPDATE webhook_deliveries SET secret_id = $2 WHERE id = $1', [d.id, pendingId]);
  rx.requests.length = 0;
  await drain(env.deps);
  const r = rx.requests[0];
  assert.equal(r.headers['service-secret-rotation-id'], pendingId);
  verifyWebhook(r.body, r.headers, pendingSecret, { now: () => env.clock.now().getTime() });
  assert.throws(() => verifyWebhook(r.body, r.headers, sub.secret, { now: () => env.clock.now().getTime() }));
  const [attempt] = await attemptsOf(env.db, d.id);
  assert.equal(attempt.secret_id, pendingId);
});
