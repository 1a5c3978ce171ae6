import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { startReceiver, status } from '../helpers/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  createEnv,
  deliveryFor,
  drain,
  type Env,
  emit,
  HOUR,
  insertSubscription,
  subscriptionRow,
  worker,
} from '../helpers/webhooks.ts';

let env: Env;
before(async () => {
  env = await createEnv();
});
after(async () => {
  await env.close();
});

async function emailsOf(orgId: string) {
  const { rows } = await env.db.query<{ subject: string; body: string; status: string; to_address: string }>(
    'SELECT subject, body, status, to_address FROM email_outbox WHERE organization_id = $1',
    [orgId],
  );
  return rows;
}

test(`on ${engine}, 50 consecutive transient failures pause the subscription once, with one e-mail to the owner`, async (t) => {
  const rx = await startReceiver(status(500, 'upstream down'));
  t.after(() => rx.close());
  const { orgId, ownerEmail } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const events: string[] = [];
  for (let i = 0; i < 10; i++) events.push(await emit(env.deps, { orgId }));
  const w = worker(env.deps, { concurrency: 4 });
  t.after(() => w.stop());
  // 10 deliveries × 5 attempts: the clock walks through the retry schedule.
  for (let round = 1; round <= 5; round++) {
    assert.equal(await w.drain(), 10);
    const s = await subscriptionRow(env.db, sub.subscriptionId);
    if (round < 5) {
      assert.equal(s.state, 'active');
      assert.equal(s.consecutive_transient_failures, round * 10);
    }
    env.clock.advance(3 * HOUR);
  }
  const s = await subscriptionRow(env.db, sub.subscriptionId);
  assert.equal(s.state, 'paused');
  assert.equal(s.paused_reason, 'transient_failures');
  const mails = await emailsOf(orgId);
  assert.equal(mails.length, 1, 'one e-mail per pause, not per failing delivery');
  assert.equal(mails[0].to_address, ownerEmail);
  assert.equal(mails[0].status, 'kept', 'no SMTP_URL: kept in the outbox');
  assert.match(mails[0].body, /50 deliveries in a row failed/);
  assert.match(mails[0].body, /HTTP 500, body starts with:\n {2}upstream down/);
  assert.ok(!mails[0].body.includes(sub.secret), 'never the secret');
  assert.ok(!/v1=|t=\d/.test(mails[0].body), 'never a signature');
  for (const e of events)
    assert.equal((await deliveryFor(env.db, sub.subscriptionId, e)).status, 'dead_lettered');
});

test('a success resets the consecutive counters', async (t) => {
  const rx = await startReceiver(status(503));
  t.after(() => rx.close());
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  for (let i = 0; i < 3; i++) await emit(env.deps, { orgId, eventType: 'contact.updated', callId: null });
  const w = worker(env.deps);
  t.after(() => w.stop());
  await w.drain();
  assert.equal((await subscriptionRow(env.db, sub.subscriptionId)).consecutive_transient_failures, 3);
  rx.respond(status(200));
  await emit(env.deps, { orgId, eventType: 'contact.updated', callId: null });
  await w.drain();
  const s = await subscriptionRow(env.db, sub.subscriptionId);
  assert.equal(s.consecutive_transient_failures, 0);
  assert.equal(s.consecutive_gone, 0);
});

test('deliveries of a paused subscription wait, and go out within moments of re-activation and a notify', async (t) => {
  const rx = await startReceiver();
  t.after(() => rx.close());
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url, state: 'paused' });
  const a = await emit(env.deps, { orgId });
  const b = await emit(env.deps, { orgId });
  assert.equal((await deliveryFor(env.db, sub.subscriptionId, a)).held, true);
  // Only LISTEN can wake this worker quickly: its poll is a minute away.
  const w = worker(env.deps, { pollIntervalMs: 60_000 });
  t.after(() => w.stop());
  await w.start();
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(await w.runOnce(), 0, 'nothing is claimable while paused');
  assert.equal(rx.requests.length, 0);

  await env.db.transaction(async (tx) => {
    await tx.query(`UPDATE webhook_subscriptions SET state = 'active' WHERE id = $1`, [sub.subscriptionId]);
    await tx.query(`SELECT pg_notify('webhook_deliveries', '')`);
  });
  await waitFor(async () => rx.requests.length === 2, 'both deliveries at the receiver', 3000);
  await waitFor(
    async () => (await deliveryFor(env.db, sub.subscriptionId, b)).status === 'delivered',
    'the second delivery recorded as delivered',
    3000,
  );
  assert.deepEqual(rx.requests.map((r) => r.headers['service-event-id']).sort(), [a, b].sort());
});

test('an idle started worker delivers a new event within milliseconds of its notify', async (t) => {
  const rx = await startReceiver();
  t.after(() => rx.close());
  const { orgId } = await insertOrg(env.db);
  await insertSubscription(env.deps, { orgId, url: rx.url });
  const w = worker(env.deps, { pollIntervalMs: 60_000 });
  t.after(() => w.stop());
  await w.start();
  const startedAt = performance.now();
  await emit(env.deps, { orgId });
  await waitFor(async () => rx.requests.length === 1, 'the delivery at the receiver', 3000);
  const took = performance.now() - startedAt;
  assert.ok(took < 1000, `took ${took} ms`);
});

test('a delivery whose held flag was written wrong is not sent to a paused subscription: the claim holds it', async (t) => {
  const rx = await startReceiver();
  t.after(() => rx.close());
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url, state: 'paused' });
  const eventId = await emit(env.deps, { orgId });
  // Written around the triggers, e.g. by hand in psql.
  await env.db.query('UPDATE webhook_deliveries SET held = false WHERE subscription_id = $1', [
    sub.subscriptionId,
  ]);
  assert.equal(await drain(env.deps), 0);
  assert.equal(rx.requests.length, 0);
  const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.held, true);
  assert.equal(d.lease_owner, null);
  assert.equal(d.status, 'pending');
});
