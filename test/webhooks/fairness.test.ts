import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { newId } from '../../src/ids.ts';
import { claimDeliveries } from '../../src/webhooks/delivery/sql/claim-deliveries.ts';
import { emitEvent } from '../../src/webhooks/outbox/outbox.ts';
import { engine } from '../helpers/db.ts';
import { sampleEventData } from '../helpers/event-samples.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { createEnv, type Env, emit, insertSubscription, worker } from '../helpers/webhooks.ts';

/**
 * Fairness between subscriptions (src/webhooks/delivery/slot-pump.ts, docs/webhooks.md): one slow
 * customer must not take every request slot of a worker, nor fill its claims; a single fast one
 * still gets all of them, and a slow one alone gets all but the reserve. Real receivers on loopback,
 * a worker started as in production (LISTEN + poll).
 */
let env: Env;
const receivers: Receiver[] = [];
before(async () => {
  env = await createEnv();
});
after(async () => {
  for (const r of receivers) await r.close();
  await env?.close();
});

async function receiver(handler: (res: ServerResponse) => void) {
  let open = 0;
  const stats = { maxOpen: 0 };
  const rx = await startReceiver((_q, res) => {
    open++;
    stats.maxOpen = Math.max(stats.maxOpen, open);
    res.on('close', () => open--);
    handler(res);
  });
  receivers.push(rx);
  return { rx, stats };
}

