/**
 * Webhook delivery benchmark (npm run bench:webhooks). On PostgreSQL, in fresh databases
 * cc_bench_webhooks (1,000,000 waiting) and cc_bench_webhooks_1k (1,000 waiting), with a receiver
 * process on loopback answering 200, in one run:
 *
 * 1. idle latency: one event at a time, each delivered before the next is emitted; latency from the
 *    start of the emitting transaction to the receiver's arrival time (p50/p99);
 * 2. rounds of: the ceiling — signed POSTs of a stored-size body with the same client, headers and
 *    concurrency as the worker and no database at all; a burst of events fanned out to N
 *    subscriptions, delivered by one worker process, with 1,000 deliveries waiting; the same burst
 *    with 1,000,000 waiting; the first burst again, delivered by two worker processes
 *    (bench/webhook-worker.ts) sharing the queue. Rounds interleave so that drifting load on a shared machine hits every
 *    figure alike; medians are reported.
 *
 * "Waiting" is what really piles up in production: 90 % are deliveries of paused subscriptions
 * (held until re-verification — the backlog that grows without bound while a customer's endpoint is
 * down) and 10 % are retries scheduled for later. Neither is due, so a good claim must not touch
 * them. They are seeded with INSERT … SELECT generate_series, through the same triggers as real rows.
 *
 * BENCH_DATABASE_URL   server (default postgres://postgres@127.0.0.1:5432/test)
 * BENCH_SUBSCRIPTIONS  subscriptions receiving the burst (default 10)
 * BENCH_EVENTS         events in a burst (default 2000, i.e. 20,000 deliveries)
 * BENCH_CONCURRENCY    in-flight requests (default the worker's, 64)
 * BENCH_ROUNDS         interleaved rounds (ceiling, 1,000-waiting burst, 1,000,000-waiting burst);
 *                      medians are reported (default 5)
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { builtInCaptureProviders } from '../src/capture/jobs/providers.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import type { Db } from '../src/db/types.ts';
import type { Deps } from '../src/deps.ts';
import { newId } from '../src/ids.ts';
import { deriveKeys } from '../src/keys.ts';
import { createLogger } from '../src/log.ts';
import { fileBlobStore } from '../src/recordings/store.ts';
import { createWebhookClient } from '../src/webhooks/delivery/http-client.ts';
import { encryptSecret } from '../src/webhooks/delivery/secret-box.ts';
import { deliveryHeaders } from '../src/webhooks/delivery/signing.ts';
import { createDeliveryWorker, DEFAULT_CONCURRENCY } from '../src/webhooks/delivery/worker.ts';
import { emitEvent } from '../src/webhooks/outbox/outbox.ts';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DB_NAME = 'cc_bench_webhooks';
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 10);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? DEFAULT_CONCURRENCY);
const LATENCY_EVENTS = 300;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CEILING_POSTS = 20_000;
const log = (s: string) => process.stdout.write(`${s}\n`);
const now = () => performance.timeOrigin + performance.now();

async function freshDatabase(name: string): Promise<Db> {
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(SERVER);
  u.pathname = `/${name}`;
  const db = await openPostgres(u.toString(), { max: 20 });
  await migrate(db);
  return db;
}

async function startReceiver(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(join(import.meta.dirname, 'webhook-receiver.ts'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
  });
  return { child, url: `http://127.0.0.1:${port}/hooks` };
}

/**
 * CPU time (µs) of this process, the receiver, and the PostgreSQL backends serving `dbName`, from
 * /proc (Linux; zeros elsewhere). Unlike wall-clock rates, CPU per delivery does not move when
 * other work shares the machine, so it is reported beside them.
 */
function cpuNow(
  receiverPid: number,
  dbName: string | null,
): { self: number; receiver: number; postgres: number } {
  const ticks = (pid: string | number) => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(f[11]) + Number(f[12])) * 10_000; // USER_HZ = 100
    } catch {
      return 0;
    }
  };
  let postgres = 0;
  if (dbName) {
    const title = new RegExp(`\\s${dbName}\\s`);
    for (const pid of readdirSafe('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (title.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')))
          postgres += ticks(pid);
      } catch {}
    }
  }
  const u = process.cpuUsage();
  return { self: u.user + u.system, receiver: ticks(receiverPid), postgres };
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

