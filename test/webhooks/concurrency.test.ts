import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openPostgres } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/types.ts';
import { claimDeliveries } from '../../src/webhooks/delivery/sql/claim-deliveries.ts';
import { completeDeliveries } from '../../src/webhooks/delivery/sql/complete-delivery.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  attemptsOf,
  createEnv,
  deliveryFor,
  type Env,
  emit,
  insertSubscription,
  worker,
} from '../helpers/webhooks.ts';

let env: Env;
let rx: Receiver;
before(async () => {
  env = await createEnv();
  // Answers after 0–3 ms so that attempts of different workers interleave.
  rx = await startReceiver((_q, res) => setTimeout(() => res.end('ok'), Math.floor(Math.random() * 4)));
});
after(async () => {
  await rx?.close();
  await env?.close();
});

test('four workers with their own connections deliver a burst of 500 deliveries, each attempted exactly once', {
  skip:
    engine === 'postgres'
      ? false
      : 'needs PostgreSQL (set TEST_DATABASE_URL): SKIP LOCKED across connections',
}, async (t) => {
  const { rows } = await env.db.query<{ db: string }>('SELECT current_database() AS db');
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${rows[0].db}`;
  const pools: Db[] = [];
  const workers: ReturnType<typeof worker>[] = [];
  t.after(async () => {
    for (const w of workers) await w.stop();
    for (const p of pools) await p.close();
  });
  for (let i = 0; i < 4; i++) pools.push(await openPostgres(url.toString(), { max: 4 }));
  for (const [i, db] of pools.entries())
    workers.push(worker({ ...env.deps, db }, { concurrency: 16, workerId: `w${i}`, pollIntervalMs: 50 }));
  for (const w of workers) await w.start();

  const { orgId } = await insertOrg(env.db);
  for (let i = 0; i < 10; i++) await insertSubscription(env.deps, { orgId, url: rx.url });
  rx.requests.length = 0;
  const emits: Promise<string>[] = [];
  for (let i = 0; i < 50; i++) emits.push(emit(env.deps, { orgId }));
  await Promise.all(emits);

  const delivered = async () => {
    const r = await env.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE organization_id = $1 AND status = 'delivered'`,
      [orgId],
    );
    return r.rows[0].n === 500;
  };
  await waitFor(delivered, '500 deliveries delivered', 110_000);
  // Stopped here (and not only after the test) so that every attempt is written before counting.
  for (const w of workers.splice(0)) await w.stop();
  for (const p of pools.splice(0)) await p.close();

  const perDelivery = await env.db.query<{ attempts: number; rows: number; owners: number }>(
    `SELECT d.attempts, count(a.id)::int AS rows
         FROM webhook_deliveries d LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
        WHERE d.organization_id = $1 GROUP BY d.id, d.attempts`,
    [orgId],
  );
  assert.equal(perDelivery.rows.length, 500);
  assert.ok(
    perDelivery.rows.every((r) => r.attempts === 1 && r.rows === 1),
    'one attempt per delivery',
  );
  assert.equal(rx.requests.length, 500, 'the receiver saw each delivery once');
  const keys = new Set(rx.requests.map((r) => `${r.headers['service-event-id']}`));
  assert.equal(keys.size, 50);
});

test(`on ${engine}, a worker that claimed and died leaves its deliveries to another worker once the lease expires`, async (t) => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const eventId = await emit(env.deps, { orgId });
  const now = env.clock.now();
  // The dead worker: claims with a 60 s lease, then never completes.
  const claimed = await claimDeliveries(env.db, {
    now,
    limit: 10,
    owner: 'dead-worker',
    leaseUntil: new Date(now.getTime() + 60_000),
  });
  assert.equal(claimed.length, 1);
  assert.equal((await deliveryFor(env.db, sub.subscriptionId, eventId)).lease_owner, 'dead-worker');

  const survivor = worker(env.deps, { workerId: 'survivor' });
  t.after(() => survivor.stop());
  assert.equal(await survivor.runOnce(), 0, 'a live lease is respected');
  env.clock.advance(59_999);
  assert.equal(await survivor.runOnce(), 0);
  env.clock.advance(1);
  rx.requests.length = 0;
  assert.equal(await survivor.runOnce(), 1, 'claimed again when the lease expires');
  const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.status, 'delivered');
  assert.equal(d.attempts, 1);
  assert.equal(rx.requests.length, 1);

  // The dead worker coming back late cannot overwrite the outcome: its lease is gone.
  const late = await completeDeliveries(env.db, {
    owner: 'dead-worker',
    now: env.clock.now(),
    items: [
      {
        deliveryId: d.id,
        subscriptionId: sub.subscriptionId,
        organizationId: orgId,
        attemptNumber: 1,
        startedAt: now,
        durationMs: 5,
        status: 200,
        snippet: '',
        secretId: sub.secretId,
        signatureTimestamp: Math.floor(now.getTime() / 1000),
        reachCallId: null,
      },
    ],
  });
  assert.equal(late, 0);
  assert.equal((await attemptsOf(env.db, d.id)).length, 2, 'its attempt is still logged');
});

test('two claims at the same moment never return the same delivery', async () => {
  const { orgId } = await insertOrg(env.db);
  await insertSubscription(env.deps, { orgId, url: rx.url });
  for (let i = 0; i < 20; i++) await emit(env.deps, { orgId });
  const now = env.clock.now();
  const lease = { now, leaseUntil: new Date(now.getTime() + 60_000) };
  const [a, b] = await Promise.all([
    claimDeliveries(env.db, { ...lease, limit: 15, owner: 'a' }),
    claimDeliveries(env.db, { ...lease, limit: 15, owner: 'b' }),
  ]);
  const ids = [...a, ...b].map((r) => r.id);
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(ids.length >= 20);
  await env.db.query(
    `UPDATE webhook_deliveries SET status = 'skipped', reason = 'test' WHERE organization_id = $1`,
    [orgId],
  );
});
