import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { DeliveryWorker } from '../../src/webhooks/delivery/worker.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../helpers/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { HOUR, insertDelivery, worker } from '../helpers/webhooks.ts';

/**
 * End to end with the delivery engine: console actions → deliveries table → worker → a real
 * receiver, which checks the signature the way an integrator's verifier does.
 */
let h: Harness;
let c: ConsoleClient;
let r: Receiver;
let w: DeliveryWorker;
let email: string;

before(async () => {
  h = await createHarness();
  ({ email } = await orgWithLogin(h.db, await passwordHash()));
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

test('a delivery in flight at an emergency rotation is not retried with the old secret: it ends skipped, its attempt logged', async (t) => {
  // Answers the handshake at once and holds every event until released.
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slow = await startReceiver((req, res) => {
    if (JSON.parse(req.body).event_type === 'webhook.subscription.verify')
      return void res.writeHead(200).end();
    void released.then(() => res.writeHead(200).end());
  });
  t.after(() => slow.close());
  t.after(release);
  const created = await c.post('/app/api/webhook-subscriptions', { url: slow.url });
  assert.equal(created.json.state, 'active');
  const subId: string = created.json.subscription_id;
  const sent = await c.post(`/app/api/webhook-subscriptions/${subId}/test`);
  const row = async () =>
    (
      await h.db.query<{ status: string; reason: string | null; lease_owner: string | null }>(
        'SELECT status, reason, lease_owner FROM webhook_deliveries WHERE id = $1',
        [sent.json.delivery_id],
      )
    ).rows[0];

  const attempt = w.runOnce();
  await waitFor(async () => slow.requests.length === 2, 'the event at the receiver');
  assert.deepEqual(await row(), { status: 'pending', reason: null, lease_owner: w.id });

  const rot = await c.post(`/app/api/webhook-subscriptions/${subId}/rotations`, { emergency: true });
  assert.equal(rot.status, 201);
  assert.equal(rot.json.state, 'paused');
  assert.deepEqual(await row(), { status: 'skipped', reason: 'emergency_rotation', lease_owner: null });

  // The receiver answers 200 after the rotation: the worker has lost its lease and changes nothing.
  release();
  assert.equal(await attempt, 1);
  assert.deepEqual(await row(), { status: 'skipped', reason: 'emergency_rotation', lease_owner: null });
  const attempts = await h.db.query<{ response_status: number; secret_id: string }>(
    'SELECT response_status, secret_id FROM webhook_attempts WHERE delivery_id = $1',
    [sent.json.delivery_id],
  );
  const initial = await h.db.query<{ id: string }>(
    "SELECT id FROM webhook_secrets WHERE subscription_id = $1 AND kind = 'initial'",
    [subId],
  );
  assert.deepEqual(attempts.rows, [{ response_status: 200, secret_id: initial.rows[0].id }]);

  // Never attempted again with the old secret, however long we wait.
  h.clock.advance(3 * HOUR);
  assert.equal(await w.drain(), 0);
  assert.equal(slow.requests.length, 2);
  // Resent after re-verification, it goes out once, signed with the new secret only.
  c = await login(h, email);
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${subId}/verify`)).json.state, 'active');
  assert.equal((await c.post(`/app/api/deliveries/${sent.json.delivery_id}/resend`)).status, 202);
  assert.equal(await w.drain(), 1);
  const resent = slow.requests[slow.requests.length - 1]!;
  assert.equal(resent.headers['service-event-id'], sent.json.event_id);
  assert.ok(signedWith(resent, rot.json.secret));
  assert.ok(!signedWith(resent, created.json.secret));
});