type Cpu = ReturnType<typeof cpuNow>;
const perItem = (a: Cpu, b: Cpu, n: number): Cpu => ({
  self: (b.self - a.self) / n,
  receiver: (b.receiver - a.receiver) / n,
  postgres: (b.postgres - a.postgres) / n,
});

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** A call.completed-sized body (~1.5 KB), serialised like the product's events. */
function sampleData(i: number): Record<string, unknown> {
  return {
    call_id: newId(),
    direction: 'inbound',
    caller_phone: '+14155552671',
    customer_phone_e164: '+14155552671',
    duration: 93 + (i % 50),
    recording_url: `https://calls.example.test/calls/${newId()}/recording.mp3?token=${randomBytes(32).toString('base64url')}&exp=1790000000`,
    transcript_processed: {
      caller_name: 'Jane Example',
      summary:
        'Jane asked for a quote to replace a leaking kitchen tap and would like a visit next week. '.repeat(
          3,
        ),
      service_needed: 'Tap replacement',
      lead_score: 8,
    },
    transcript_original:
      'Agent: Thanks for calling, how can I help? Caller: my kitchen tap is leaking. '.repeat(6),
  };
}

async function emitBurst(deps: Deps, orgId: string, count: number): Promise<void> {
  for (let done = 0; done < count; done += 100) {
    await deps.db.transaction(async (tx) => {
      for (let i = done; i < Math.min(count, done + 100); i++) {
        const callId = newId();
        await emitEvent(tx, {
          organizationId: orgId,
          environment: 'live',
          eventType: 'call.completed',
          resourceId: callId,
          callId,
          factKey: callId,
          data: sampleData(i),
          createdAt: deps.clock.now(),
        });
      }
    });
  }
}

/** Whether a delivery to the burst's subscriptions is still pending (index probes, stops at the first). */
async function anyPending(db: Db, orgId: string): Promise<boolean> {
  const r = await db.query(
    `SELECT 1 FROM webhook_deliveries
      WHERE subscription_id = ANY (SELECT id FROM webhook_subscriptions WHERE organization_id = $1)
        AND status = 'pending' LIMIT 1`,
    [orgId],
  );
  return r.rowCount > 0;
}

