import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openPostgres } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { newId } from '../../src/ids.ts';
import { emitEvent } from '../../src/webhooks/outbox/outbox.ts';
import { testDeps } from '../helpers/deps.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { insertSubscription } from '../helpers/webhooks.ts';
import {
  type Behaviour,
  type FaultReceiver,
  type PgServer,
  type ServiceNode,
  startFaultReceiver,
  startNode,
  startPostgres,
  stopNode,
  tally,
  waitFor,
} from './cluster.ts';

/**
 * Receivers that misbehave, next to a healthy one, all served by ONE worker process (64 slots):
 * each bad reply is classified as docs/webhooks.md "Replying" says, and the healthy subscription
 * keeps a fair share of the worker's throughput meanwhile (src/webhooks/delivery/slot-pump.ts).
 */
let pg: PgServer;
let db: Db;
let deps: Deps;
let dir: string;
let node: ServiceNode | undefined;
const receivers: FaultReceiver[] = [];

before(async () => {
  pg = await startPostgres();
  dir = await mkdtemp(join(tmpdir(), 'callcap-faults-'));
  node = await startNode(['worker'], { DATABASE_URL: pg.url }); // migrates
  db = await openPostgres(pg.url, { max: 4 });
  deps = testDeps(db, dir);
});

after(async () => {
  for (const r of receivers) await r.close();
  await stopNode(node);
  await db?.close();
  await pg?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const BURST = 200;
const BAD: Behaviour[] = ['hang', 'slow', 'huge', 'reset', 'redirect', 'broken-chunked'];

/** `n` events in one transaction (one commit, so the worker, not the emitter, sets the pace). */
async function burst(orgId: string, n: number): Promise<{ ids: string[]; committedAt: number }> {
  const ids: string[] = [];
  await db.transaction(async (tx) => {
    for (let i = 0; i < n; i++) {
      const callId = newId();
      const { eventId } = await emitEvent(tx, {
        organizationId: orgId,
        environment: 'live',
        eventType: 'call.completed',
        resourceId: callId,
        callId,
        factKey: callId,
        data: { call_id: callId, note: 'fairness burst', n: i },
        createdAt: new Date(),
      });
      ids.push(eventId);
    }
  });
  return { ids, committedAt: Date.now() };
}

/** Deliveries/s the receiver saw for `ids`: from the burst's commit to the last arrival. */
async function rateOf(rx: FaultReceiver, ids: string[], committedAt: number): Promise<number> {
  const from = rx.arrivals.length;
  await waitFor('the burst at the receiver', () => ids.every((id) => rx.seen.has(id)), 120_000, 20);
  const last = Math.max(...rx.arrivals.slice(from));
  return ids.length / ((last - committedAt) / 1000);
}

interface FirstAttempt {
  response_status: number | null;
  error_class: string | null;
  response_snippet: string | null;
  duration_ms: number;
}

async function firstAttempts(subscriptionId: string): Promise<FirstAttempt[]> {
  const r = await db.query<FirstAttempt>(
    `SELECT a.response_status, a.error_class, a.response_snippet, a.duration_ms
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.subscription_id = $1 AND a.attempt_number = 1`,
    [subscriptionId],
  );
  return r.rows;
}

/**
 * Emitted / delivered / duplicated / lost of one subscription, from its delivery rows (a bad
 * receiver's deliveries are rightly not delivered yet: retries are minutes away) and its receiver's
 * count of requests per event. Lost = an event without a delivery that is delivered or still owed
 * (pending: scheduled for a retry, or held while the subscription is paused).
 */
async function tallyRows(label: string, subscriptionId: string, ids: string[], rx: FaultReceiver) {
  const r = await db.query<{ status: string; held: boolean; attempts: number; n: string }>(
    `SELECT status, held, attempts, count(*) AS n FROM webhook_deliveries
      WHERE subscription_id = $1 AND event_id = ANY ($2::uuid[]) GROUP BY 1, 2, 3`,
    [subscriptionId, ids],
  );
  let delivered = 0;
  let retrying = 0;
  let held = 0;
  for (const row of r.rows) {
    const n = Number(row.n);
    if (row.status === 'delivered') delivered += n;
    else if (row.status === 'pending' && row.attempts > 0) retrying += n;
    else if (row.status === 'pending') held += n;
  }
  let duplicated = 0;
  for (const id of ids) duplicated += Math.max(0, (rx.seen.get(id) ?? 0) - 1);
  const lost = ids.length - delivered - retrying - held;
  console.log(
    `[faults] receiver ${label}: events emitted ${ids.length}, delivered ${delivered}, duplicated ${duplicated}, lost ${lost}` +
      ` (failed and scheduled for a retry ${retrying}, not yet attempted ${held})`,
  );
  return { delivered, retrying, held, duplicated, lost };
}

test('misbehaving receivers: each classified per the spec, and the healthy subscription keeps its share of one worker', {
  timeout: 400_000,
}, async () => {
  const { orgId } = await insertOrg(db);
  const healthy = await startFaultReceiver('ok');
  receivers.push(healthy);
  const healthySub = await insertSubscription(deps, { orgId, url: healthy.url, at: new Date() });

  // 1. The healthy subscription alone: the baseline. A first small burst warms the worker (JIT,
  //    pool, keep-alive sockets) and teaches it that this receiver is fast.
  const warm = await burst(orgId, 50);
  await rateOf(healthy, warm.ids, warm.committedAt);
  const alone = await burst(orgId, BURST);
  const baseline = await rateOf(healthy, alone.ids, alone.committedAt);

  // 2. The same burst with every bad receiver subscribed as well.
  const bad = new Map<Behaviour, { rx: FaultReceiver; subscriptionId: string }>();
  for (const b of BAD) {
    const rx = await startFaultReceiver(b, { slowMs: 2_000 });
    receivers.push(rx);
    const { subscriptionId } = await insertSubscription(deps, { orgId, url: rx.url, at: new Date() });
    bad.set(b, { rx, subscriptionId });
  }
  const mixed = await burst(orgId, BURST);
  const shared = await rateOf(healthy, mixed.ids, mixed.committedAt);
  const ratio = shared / baseline;
  const until = new Date(Math.max(...healthy.arrivals.slice(-BURST)));
  const attempts = await db.query<{ subscription_id: string; n: string }>(
    `SELECT d.subscription_id, count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.organization_id = $1 AND a.started_at >= $2 AND a.started_at <= $3 GROUP BY 1`,
    [orgId, new Date(mixed.committedAt), until],
  );
  const perSub = new Map(attempts.rows.map((r) => [r.subscription_id, Number(r.n)]));
  const total = [...perSub.values()].reduce((a, b) => a + b, 0);
  const healthyShare = (perSub.get(healthySub.subscriptionId) ?? 0) / total;
  console.log(
    `[faults] fairness: attempts started while the healthy burst was delivered: ${total}; ` +
      [
        ['healthy', healthySub.subscriptionId] as const,
        ...BAD.map((b) => [b, bad.get(b)!.subscriptionId] as const),
      ]
        .map(([label, id]) => `${label} ${perSub.get(id) ?? 0}`)
        .join(', ') +
      ` — healthy ${(healthyShare * 100).toFixed(0)} % of the worker's attempts`,
  );
  // Fair share: 7 subscriptions take turns in round-robin, so the healthy one is owed at least a
  // seventh of the attempts the worker starts meanwhile (the hanging and slow ones are capped and
  // use less than their turn). Its rate next to its rate alone is printed, not asserted: the four
  // others that answer at once cost the machine more per attempt than the healthy one (a 10 MB
  // reply streamed and cut, a failure's own durable transaction), so the worker as a whole does
  // fewer attempts per second — measured 6–18 % of the healthy rate alone on this 2-core machine,
  // with the healthy subscription at 32–39 % of the attempts. Before fairness by allowance
  // (docs/decisions.md) the same case gave 2–3 %: the healthy rows waited behind the failing ones'
  // in the claims. Without any fairness the 64 slots fill with 10 s hanging requests within seconds.
  const owed = 1 / 7;
  console.log(
    `[faults] fairness: healthy subscription alone ${baseline.toFixed(0)} deliveries/s; with 6 bad receivers on the same burst ${shared.toFixed(0)} deliveries/s = ${(ratio * 100).toFixed(0)} %; its share of the attempts ${(healthyShare * 100).toFixed(0)} % (owed at least ${(owed * 100).toFixed(0)} %)`,
  );
  assert.ok(
    healthyShare >= owed,
    `healthy share of attempts ${(healthyShare * 100).toFixed(1)} % < ${(owed * 100).toFixed(1)} %`,
  );

  // 3. Classification of each bad kind's first attempt (hang: after the 10 s time-out). The hanging
  //    and slow customers' backlogs would take minutes at their caps: they are paused now, so that
  //    what is not yet sent waits (held) and the case ends in bounded time.
  const sub = (b: Behaviour) => bad.get(b)!.subscriptionId;
  const progress = setInterval(async () => {
    const counts = await Promise.all(BAD.map(async (b) => `${b} ${(await firstAttempts(sub(b))).length}`));
    console.log(`[faults] receivers: first attempts so far: ${counts.join(', ')}`);
  }, 10_000);
  after(() => clearInterval(progress));
  await db.query(`UPDATE webhook_subscriptions SET state = 'paused' WHERE id = ANY ($1::uuid[])`, [
    [sub('hang'), sub('slow')],
  ]);
  // reset and redirect fail at once: after 50 failures in a row their subscriptions pause
  // (docs/webhooks.md "Pauses"), and the rest of their burst waits, held.
  const pausedFor = async (b: Behaviour) =>
    (
      await db.query<{ state: string; paused_reason: string | null }>(
        'SELECT state, paused_reason FROM webhook_subscriptions WHERE id = $1',
        [sub(b)],
      )
    ).rows[0];
  await waitFor(
    'first attempts: every delivery of huge and broken-chunked, reset and redirect paused, one of the others',
    async () => {
      for (const b of ['huge', 'broken-chunked'] as const)
        if ((await firstAttempts(sub(b))).length < BURST) return false;
      for (const b of ['reset', 'redirect'] as const)
        if ((await pausedFor(b))?.state !== 'paused') return false;
      for (const b of ['hang', 'slow'] as const) if ((await firstAttempts(sub(b))).length === 0) return false;
      return true;
    },
    150_000,
    250,
  );
  await waitFor(
    'no request in flight',
    async () =>
      Number(
        (
          await db.query<{ n: string }>(
            `SELECT count(*) AS n FROM webhook_deliveries
              WHERE organization_id = $1 AND status = 'pending' AND lease_owner IS NOT NULL`,
            [orgId],
          )
        ).rows[0]?.n,
      ) === 0,
    60_000,
    250,
  );

  console.log('[faults] receivers: first attempts recorded, nothing in flight');
  const hang = await firstAttempts(sub('hang'));
  assert.ok(hang.length > 0);
  for (const a of hang) {
    assert.equal(a.error_class, 'timeout');
    assert.equal(a.response_status, null);
    assert.ok(a.duration_ms >= 9_900 && a.duration_ms < 12_000, `hang took ${a.duration_ms} ms`);
  }
  for (const b of ['reset', 'redirect'] as const)
    assert.equal((await pausedFor(b))?.paused_reason, 'transient_failures', b);
  const reset = await firstAttempts(sub('reset'));
  assert.ok(reset.length >= 50, `${reset.length} reset attempts`);
  for (const a of reset) {
    assert.equal(a.error_class, 'connection');
    assert.equal(a.response_status, null);
  }
  // 302 recorded as the reply: had it been followed, the target (port 9, nothing listens) would
  // have made it a connection error.
  const redirect = await firstAttempts(sub('redirect'));
  assert.ok(redirect.length >= 50, `${redirect.length} redirect attempts`);
  for (const a of redirect) {
    assert.equal(a.response_status, 302);
    assert.equal(a.error_class, null);
  }
  const huge = await firstAttempts(sub('huge'));
  assert.equal(huge.length, BURST);
  for (const a of huge) {
    assert.equal(a.response_status, 200);
    assert.equal(a.response_snippet, 'x'.repeat(1024), 'the first 1 KiB kept, the rest cut');
  }
  const broken = await firstAttempts(sub('broken-chunked'));
  assert.equal(broken.length, BURST);
  for (const a of broken) {
    assert.equal(a.response_status, 200, 'the status line said 200');
    // Node's parser may reject the chunk before handing over its bytes: the body is cut there.
    assert.ok(['', 'hello'].includes(a.response_snippet ?? ''), `snippet ${a.response_snippet}`);
  }
  const slow = await firstAttempts(sub('slow'));
  assert.ok(slow.length > 0);
  for (const a of slow) assert.equal(a.response_status, 200);

  // The transient failures wait for their retry 2 min after the attempt (counted from its end).
  const retries = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
      WHERE d.subscription_id = ANY ($1::uuid[]) AND d.status = 'pending' AND d.attempts = 1
        AND d.next_attempt_at >= a.started_at + interval '2 minutes'
        AND d.next_attempt_at <= a.started_at + a.duration_ms * interval '1 millisecond' + interval '2 minutes 2 seconds'`,
    [[sub('reset'), sub('redirect'), sub('hang')]],
  );
  assert.equal(Number(retries.rows[0]?.n), reset.length + redirect.length + hang.length);

  // 4. Emitted / delivered / duplicated / lost, per case.
  const t = tally('receivers: healthy (both bursts)', [...alone.ids, ...mixed.ids], [healthy]);
  assert.equal(t.lost, 0);
  assert.equal(t.duplicated, 0);
  const h = await tallyRows('healthy', healthySub.subscriptionId, mixed.ids, healthy);
  assert.equal(h.delivered, BURST);
  const expectDelivered: Record<Behaviour, boolean> = {
    ok: true,
    hang: false,
    slow: true,
    huge: true,
    reset: false,
    redirect: false,
    'broken-chunked': true,
  };
  for (const b of BAD) {
    const { rx, subscriptionId } = bad.get(b)!;
    const c = await tallyRows(b, subscriptionId, mixed.ids, rx);
    assert.equal(c.lost, 0, b);
    assert.equal(c.duplicated, 0, b);
    if (expectDelivered[b]) assert.equal(c.retrying, 0, `${b}: a 2xx, nothing to retry`);
    else assert.equal(c.delivered, 0, `${b}: nothing acknowledged`);
    // hang and slow: partly sent, the rest held by the pause; reset and redirect: paused after 50.
    if (b === 'huge' || b === 'broken-chunked') assert.equal(c.delivered, BURST, b);
  }
});
