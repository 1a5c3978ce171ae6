/**
 * The service side of `npm run bench:capture` (bench/capture.ts forks it): the public app on a real
 * socket, the operator app (inject only) and the worker role (processing jobs, webhook deliveries,
 * periodic jobs), on a fresh PostgreSQL database — and nothing else, so this process's CPU and RSS
 * are the service's. The fake Twilio, the speech-to-text server and the webhook receiver run in the
 * driver's process.
 *
 * Driven over IPC (process.send): the driver sends {cmd, …}; every command answers {reply: cmd, …}.
 *   setup     -> { port, orgId, number }          the organization and its number (no webhook subscription)
 *   subscribe                                     a webhook subscription to every event, at receiverUrl
 *   baseline  -> { seconds }                      N bare INSERTs of a call + its outbox row
 *   start                                         starts a measurement window (CPU, RSS, statements, the
 *                                                 PostgreSQL backends' CPU; with `profile`, the CPU profile;
 *                                                 with `waits`, the pg_stat_activity sampler)
 *   wait      -> Window                           once N more calls than at `start` reached `until`, the
 *                                                 window's figures
 *   close                                         stops everything and exits
 * (the protocol and the process: ./service-process.ts)
 *
 * Statement counts come from a counting wrapper around the Db this process uses (bench only: the
 * product's code is not touched); the CPU by stage from the V8 CPU profile of this process's main
 * thread during the window (node:inspector), summarised by ./cpu-profile.ts.
 */
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobClock, startWaits, type Waits } from './capture-waits.ts';
import { type CpuProfile, type ProfileSummary, summariseProfile } from './cpu-profile.ts';
import { type Command, cpuMsOf, serveCommands, serviceEnv } from './service-process.ts';

// as `callcap serve` does (src/main.ts): the service's garbage collection
(await import('../src/heap.ts')).tuneHeap();

const PG = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
process.env.TEST_DATABASE_URL = PG;

const { newId } = await import('../src/ids.ts');
const { startWorkers, workerStageHandlers } = await import('../src/worker.ts');
const { buildPublicApp } = await import('../src/http/public/app.ts');
const { buildOperatorApp } = await import('../src/http/operator/app.ts');
const { createTestDb } = await import('../test/helpers/db.ts');
const { openPostgres } = await import('../src/db/postgres.ts');
const { testDeps } = await import('../test/helpers/deps.ts');
const { admin } = await import('../test/helpers/http.ts');
const { insertSubscription } = await import('../test/helpers/webhooks.ts');

import type { Db, Queryable, QueryOptions } from '../src/db/types.ts';