async function pendingCount(db: Db, orgId: string): Promise<number> {
  const r = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE organization_id = $1 AND status = 'pending' AND NOT held
        AND next_attempt_at <= now() + interval '1 hour'`,
    [orgId],
  );
  return r.rows[0].n;
}

/** Seeds `total` waiting deliveries: 90 % of paused subscriptions, 10 % retries due tomorrow. */
async function seedWaiting(db: Db, orgId: string, total: number): Promise<void> {
  const t = now();
  const events = Math.max(1, Math.ceil(total / 10));
  const body = JSON.stringify({
    api_version: '2026-06-15',
    event_type: 'call.completed',
    data: sampleData(0),
  });
  await db.query(
    `INSERT INTO events (id, organization_id, event_type, resource_id, call_id, body, created_at)
     SELECT gen_random_uuid(), $1, 'call.completed', gen_random_uuid(), NULL, $2, now() - interval '1 day'
       FROM generate_series(1, $3)`,
    [orgId, body, events],
  );
  const subs: { id: string; state: string }[] = [];
  for (let i = 0; i < 10; i++) {
    const id = newId();
    const state = i < 9 ? 'paused' : 'active';
    await db.query(
      `INSERT INTO webhook_subscriptions (id, organization_id, url, state, last_verified_at, created_at, updated_at)
       VALUES ($1, $2, 'https://down.example.com/hooks', $3, now(), now(), now())`,
      [id, orgId, state],
    );
    subs.push({ id, state });
  }
  for (const s of subs) {
    await db.query(
      `INSERT INTO webhook_deliveries (id, organization_id, subscription_id, event_id, event_type, status,
         attempts, next_attempt_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2, e.id, 'call.completed', 'pending', $3::int,
              CASE WHEN $3::int = 0 THEN now() - interval '1 hour' ELSE now() + interval '1 day' END, now(), now()
         FROM (SELECT id FROM events WHERE organization_id = $1 AND call_id IS NULL LIMIT $4) e`,
      [orgId, s.id, s.state === 'paused' ? 0 : 2, Math.ceil(total / 10)],
    );
  }
  // Settle what the seed left behind (statistics, dirty pages), so the burst measures steady state.
  await db.exec('VACUUM ANALYZE');
  await db.exec('CHECKPOINT');
  log(`  seeded ${total.toLocaleString('en')} waiting deliveries in ${((now() - t) / 1000).toFixed(1)} s`);
}

interface Rate {
  rate: number;
  cpu: Cpu;
}

async function measureThroughput(
  deps: Deps,
  orgId: string,
  label: string,
  receiverPid: number,
  events = EVENTS,
): Promise<Rate> {
  await emitBurst(deps, orgId, events);
  // Autovacuum's job after a burst arrives (off on the benchmark server), done explicitly so that
  // both cases start from the same state: fresh statistics and no dead rows from the last burst.
  await deps.db.exec('VACUUM (ANALYZE) webhook_deliveries, webhook_attempts, webhook_call_reach, events');
  const expected = await pendingCount(deps.db, orgId);
  const worker = createDeliveryWorker(deps, { concurrency: CONCURRENCY });
  const dbName = (await deps.db.query<{ db: string }>('SELECT current_database() AS db')).rows[0].db;
  const c0 = cpuNow(receiverPid, dbName);
  const t = now();
  await worker.start();
  while (await anyPending(deps.db, orgId)) await new Promise((r) => setTimeout(r, 20));
  const seconds = (now() - t) / 1000;
  const cpu = perItem(c0, cpuNow(receiverPid, dbName), expected);
  await worker.stop();
  const rate = expected / seconds;
  log(
    `  ${label}: ${expected.toLocaleString('en')} deliveries in ${seconds.toFixed(2)} s = ${Math.round(rate)} deliveries/s` +
      ` (CPU µs per delivery: worker ${cpu.self.toFixed(0)}, receiver ${cpu.receiver.toFixed(0)}, PostgreSQL ${cpu.postgres.toFixed(0)})`,
  );
  return { rate, cpu };
}

/** CPU time (µs) of one process, from /proc (0 elsewhere). */
function procCpu(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000; // USER_HZ = 100
  } catch {
    return 0;
  }
}

interface WorkerProcess {
  child: ChildProcess;
  /** resolves with the next message matching `test` */
  next(test: (m: unknown) => boolean): Promise<unknown>;
}

/** `n` delivery workers in processes of their own, on `dbUrl`, ready but not started. */
async function startWorkerProcesses(
  n: number,
  dbUrl: string,
  masterKeyHex: string,
): Promise<WorkerProcess[]> {
  const out: WorkerProcess[] = [];
  for (let i = 0; i < n; i++) {
    const child = fork(
      join(import.meta.dirname, 'webhook-worker.ts'),
      [JSON.stringify({ url: dbUrl, masterKeyHex, concurrency: CONCURRENCY })],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    const next = (test: (m: unknown) => boolean) =>
      new Promise<unknown>((resolve) => {
        const on = (m: unknown) => {
          if (!test(m)) return;
          child.off('message', on);
          resolve(m);
        };
        child.on('message', on);
      });
    const ready = next((m) => m === 'ready');
    await ready;
    out.push({ child, next });
  }
  return out;
}

/** The burst delivered by worker processes (bench/webhook-worker.ts) instead of this process. */
async function measureProcesses(
  deps: Deps,
  orgId: string,
  label: string,
  receiverPid: number,
  workers: WorkerProcess[],
): Promise<Rate> {
  await emitBurst(deps, orgId, EVENTS);
  await deps.db.exec('VACUUM (ANALYZE) webhook_deliveries, webhook_attempts, webhook_call_reach, events');
  const expected = await pendingCount(deps.db, orgId);
  const dbName = (await deps.db.query<{ db: string }>('SELECT current_database() AS db')).rows[0].db;
  const workerCpu = () => workers.reduce((sum, w) => sum + procCpu(w.child.pid!), 0);
  const c0 = cpuNow(receiverPid, dbName);
  const w0 = workerCpu();
  const t = now();
  for (const w of workers) w.child.send('start');
  while (await anyPending(deps.db, orgId)) await new Promise((r) => setTimeout(r, 20));
  const seconds = (now() - t) / 1000;
  const c1 = cpuNow(receiverPid, dbName);
  const cpu = perItem(c0, c1, expected);
  cpu.self = (workerCpu() - w0) / expected;
  await Promise.all(
    workers.map((w) => {
      const stopped = w.next((m) => typeof m === 'object' && m !== null && 'stopped' in m);
      w.child.send('stop');
      return stopped;
    }),
  );
  const rate = expected / seconds;
  log(
    `  ${label}: ${expected.toLocaleString('en')} deliveries in ${seconds.toFixed(2)} s = ${Math.round(rate)} deliveries/s` +
      ` (CPU µs per delivery: workers ${cpu.self.toFixed(0)}, receiver ${cpu.receiver.toFixed(0)}, PostgreSQL ${cpu.postgres.toFixed(0)})`,
  );
  return { rate, cpu };
}

interface Setup {
  deps: Deps;
  orgId: string;
  subIds: string[];
}

/** A database with the receiving organization and its subscriptions (one shared signing secret). */
async function setup(name: string, receiverUrl: string, secret: string, keys: Deps['keys']): Promise<Setup> {
  const db = await freshDatabase(name);
  const deps: Deps = {
    db,
    clock: systemClock,
    config: loadConfig({
      DATA_DIR: await mkdtemp(join(tmpdir(), 'cc-bench-')),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      LOG_LEVEL: 'silent',
    }),
    keys,
    store: fileBlobStore(join(tmpdir(), 'cc-bench-recordings')),
    log: createLogger('silent'),
    adminToken: 'bench-admin-token-0123456789',
    capture: builtInCaptureProviders(),
  };
  const orgId = newId();
  await db.query(`INSERT INTO organizations (id, name, created_at) VALUES ($1, 'Bench', now())`, [orgId]);
  const subIds: string[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const id = newId();
    subIds.push(id);
    await db.query(
      `INSERT INTO webhook_subscriptions (id, organization_id, url, state, last_verified_at, created_at, updated_at)
       VALUES ($1, $2, $3, 'active', now(), now(), now())`,
      [id, orgId, receiverUrl],
    );
    await db.query(
      `INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at, activated_at)
       VALUES ($1, $2, $3, $4, 'active', 'initial', now(), now())`,
      [newId(), id, orgId, encryptSecret(keys.secretEncryptionKey, secret)],
    );
  }
  const backlogOrg = newId();
  await db.query(`INSERT INTO organizations (id, name, created_at) VALUES ($1, 'Backlog', now())`, [
    backlogOrg,
  ]);
  return { deps, orgId, subIds };
}

/** Signed POSTs with the worker's client, headers and concurrency, and no database. */
async function ceilingRun(receiverUrl: string, receiverPid: number, secret: string): Promise<Rate> {
  const body = JSON.stringify({
    api_version: '2026-06-15',
    event_id: newId(),
    event_type: 'call.completed',
    data: sampleData(1),
  });
  const client = createWebhookClient({ allowPrivateTargets: true });
  let sent = 0;
  const c0 = cpuNow(receiverPid, null);
  const t0 = now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < CEILING_POSTS) {
        sent++;
        const headers = deliveryHeaders({
          secret,
          body,
          timestampSeconds: Math.floor(Date.now() / 1000),
          eventId: newId(),
          eventType: 'call.completed',
          environment: 'live',
        });
        const r = await client.post(receiverUrl, body, headers);
        if (r.kind !== 'response' || r.status !== 200)
          throw new Error(`ceiling post failed: ${JSON.stringify(r)}`);
      }
    }),
  );
  const rate = CEILING_POSTS / ((now() - t0) / 1000);
  const cpu = perItem(c0, cpuNow(receiverPid, null), CEILING_POSTS);
  await client.close();
  log(
    `  ceiling (signed POSTs, no database): ${Math.round(rate)} requests/s` +
      ` (CPU µs per request: client ${cpu.self.toFixed(0)}, receiver ${cpu.receiver.toFixed(0)})`,
  );
  return { rate, cpu };
}

async function idleLatency(s: Setup, receiver: ChildProcess): Promise<{ p50: number; p99: number }> {
  const { deps, orgId, subIds } = s;
  // One subscription receives; the others are paused meanwhile (their deliveries are held).
  await deps.db.query(`UPDATE webhook_subscriptions SET state = 'paused' WHERE id = ANY ($1::uuid[])`, [
    subIds.slice(1),
  ]);
  const arrivals = new Map<string, number>();
  const onMessage = (m: { id?: string; at?: number }) => {
    if (m.id && m.at) arrivals.set(m.id, m.at);
  };
  receiver.on('message', onMessage);
  receiver.send('report-on');
  const worker = createDeliveryWorker(deps, { concurrency: CONCURRENCY });
  await worker.start();
  const latencies: number[] = [];
  const afterCommit: number[] = [];
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const started = now();
    const callId = newId();
    const { eventId } = await deps.db.transaction((tx) =>
      emitEvent(tx, {
        organizationId: orgId,
        environment: 'live',
        eventType: 'call.completed',
        resourceId: callId,
        callId,
        factKey: callId,
        data: sampleData(i),
        createdAt: new Date(),
      }),
    );
    const committed = now();
    while (!arrivals.has(eventId)) await new Promise((r) => setTimeout(r, 1));
    latencies.push(arrivals.get(eventId)! - started);
    afterCommit.push(arrivals.get(eventId)! - committed);
    await new Promise((r) => setTimeout(r, 5));
  }
  await worker.stop();
  receiver.send('report-off');
  receiver.off('message', onMessage);
  latencies.sort((a, b) => a - b);
  afterCommit.sort((a, b) => a - b);
  const p50 = pct(latencies, 50);
  const p99 = pct(latencies, 99);
  log(
    `idle latency (emit → receiver), ${LATENCY_EVENTS} events: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
  );
  log(
    `  of which after the emitting commit: p50 ${pct(afterCommit, 50).toFixed(1)} ms, p99 ${pct(afterCommit, 99).toFixed(1)} ms`,
  );
  await deps.db.query(
    `UPDATE webhook_deliveries SET status = 'skipped', reason = 'bench' WHERE status = 'pending'`,
  );
  await deps.db.query(`UPDATE webhook_subscriptions SET state = 'active' WHERE id = ANY ($1::uuid[])`, [
    subIds,
  ]);
  return { p50, p99 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const receiver = await startReceiver();
  const master = randomBytes(32);
  const keys = deriveKeys(master);
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  log(
    `Webhook benchmark — ${new Date().toISOString()} — ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`,
  );
  log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (other work on the machine skews every figure)`,
  );
  const small = await setup(`${DB_NAME}_1k`, receiver.url, secret, keys);
  const large = await setup(DB_NAME, receiver.url, secret, keys);
  const version = (await small.deps.db.query<{ server_version: string }>('SHOW server_version')).rows[0]
    .server_version;
  log(`PostgreSQL ${version}; concurrency ${CONCURRENCY}; one worker process; receiver in its own process`);

  const { p50, p99 } = await idleLatency(small, receiver.child);

  const backlogOrg = async (s: Setup) =>
    (await s.deps.db.query<{ id: string }>(`SELECT id FROM organizations WHERE name = 'Backlog'`)).rows[0].id;
  await seedWaiting(small.deps.db, await backlogOrg(small), 1_000);
  await seedWaiting(large.deps.db, await backlogOrg(large), 1_000_000);
  // Warm-up (not compared): JIT, pool connections and keep-alive sockets, as in a running worker.
  const rpid = receiver.child.pid!;
  await measureThroughput(small.deps, small.orgId, 'warm-up (not compared)', rpid, Math.ceil(EVENTS / 4));
  await measureThroughput(large.deps, large.orgId, 'warm-up (not compared)', rpid, Math.ceil(EVENTS / 4));
  const smallUrl = new URL(SERVER);
  smallUrl.pathname = `/${DB_NAME}_1k`;
  const procs = await startWorkerProcesses(2, smallUrl.toString(), master.toString('hex'));

  // Interleaved rounds, so that drifting load on a shared machine hits every figure alike.
  const ceilings: Rate[] = [];
  const smalls: Rate[] = [];
  const larges: Rate[] = [];
  const twos: Rate[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    log(`round ${round} (load average ${loadavg()[0].toFixed(2)})`);
    ceilings.push(await ceilingRun(receiver.url, rpid, secret));
    smalls.push(await measureThroughput(small.deps, small.orgId, '1,000 waiting', rpid));
    larges.push(await measureThroughput(large.deps, large.orgId, '1,000,000 waiting', rpid));
    twos.push(
      await measureProcesses(small.deps, small.orgId, 'two worker processes, 1,000 waiting', rpid, procs),
    );
  }
  for (const p of procs) p.child.send('exit');
  const ceiling = median(ceilings.map((c) => c.rate));
  const smallRate = median(smalls.map((c) => c.rate));
  const largeRate = median(larges.map((c) => c.rate));
  // Ratios are taken within each round (measured seconds apart), then the median across rounds.
  const ofCeiling = median(smalls.map((x, i) => x.rate / ceilings[i].rate));
  const ofSmall = median(larges.map((x, i) => x.rate / smalls[i].rate));
  const twoRate = median(twos.map((c) => c.rate));
  const twoOfOne = median(twos.map((x, i) => x.rate / smalls[i].rate));
  const twoOfCeiling = median(twos.map((x, i) => x.rate / ceilings[i].rate));
  // CPU per item, median across rounds: what a delivery costs the machine, whatever else runs on it.
  const total = (c: Cpu) => c.self + c.receiver + c.postgres;
  const ceilingCpu = median(ceilings.map((c) => total(c.cpu)));
  const smallCpu = median(smalls.map((c) => total(c.cpu)));
  const part = (k: keyof Cpu) => median(smalls.map((c) => c.cpu[k])).toFixed(0);

  const ratio = (x: number) => `${Math.round(x * 100)} %`;
  const burst = (EVENTS * SUBSCRIPTIONS).toLocaleString('en');
  const rows = [
    `| measure (median of ${ROUNDS} interleaved rounds; ratios within each round) | result | target |`,
    '| --- | --- | --- |',
    `| ceiling: signed POSTs, same client, concurrency ${CONCURRENCY}, no database | ${Math.round(ceiling)} req/s | baseline |`,
    `| deliveries/s, burst of ${burst}, 1,000 waiting, one worker | ${Math.round(smallRate)} (${ratio(ofCeiling)} of ceiling; rounds ${smalls.map((x, i) => ratio(x.rate / ceilings[i].rate)).join(', ')}) | ≥ 50 % |`,
    `| deliveries/s, same burst, two worker processes | ${Math.round(twoRate)} (${ratio(twoOfOne)} of one worker, ${ratio(twoOfCeiling)} of ceiling) | |`,
    `| deliveries/s, same burst, 1,000,000 waiting | ${Math.round(largeRate)} (${ratio(ofSmall)} of the 1,000 case) | ≥ 90 % |`,
    `| idle latency, emit → receiver, p50 / p99 | ${p50.toFixed(1)} ms / ${p99.toFixed(1)} ms | p99 ≤ 15 ms |`,
  ];
  if (smallCpu > 0) {
    rows.push(
      `| CPU per signed POST (ceiling) / per delivery | ${ceilingCpu.toFixed(0)} µs / ${smallCpu.toFixed(0)} µs ` +
        `(worker ${part('self')}, receiver ${part('receiver')}, PostgreSQL ${part('postgres')}): ` +
        `CPU-bound ratio ${ratio(ceilingCpu / smallCpu)} | |`,
    );
  }
  log('');
  for (const row of rows) log(row);
  log(
    `load average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  receiver.child.kill('SIGTERM');
  await small.deps.db.close();
  await large.deps.db.close();
}

main().catch((err) => {
  process.stderr.write(
    `bench:webhooks failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
