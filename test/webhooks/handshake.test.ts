import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { claimDeliveries } from '../../src/webhooks/delivery/sql/claim-deliveries.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { echoChallenge, type Receiver, receiverPool } from '../helpers/receiver.ts';
import { insertDelivery } from '../helpers/webhooks.ts';

let h: Harness;
let c: ConsoleClient;
let hash: string;
const receivers = receiverPool();
const receiver = receivers.start;

before(async () => {
  h = await createHarness();
  hash = await passwordHash();
  const { email } = await orgWithLogin(h.db, hash);
  c = await login(h, email);
});
after(async () => {
  await receivers?.closeAll();
  await h?.close();
});

async function pausedSubscription(r: Receiver, mode: 'permissive' | 'strict' = 'permissive') {
  const id = (await c.post('/app/api/webhook-subscriptions', { url: r.url, verification_mode: mode })).json
    .subscription_id as string;
  await h.db.query(
    `UPDATE webhook_subscriptions SET state = 'paused', paused_reason = 'receiver_gone', paused_at = $2,
            consecutive_transient_failures = 7, consecutive_gone = 2 WHERE id = $1`,
    [id, h.clock.now()],
  );
  return id;
}

const subRow = async (id: string) =>
  (
    await h.db.query<{
      state: string;
      paused_reason: string | null;
      paused_at: Date | null;
      consecutive_transient_failures: number;
      consecutive_gone: number;
    }>(
      'SELECT state, paused_reason, paused_at, consecutive_transient_failures, consecutive_gone FROM webhook_subscriptions WHERE id = $1',
      [id],
    )
  ).rows[0]!;

test('re-verifying a paused subscription makes it active, clears the pause and resets the counters', async () => {
  const r = await receiver();
  const id = await pausedSubscription(r);
  const res = await c.post(`/app/api/webhook-subscriptions/${id}/verify`);
  assert.equal(res.status, 200);
  assert.equal(res.json.state, 'active');
  assert.equal(res.json.verification.accepted, true);
  assert.deepEqual(await subRow(id), {
    state: 'active',
    paused_reason: null,
    paused_at: null,
    consecutive_transient_failures: 0,
    consecutive_gone: 0,
  });
  assert.equal(r.requests.length, 2);
  assert.deepEqual(Object.keys(JSON.parse(r.requests[1]!.body)), ['event_type', 'challenge']);
});

test('after re-verification the waiting deliveries are claimable and the workers are notified', async () => {
  const r = await receiver();
  const id = await pausedSubscription(r);
  const { deliveryId } = await insertDelivery(h.db, {
    orgId: c.orgId,
    subscriptionId: id,
    createdAt: h.clock.now(),
  });
  const claimWhilePaused = await claimDeliveries(h.db, {
    now: h.clock.now(),
    limit: 100,
    owner: 'probe',
    leaseUntil: h.clock.now(),
  });
  assert.ok(!claimWhilePaused.some((d) => d.id === deliveryId));
  const notes: string[] = [];
  const stop = await h.db.listen('webhook_deliveries', (p) => notes.push(p));
  try {
    assert.equal((await c.post(`/app/api/webhook-subscriptions/${id}/verify`)).json.state, 'active');
    for (let i = 0; i < 50 && notes.length === 0; i++) await new Promise((res) => setTimeout(res, 10));
    assert.ok(notes.length > 0, 'a webhook_deliveries notification');
  } finally {
    await stop();
  }
  const claimed = await claimDeliveries(h.db, {
    now: h.clock.now(),
    limit: 100,
    owner: 'probe',
    leaseUntil: h.clock.now(),
  });
  assert.ok(claimed.some((d) => d.id === deliveryId));
});

test('a failed re-verification leaves a paused subscription paused with its reason', async () => {
  const r = await receiver();
  const id = await pausedSubscription(r);
  r.respond((_q, res) => res.writeHead(503).end());
  const res = await c.post(`/app/api/webhook-subscriptions/${id}/verify`);
  assert.equal(res.status, 200);
  assert.equal(res.json.state, 'paused');
  assert.equal(res.json.verification.response_status, 503);
  const row = await subRow(id);
  assert.equal(row.state, 'paused');
  assert.equal(row.paused_reason, 'receiver_gone');
});

test('an inactive subscription becomes active once its receiver answers', async () => {
  const r = await receiver((_q, res) => res.writeHead(500).end());
  const created = await c.post('/app/api/webhook-subscriptions', { url: r.url });
  assert.equal(created.json.state, 'inactive');
  r.respond((_q, res) => res.writeHead(204).end());
  const res = await c.post(`/app/api/webhook-subscriptions/${created.json.subscription_id}/verify`);
  assert.deepEqual({ status: res.status, state: res.json.state }, { status: 200, state: 'active' });
});

test('re-verification uses the mode chosen at creation: strict needs the echo', async () => {
  const r = await receiver(echoChallenge);
  const id = await pausedSubscription(r, 'strict');
  r.respond((_q, res) => res.writeHead(200).end('ok'));
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${id}/verify`)).json.state, 'paused');
  r.respond(echoChallenge);
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${id}/verify`)).json.state, 'active');
});

test('re-verifying an active subscription keeps it active even when the receiver fails', async () => {
  const r = await receiver();
  const id = (await c.post('/app/api/webhook-subscriptions', { url: r.url })).json.subscription_id;
  r.respond((_q, res) => res.writeHead(500).end());
  const res = await c.post(`/app/api/webhook-subscriptions/${id}/verify`);
  assert.equal(res.json.state, 'active');
  assert.equal(res.json.verification.accepted, false);
});

test('re-verification that would exceed the active limit answers 422 and leaves it paused', async () => {
  const other = await orgWithLogin(h.db, hash);
  await h.db.query('UPDATE organizations SET max_active_subscriptions = 1 WHERE id = $1', [other.orgId]);
  const oc = await login(h, other.email);
  const r = await receiver();
  const first = (await oc.post('/app/api/webhook-subscriptions', { url: r.url })).json.subscription_id;
  await h.db.query(
    `UPDATE webhook_subscriptions SET state = 'paused', paused_reason = 'receiver_rejected' WHERE id = $1`,
    [first],
  );
  const second = await oc.post('/app/api/webhook-subscriptions', { url: r.url });
  assert.equal(second.json.state, 'active');
  const res = await oc.post(`/app/api/webhook-subscriptions/${first}/verify`);
  assert.equal(res.status, 422);
  assert.equal(res.json.error.code, 'VALIDATION_ERROR');
  assert.equal((await subRow(first)).state, 'paused');
});

test('verify of an unknown subscription answers 404 and sends nothing', async () => {
  const res = await c.post('/app/api/webhook-subscriptions/6b1f8f53-8a43-4f4f-9d55-0d0c1f2b7e10/verify');
  assert.equal(res.status, 404);
  assert.equal(res.json.error.code, 'NOT_FOUND');
});
