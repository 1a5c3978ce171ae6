import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { DeliveryWorker } from '../../src/webhooks/worker.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/console.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../helpers/receiver.ts';
import { insertDelivery, worker } from '../helpers/webhooks.ts';

/**
 * End to end with the delivery engine: console actions → deliveries table → worker → a real
 * receiver, which checks the signature the way an integrator's verifier does.
 */
let h: Harness;
let c: ConsoleClient;
let r: Receiver;
let w: DeliveryWorker;

before(async () => {
  h = await createHarness();
  const { email } = await orgWithLogin(h.db, await passwordHash());
  c = await login(h, email);
  r = await startReceiver();
  w = worker(h.deps);
});
after(async () => {
  await w?.stop();
  await r?.close();
  await h?.close();
});

function signedWith(req: ReceivedRequest, secret: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['service-signature']));
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${req.body}`).digest('hex');
  return expected === m[2];
}

async function activeSubscription() {
  const res = await c.post('/app/api/webhook-subscriptions', { url: r.url });
  assert.equal(res.json.state, 'active');
  return { id: res.json.subscription_id as string, secret: res.json.secret as string };
}

const lastRequest = () => r.requests[r.requests.length - 1]!;

test('a Test delivery reaches the receiver signed with the active secret and without a rotation header', async () => {
  const sub = await activeSubscription();
  const t = await c.post(`/app/api/webhook-subscriptions/${sub.id}/test`);
  assert.equal(await w.drain(), 1);
  const req = lastRequest();
  assert.equal(req.headers['service-event-id'], t.json.event_id);
  assert.equal(req.headers['service-event-type'], 'webhook.test');
  assert.equal(req.headers['service-secret-rotation-id'], undefined);
  assert.ok(signedWith(req, sub.secret));
  assert.equal(JSON.parse(req.body).data._test, true);
});

test('a rotation test reaches the receiver signed with the pending secret and carrying service-secret-rotation-id', async () => {
  const sub = await activeSubscription();
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  const t = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/test`);
  assert.equal(t.status, 202);
  assert.equal(await w.drain(), 1);
  const req = lastRequest();
  assert.equal(req.headers['service-event-id'], t.json.event_id);
  assert.equal(req.headers['service-secret-rotation-id'], rot.json.rotation_id);
  assert.ok(signedWith(req, rot.json.secret), 'signed with the pending secret');
  assert.ok(!signedWith(req, sub.secret));
  const body = JSON.parse(req.body);
  assert.equal(body.event_type, 'webhook.test');
  assert.equal(body.resource_id, sub.id);

  // After activation, ordinary deliveries are signed with the new secret at once.
  assert.equal(
    (await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/activate`))
      .status,
    200,
  );
  await c.post(`/app/api/webhook-subscriptions/${sub.id}/test`);
  assert.equal(await w.drain(), 1);
  assert.ok(signedWith(lastRequest(), rot.json.secret));
  assert.equal(lastRequest().headers['service-secret-rotation-id'], undefined);
});

test('after an emergency rotation nothing is sent until re-verification; a resend then goes out with the new secret', async () => {
  const sub = await activeSubscription();
  const queued = await insertDelivery(h.db, {
    orgId: c.orgId,
    subscriptionId: sub.id,
    createdAt: h.clock.now(),
  });
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, { emergency: true });
  assert.equal(rot.json.state, 'paused');
  assert.equal(await w.drain(), 0);
  assert.equal((await c.post(`/app/api/deliveries/${queued.deliveryId}/resend`)).status, 202);
  assert.equal(await w.drain(), 0, 'held while paused');
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${sub.id}/verify`)).json.state, 'active');
  assert.equal(await w.drain(), 1);
  const req = lastRequest();
  assert.equal(req.headers['service-event-id'], queued.eventId);
  assert.ok(signedWith(req, rot.json.secret));
  assert.ok(!signedWith(req, sub.secret));
});