async function deliveredCount(subscriptionId: string): Promise<number> {
  const r = await env.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'delivered'`,
    [subscriptionId],
  );
  return r.rows[0].n;
}

/** `n` events in one transaction: the deliveries of all subscriptions arrive together. */
async function emitBurst(orgId: string, n: number) {
  await env.db.transaction(async (tx) => {
    for (let i = 0; i < n; i++) {
      const callId = newId();
      await emitEvent(tx, {
        organizationId: orgId,
        environment: 'live',
        eventType: 'call.completed',
        resourceId: callId,
        callId,
        factKey: newId(),
        data: sampleEventData('call.completed', callId, env.clock.now()),
        createdAt: env.clock.now(),
      });
    }
  });
}

async function skipAll(orgId: string) {
  await env.db.query(
    `UPDATE webhook_deliveries SET status = 'skipped', reason = 'test', lease_owner = NULL WHERE organization_id = $1 AND status = 'pending'`,
    [orgId],
  );
}

test(`on ${engine}, a receiver that starts to hang mid-burst does not hold up another subscription`, async () => {
  let hanging = false;
  const hang = await receiver((res) => {
    if (!hanging) res.end('ok');
  });
  const ok = await receiver((res) => res.end('ok'));
  const { orgId } = await insertOrg(env.db);
  const hangSub = await insertSubscription(env.deps, { orgId, url: hang.rx.url });
  const okSub = await insertSubscription(env.deps, { orgId, url: ok.rx.url });
  const w = worker(env.deps, { concurrency: 8, timeoutMs: 5_000, pollIntervalMs: 50 });
  try {
    await w.start();
    for (let i = 0; i < 5; i++) await emit(env.deps, { orgId });
    await waitFor(async () => (await deliveredCount(hangSub.subscriptionId)) === 5, 'warm-up', 5_000);
    hanging = true;
    hang.stats.maxOpen = 0;
    // Without fairness, the 8 slots would fill with hanging requests for the whole 5 s time-out,
    // and every healthy delivery queued behind them would wait for rounds of time-outs.
    await emitBurst(orgId, 40);
    const t0 = Date.now();
    await waitFor(
      async () => (await deliveredCount(okSub.subscriptionId)) === 45,
      'healthy delivered',
      4_500,
    );
    const took = Date.now() - t0;
    assert.ok(took < 4_500, `healthy subscription served in ${took} ms`);
    // With another subscription at work, one that is not (yet) known to be slow may hold all but
    // the reserve (8 / 4 = 2) slots.
    assert.ok(hang.stats.maxOpen <= 6, `hanging receiver held ${hang.stats.maxOpen} requests`);
    assert.ok(hang.stats.maxOpen >= 1);
    assert.equal(ok.rx.requests.length, 45, 'each healthy delivery sent once');
  } finally {
    await hang.rx.close(); // its open requests fail now (connection), so stop() does not wait 5 s
    await w.stop();
    await skipAll(orgId);
  }
});

test(`on ${engine}, a single fast subscription gets every slot of the worker`, async () => {
  const fast = await receiver((res) => setTimeout(() => res.end('ok'), 40));
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: fast.rx.url });
  for (let i = 0; i < 120; i++) await emit(env.deps, { orgId });
  const w = worker(env.deps, { concurrency: 8, pollIntervalMs: 50 });
  try {
    await w.start();
    await waitFor(async () => (await deliveredCount(sub.subscriptionId)) === 120, 'all delivered', 15_000);
    assert.equal(fast.stats.maxOpen, 8, 'all 8 slots in use at once');
  } finally {
    await w.stop();
  }
});

test(`on ${engine}, a slow receiver alone is served by all but the reserve slots (work-conserving)`, async () => {
  const slow = await receiver((res) => setTimeout(() => res.end('ok'), 1_200));
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: slow.rx.url });
  await emitBurst(orgId, 20);
  const w = worker(env.deps, { concurrency: 8, timeoutMs: 5_000, pollIntervalMs: 50 });
  const t0 = Date.now();
  try {
    await w.start();
    // Not known to be slow yet and alone: the whole worker.
    await waitFor(async () => (await deliveredCount(sub.subscriptionId)) >= 8, 'first round', 5_000);
    assert.equal(slow.stats.maxOpen, 8);
    slow.stats.maxOpen = 0;
    await waitFor(async () => (await deliveredCount(sub.subscriptionId)) === 20, 'all delivered', 12_000);
    const took = Date.now() - t0;
    // 8, then 6 at a time: three rounds of 1.2 s. Capped at one slot it would be 1 + 12 rounds.
    assert.ok(took < 8_000, `20 slow deliveries took ${took} ms`);
    assert.equal(slow.stats.maxOpen, 6, 'known slow: concurrency minus the reserve (8 - 2)');
  } finally {
    await w.stop();
  }
});

test(`on ${engine}, a slow subscription is held to its cap while another has work, and its claims leave room`, async () => {
  const slow = await receiver((res) => setTimeout(() => res.end('ok'), 1_500));
  const ok = await receiver((res) => res.end('ok'));
  const { orgId } = await insertOrg(env.db);
  const slowSub = await insertSubscription(env.deps, { orgId, url: slow.rx.url });
  const okSub = await insertSubscription(env.deps, { orgId, url: ok.rx.url });
  const w = worker(env.deps, { concurrency: 8, timeoutMs: 5_000, pollIntervalMs: 50 });
  try {
    await w.start();
    // Learn that the first one is slow: one delivery each.
    await emit(env.deps, { orgId });
    await waitFor(
      async () => (await deliveredCount(slowSub.subscriptionId)) === 1,
      'first slow delivery',
      5_000,
    );
    slow.stats.maxOpen = 0;
    // Now a burst of 60 events fanned out to both, in one transaction: the rows interleave.
    await emitBurst(orgId, 60);
    const t0 = Date.now();
    await waitFor(
      async () => (await deliveredCount(okSub.subscriptionId)) === 61,
      'healthy burst delivered',
      5_000,
    );
    const took = Date.now() - t0;
    assert.ok(took < 4_000, `healthy burst took ${took} ms`);
    // While the healthy one has work the slow one holds max(1, min(4, 8 / 16)) = 1 slot; in the
    // moments the healthy one has none it may use more (work-conserving), never the reserve.
    assert.ok(slow.stats.maxOpen <= 6, `slow receiver held ${slow.stats.maxOpen} requests at once`);
  } finally {
    await slow.rx.close();
    await w.stop();
    await skipAll(orgId);
  }
});

test(`on ${engine}, the claim leaves out the subscriptions it is told to`, async () => {
  const { orgId } = await insertOrg(env.db);
  const a = await insertSubscription(env.deps, { orgId, url: 'https://a.example.test/in' });
  const b = await insertSubscription(env.deps, { orgId, url: 'https://b.example.test/in' });
  for (let i = 0; i < 5; i++) await emit(env.deps, { orgId });
  const now = env.clock.now();
  const rows = await claimDeliveries(env.db, {
    now,
    limit: 100,
    owner: 'fair',
    leaseUntil: new Date(now.getTime() + 60_000),
    exclude: [a.subscriptionId],
  });
  assert.equal(rows.length, 5);
  assert.ok(rows.every((r) => r.subscriptionId === b.subscriptionId));
  const rest = await claimDeliveries(env.db, {
    now,
    limit: 100,
    owner: 'fair',
    leaseUntil: new Date(now.getTime() + 60_000),
    exclude: [],
  });
  assert.equal(rest.length, 5);
  assert.ok(rest.every((r) => r.subscriptionId === a.subscriptionId));
  await skipAll(orgId);
});

test(`on ${engine}, a claim capped per subscription takes the earliest rows of each, up to the cap`, async () => {
  const { orgId } = await insertOrg(env.db);
  const subs = [];
  for (const name of ['a', 'b', 'c']) {
    subs.push(await insertSubscription(env.deps, { orgId, url: `https://${name}.example.test/in` }));
  }
  // 8 events, each fanned out to the three subscriptions, one clock tick apart: an order to keep.
  for (let i = 0; i < 8; i++) {
    await emit(env.deps, { orgId });
    env.clock.advance(1);
  }
  const now = env.clock.now();
  const lease = { now, owner: 'fair', leaseUntil: new Date(now.getTime() + 60_000) };
  // Each subscription's rows in order, before the claim moves the claimed ones to their lease expiry.
  const due = await env.db.query<{ id: string; subscription_id: string; n: number }>(
    `SELECT d.id, d.subscription_id, row_number() OVER (PARTITION BY d.subscription_id ORDER BY d.next_attempt_at)::int AS n
       FROM webhook_deliveries d WHERE d.organization_id = $1`,
    [orgId],
  );
  const position = new Map(due.rows.map((r) => [r.id, r.n]));
  const rows = await claimDeliveries(env.db, {
    ...lease,
    limit: 100,
    exclude: [subs[0].subscriptionId],
    perSubscription: 3,
  });
  const count = (id: string) => rows.filter((r) => r.subscriptionId === id).length;
  assert.deepEqual(
    subs.map((s) => count(s.subscriptionId)),
    [0, 3, 3],
    'none of the excluded one, three of each other',
  );
  const ours = new Set(subs.map((s) => s.subscriptionId));
  assert.ok(
    rows.filter((r) => ours.has(r.subscriptionId)).every((r) => (position.get(r.id) ?? 99) <= 3),
    'the earliest three of each subscription',
  );
  // Below the cap the statement is the plain claim: a limit smaller than the cap takes rows in order.
  const next = await claimDeliveries(env.db, { ...lease, limit: 4, exclude: [], perSubscription: 10 });
  assert.equal(next.length, 4);
  await skipAll(orgId);
});