/** Statements by kind, counted by a wrapper around the Db (what the SQL does, not who sent it). */
const STATEMENT_KINDS: [string, RegExp][] = [
  ['job enqueue (its NOTIFY in the statement when due)', /INSERT INTO processing_jobs[\s\S]*pg_notify/],
  ['NOTIFY processing_jobs', /pg_notify\('processing_jobs'/],
  ['NOTIFY webhook_deliveries', /pg_notify\('webhook_deliveries'/],
  ['job claim', /WITH due AS \(\s*SELECT j\.id\s+FROM processing_jobs/],
  ['job enqueue', /INSERT INTO processing_jobs/],
  ['job lock / lease / finish', /processing_jobs/],
  ['job outcome counter', /processing_job_outcomes/],
  ['event + deliveries insert', /INSERT INTO (events|webhook_deliveries)/],
  ['delivery worker', /webhook_deliveries|webhook_attempts|webhook_call_reach|webhook_subscriptions/],
  ['call row write', /^\s*UPDATE calls/],
  ['call row read / lock', /FROM calls/],
  ['other', /./],
];

interface Counts {
  transactions: number;
  statements: number;
  byKind: Record<string, number>;
}
const counts: Counts = { transactions: 0, statements: 0, byKind: {} };
/** BENCH_SQL_LOG=<file>: every statement (first 160 characters) and BEGIN appended there, to read a call's SQL. */
const SQL_LOG = process.env.BENCH_SQL_LOG;
const countStatement = (sql: string) => {
  if (SQL_LOG) appendFileSync(SQL_LOG, `${sql.replace(/\s+/g, ' ').trim().slice(0, 160)}\n`);
  counts.statements++;
  const kind = STATEMENT_KINDS.find(([, re]) => re.test(sql))![0];
  counts.byKind[kind] = (counts.byKind[kind] ?? 0) + 1;
};
/** The processing jobs' due, claimed and ended times, from their statements (./capture-waits.ts). */
const jobClock = new JobClock();
function counting(db: Db): Db {
  const wrap = (q: Queryable): Queryable => ({
    query: async <T>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      countStatement(sql);
      const r = await q.query<T>(sql, params, options);
      jobClock.seen(sql, params, options?.name, r.rows);
      return r;
    },
  });
  return {
    ...db,
    kind: db.kind,
    query: wrap(db).query,
    transaction: (fn) => {
      counts.transactions++;
      if (SQL_LOG) appendFileSync(SQL_LOG, 'BEGIN\n');
      return db.transaction((tx) => fn(wrap(tx)));
    },
    exec: (sql) => db.exec(sql),
    listen: (c, f, o) => db.listen(c, f, o),
    close: () => db.close(),
  };
}

/** CPU ms of this process's threads, by thread name (/proc/self/task/*: main, libuv workers, V8 helpers). */
function threadsCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ms = (Number(f[11]) + Number(f[12])) * 10;
        const key = tid === String(process.pid) ? 'main thread' : name;
        out.set(key, (out.get(key) ?? 0) + ms);
      } catch {
        // the thread ended
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

export interface MemoryFigures {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}
const mb = (m: NodeJS.MemoryUsage): MemoryFigures => ({
  rss: m.rss / 1048576,
  heapTotal: m.heapTotal / 1048576,
  heapUsed: m.heapUsed / 1048576,
  external: m.external / 1048576,
  arrayBuffers: m.arrayBuffers / 1048576,
});

export interface Window {
  seconds: number;
  /** this process, all threads (process.cpuUsage), ms */
  processCpuMs: number;
  /** the main thread only (process.threadCpuUsage), ms: what the profile splits */
  mainThreadCpuMs: number;
  /** the PostgreSQL backends of this database, ms */
  dbCpuMs: number;
  rssStartMb: number;
  rssPeakMb: number;
  /** process.memoryUsage() at the start and at the RSS peak (MB; sampled only in the memory scenario) */
  memStart: MemoryFigures | null;
  memAtPeak: MemoryFigures | null;
  /** the largest of each figure over the window (MB), each at its own moment */
  memMax: MemoryFigures | null;
  /** CPU ms by thread name (Linux), over the window */
  threads: Record<string, number>;
  counts: Counts;
  profile: ProfileSummary | null;
  /** the event loop, the pool, PostgreSQL's backends and the jobs' waits (./capture-waits.ts) */
  waits: Waits;
}

// A fresh migrated database (dropped on close), opened again with the product's pool
// (DATABASE_POOL_MAX, as src/server.ts opens it): the tests' helper opens 10 connections.
const created = await createTestDb();
const benchDbUrl = new URL(PG);
benchDbUrl.pathname = `/${(await created.query<{ d: string }>('SELECT current_database() AS d')).rows[0]!.d}`;
const dataDir = await mkdtemp(join(tmpdir(), 'callcap-bench-'));
const poolMax = testDeps(created, dataDir, serviceEnv()).config.DATABASE_POOL_MAX;
const raw = await openPostgres(String(benchDbUrl), { max: poolMax });
const db = counting(raw);
const deps = testDeps(db, dataDir, serviceEnv());
// as src/server.ts builds it in a process that runs the api and worker roles both
const app = await buildPublicApp(deps, {
  chainStages: process.env.BENCH_CHAIN === '0' ? undefined : workerStageHandlers(),
});
const operator = await buildOperatorApp(deps);
await app.ready();
await operator.ready();
await app.listen({ port: 0, host: '127.0.0.1' });
// the worker role as the product starts it (the processing runner's poll: every second)
const stopWorkers = await startWorkers(deps);

let window: {
  t0: number;
  cpu: NodeJS.CpuUsage;
  thread: NodeJS.CpuUsage;
  backends: Map<number, number>;
  rssStart: number;
  rssPeak: number;
  memStart: MemoryFigures | null;
  memAtPeak: MemoryFigures | null;
  memMax: MemoryFigures | null;
  threads: Map<string, number>;
  /** calls already at `until` when the window started (the windows of one run share the organization) */
  already: Record<string, number>;
  sampler: NodeJS.Timeout;
  session: Session | null;
  allocSession: Session | null;
  stopWaits: () => Promise<Waits>;
} | null = null;

async function backendPids(): Promise<number[]> {
  const { rows } = await raw.query<{ pid: number }>(
    // the service's backends: not the waits' sampler (./capture-waits.ts), which is the bench's
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name <> 'bench-sampler'",
  );
  return rows.map((r) => r.pid);
}

/** BENCH_ALLOC_PROFILE=<file>: the window's allocations by site (sampled, garbage included), written there. */
const ALLOC_PROFILE = process.env.BENCH_ALLOC_PROFILE;

interface AllocNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocNode[];
}

/** The sampled bytes by allocating function (its file and line), largest first, with the caller of each. */
function allocationSites(head: AllocNode): string {
  const sites = new Map<string, number>();
  let total = 0;
  const walk = (n: AllocNode, parent: string) => {
    const f = n.callFrame;
    const here = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|src|bench|test)\//, '$1/')}:${f.lineNumber + 1}`;
    if (n.selfSize > 0) {
      const key = `${here}  <-  ${parent}`;
      sites.set(key, (sites.get(key) ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    for (const c of n.children) walk(c, here);
  };
  walk(head, '');
  const rows = [...sites].sort((a, b) => b[1] - a[1]).slice(0, 60);
  return `${(total / 1048576).toFixed(1)} MB sampled\n${rows.map(([k, v]) => `${(v / 1048576).toFixed(2).padStart(8)} MB  ${k}`).join('\n')}\n`;
}

async function startWindow(sampleRss: boolean, profiling: boolean, sampleBackends: boolean) {
  global.gc?.();
  const already: Record<string, number> = {};
  for (const [k, sql] of Object.entries(UNTIL))
    already[k] = (await raw.query<{ n: number }>(sql, [orgId])).rows[0]!.n;
  const backends = new Map((await backendPids()).map((p) => [p, cpuMsOf(p)]));
  let session: Session | null = null;
  if (profiling) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 1000 });
    await session.post('Profiler.start');
  }
  let allocSession: Session | null = null;
  if (ALLOC_PROFILE) {
    // every allocation sampled, collected or not: where the garbage the GC threads collect comes from
    allocSession = new Session();
    allocSession.connect();
    await allocSession.post('HeapProfiler.enable');
    await allocSession.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  if (SQL_LOG) appendFileSync(SQL_LOG, '-- window\n');
  counts.transactions = 0;
  counts.statements = 0;
  counts.byKind = {};
  const stopWaits = startWaits({
    url: String(benchDbUrl),
    poolSize: poolMax,
    poolStats: raw.poolStats,
    jobs: jobClock,
    sampleBackends,
  });
  const rssStart = process.memoryUsage.rss();
  const memStart = sampleRss ? mb(process.memoryUsage()) : null;
  window = {
    t0: performance.now(),
    cpu: process.cpuUsage(),
    thread: process.threadCpuUsage(),
    backends,
    rssStart,
    rssPeak: rssStart,
    memStart,
    memAtPeak: memStart,
    memMax: memStart && { ...memStart },
    threads: threadsCpuMs(),
    already,
    // RSS sampled every 20 ms when asked (the memory scenario), with the heap and buffer figures
    // (process.memoryUsage(): the sampling itself costs CPU); the RSS alone every second otherwise
    sampler: setInterval(
      () => {
        if (!window) return;
        if (!sampleRss) {
          window.rssPeak = Math.max(window.rssPeak, process.memoryUsage.rss());
          return;
        }
        const m = mb(process.memoryUsage());
        if (process.env.BENCH_GC_PROBE && global.gc && m.arrayBuffers > 30) {
          global.gc();
          const a = mb(process.memoryUsage());
          console.error(
            `probe: arrayBuffers ${m.arrayBuffers.toFixed(1)} -> after gc ${a.arrayBuffers.toFixed(1)}, rss ${m.rss.toFixed(0)} -> ${a.rss.toFixed(0)}`,
          );
        }
        if (m.rss * 1048576 > window.rssPeak) {
          window.rssPeak = m.rss * 1048576;
          window.memAtPeak = m;
        }
        const max = window.memMax!;
        for (const k of Object.keys(max) as (keyof MemoryFigures)[]) max[k] = Math.max(max[k], m[k]);
      },
      sampleRss ? 20 : 1000,
    ),
    session,
    allocSession,
    stopWaits,
  };
}

async function stopWindow(): Promise<Window> {
  const w = window!;
  window = null;
  clearInterval(w.sampler);
  const seconds = (performance.now() - w.t0) / 1000;
  const cpu = process.cpuUsage(w.cpu);
  const waits = await w.stopWaits();
  const thread = process.threadCpuUsage(w.thread);
  const threads: Record<string, number> = {};
  for (const [name, ms] of threadsCpuMs()) threads[name] = ms - (w.threads.get(name) ?? 0);
  const rssPeak = Math.max(w.rssPeak, process.memoryUsage.rss());
  let dbCpuMs = 0;
  for (const pid of await backendPids()) dbCpuMs += Math.max(0, cpuMsOf(pid) - (w.backends.get(pid) ?? 0));
  if (w.allocSession) {
    const { profile } = (await w.allocSession.post('HeapProfiler.stopSampling')) as {
      profile: { head: AllocNode };
    };
    w.allocSession.disconnect();
    writeFileSync(ALLOC_PROFILE!, allocationSites(profile.head));
  }
  let summary: ProfileSummary | null = null;
  if (w.session) {
    const { profile } = (await w.session.post('Profiler.stop')) as { profile: CpuProfile };
    w.session.disconnect();
    summary = summariseProfile(profile);
  }
  return {
    seconds,
    processCpuMs: (cpu.user + cpu.system) / 1000,
    mainThreadCpuMs: (thread.user + thread.system) / 1000,
    dbCpuMs,
    rssStartMb: w.rssStart / 1048576,
    rssPeakMb: rssPeak / 1048576,
    memStart: w.memStart,
    memAtPeak: w.memAtPeak,
    memMax: w.memMax,
    threads,
    counts: structuredClone(counts),
    profile: summary,
    waits,
  };
}

const UNTIL: Record<string, string> = {
  // every call.completed of a telephony call enqueued
  completed: `SELECT count(*)::int AS n FROM events e JOIN calls c ON c.id = e.call_id
               WHERE e.organization_id = $1 AND e.event_type = 'call.completed' AND c.telephony_provider = 'twilio'`,
  // every recording downloaded and stored
  available: `SELECT count(*)::int AS n FROM calls WHERE organization_id = $1 AND recording_state = 'available'`,
};

let orgId = '';

async function handle(m: Command): Promise<Record<string, unknown>> {
  switch (m.cmd) {
    case 'setup': {
      // as test/helpers/telephony.ts connectOrg does (that module also loads the fakes and node:test)
      const h = { operator };
      const created = await admin(h, 'POST', '/organizations', {
        name: 'Acme Plumbing',
        owner_email: 'owner@acme.example',
        owner_password: 'correct horse battery',
        country: 'US',
      });
      if (created.statusCode !== 201) throw new Error(created.body);
      orgId = created.json().organization_id as string;
      const account = m.account as { accountSid: string; authToken: string };
      const put = await admin(h, 'PUT', `/organizations/${orgId}/telephony`, {
        provider: 'twilio',
        account_sid: account.accountSid,
        auth_token: account.authToken,
      });
      if (put.statusCode !== 200) throw new Error(put.body);
      const number = '+14155552001';
      const num = await admin(h, 'POST', `/organizations/${orgId}/phone-numbers`, {
        number,
        ring_to: '+14155550100',
      });
      if (num.statusCode !== 201) throw new Error(num.body);
      const { port } = app.server.address() as { port: number };
      return { port, orgId, number };
    }
    case 'subscribe':
      await insertSubscription(deps, {
        orgId,
        url: String(m.receiverUrl),
        at: new Date('2026-06-01T00:00:00Z'),
      });
      return {};
    case 'baseline': {
      const calls = Number(m.calls);
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: Number(m.concurrency) }, async () => {
          while (next++ < calls) {
            await raw.transaction(async (tx) => {
              const id = newId();
              await tx.query(
                `INSERT INTO calls (id, organization_id, direction, caller_phone, created_at, updated_at)
                 VALUES ($1, $2, 'inbound', '+14155552671', now(), now())`,
                [id, orgId],
              );
              await tx.query(
                `INSERT INTO events (id, organization_id, event_type, resource_id, call_id, body, created_at)
                 VALUES ($1, $2, 'call.completed', $3, $3, '{}', now())`,
                [newId(), orgId, id],
              );
            });
          }
        }),
      );
      return { seconds: (performance.now() - t0) / 1000 };
    }
    case 'start':
      await startWindow(m.rss === true, m.profile === true, m.waits === true);
      return {};
    case 'wait': {
      const sql = UNTIL[String(m.until)]!;
      const target = window!.already[String(m.until)]! + Number(m.n);
      const t0 = performance.now();
      const deadline = t0 + 600_000;
      for (;;) {
        const n = (await raw.query<{ n: number }>(sql, [orgId])).rows[0]?.n ?? 0;
        if (n >= target) break;
        if (performance.now() > deadline)
          throw new Error(`only ${n - (target - Number(m.n))} of ${m.n} ${m.until} in 10 minutes`);
        // The count is the bench's, not the service's (a scan of the organization's events that grows
        // with the run), so it runs rarely while much is left: a third of the time the rest should
        // take at the rate so far, between 20 ms and 500 ms (at most 20 ms late at the end).
        const done = n - (target - Number(m.n));
        const rate = done / Math.max(1, performance.now() - t0);
        const ms = rate > 0 ? (target - n) / rate / 3 : 100;
        await new Promise((r) => setTimeout(r, Math.min(500, Math.max(20, ms))));
      }
      return { window: await stopWindow() };
    }
    default:
      throw new Error(`unknown command ${m.cmd}`);
  }
}

serveCommands(handle, async () => {
  await stopWorkers();
  await app.close();
  await operator.close();
  await raw.close();
  await created.close();
  await rm(dataDir, { recursive: true, force: true });
});
