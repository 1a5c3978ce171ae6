/**
 * npm run bench:capture — inbound calls per second from Twilio's recording callback to
 * call.completed enqueued, beside a baseline measured in the same run: the same number of bare
 * INSERTs of a call plus its outbox row. Where the service's CPU goes per call, by stage. And the
 * memory of the recording download: the service's RSS while ten 50 MB recordings stream from (fake)
 * Twilio into the blob store at once.
 *
 * Two processes: the service (bench/capture-service.ts, forked: public app on a real socket, the
 * worker role, PostgreSQL from BENCH_DATABASE_URL, a fresh database per run, dropped after) and this
 * one, which plays the outside world — the fake Twilio of the tests (test/helpers/fake-twilio.ts:
 * signed callbacks, recordings served over REST), an instant speech-to-text server speaking the
 * openai protocol (answers at once, after reading the upload) and a webhook receiver answering 200.
 * So the service's CPU and RSS are the service's alone.
 *
 * Three timed windows, each with its own CALLS calls, one after the other in one service: (1) no
 * webhook subscription — the scenario issue 16 measured (d58afa4's bench had none) and the headline
 * calls/s; (2) a subscription to every event, four webhook deliveries per call; (3) as (2) with the CPU
 * profile and the waits sampler (BENCH_PROFILE=0 BENCH_WAITS=0: no third window). Calls/s is read from
 * (1) and (2), which run without instruments: the profile and the sampler cost CPU of their own. The
 * bench's own poll for the end of a window (a count of the organization's call.completed events) runs
 * rarely while much is left (bench/capture-service.ts `wait`).
 *
 * Per call, measured over each timed window: the service process's CPU (all threads), its main
 * thread's, its PostgreSQL backends' (/proc), the statements, transactions and NOTIFYs it sent
 * (a counting wrapper around its Db), and the main thread's CPU split by stage from a V8 CPU profile
 * (bench/cpu-profile.ts says how a sample is attributed). "other" is the share of the machine the
 * rest of the machine (other engineers, CI) used meanwhile: on a shared machine compare the ratios
 * and the CPU per call, not the calls/s. Also this driver's own CPU per call (the fakes: Twilio, the
 * speech-to-text server, the receiver) and the machine's idle share over the window: near 0 % means
 * the run was CPU-bound (calls/s = the cores over service + PostgreSQL + driver CPU per call).
 *
 * BENCH_CALLS (default 1,000: a window of ~10 s or more at this tree's rate — at 200 calls it lasted ~3 s,
 * and the first window's fixed warm-up, the JIT and each new PostgreSQL connection planning every
 * statement once, weighed ~25 % of it; docs/decisions.md), BENCH_WARMUP=n (n calls through the whole
 * pipeline, untimed, before window 1; default 0, cold, as d58afa4's bench),
 * BENCH_CONCURRENCY (default 10), BENCH_PROFILE=0 (no CPU profile),
 * BENCH_TOP=n (also print the n hottest functions), BENCH_MEMORY=0 (skip the memory scenario),
 * BENCH_NODE_FLAGS (Node/V8 flags of the service process, e.g. --single-threaded-gc), BENCH_ONLY=memory,
 * BENCH_MEMORY_RUNS=n (the memory scenario n times, a fresh service each), BENCH_GC_PROBE=1 (in the memory
 * scenario, a forced GC whenever arrayBuffers pass 30 MB, printing them before and after: live or
 * garbage), BENCH_SQL_LOG=<file> (every statement the service sends, appended there: run with BENCH_CALLS=1),
 * BENCH_ALLOC_PROFILE=<file> (the timed window's allocations by site, garbage included), BENCH_CHAIN=0 (the
 * public listener runs downloads only, as without the worker role in its process), DATABASE_POOL_MAX (the
 * service's pool, default the product's).
 *
 * The waits over the window (./capture-waits.ts): the service's event-loop delay, its pg pool's
 * connections in use and clients waiting, PostgreSQL's backends' wait events (a Lock wait names its
 * statement; "idle in transaction after" names the statement a transaction's connection sat after,
 * waiting for the service), and each job's due → claimed and claimed → ended times by stage.
 * BENCH_WAITS=0: no pg_stat_activity sampling (it costs PostgreSQL ~30 ms of CPU per second, outside
 * the per-call figures).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { Readable } from 'node:stream';
import { type FakeCall, startFakeTwilio } from '../test/helpers/fake-twilio.ts';
import { mp3Frames } from '../test/helpers/mp3.ts';
import { INBOUND_TONES, stereoMp3 } from '../test/helpers/stereo-mp3.ts';
import type { Window } from './capture-service.ts';
import type { Dist, Waits } from './capture-waits.ts';
import { forkService, type ServiceProcess } from './service-process.ts';

const CALLS = Number(process.env.BENCH_CALLS) || 1000;
const WARMUP = Number(process.env.BENCH_WARMUP) || 0;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY) || 10;
const TOP = Number(process.env.BENCH_TOP) || 0;
const MEMORY_RUNS = Number(process.env.BENCH_MEMORY_RUNS) || 1;
const PUBLIC_BASE_URL = 'https://calls.example.test';
const log = (s: string) => process.stdout.write(`${s}\n`);

/** A loopback HTTP server answering every request with `answer` once its body is read. */
async function serve(answer: (res: import('node:http').ServerResponse) => void) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** An openai-compatible /audio/transcriptions that answers at once with one short segment. */
const instantTranscriber = () =>
  serve((res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        text: 'Hello, I need a plumber tomorrow morning.',
        language: 'english',
        duration: 3,
        segments: [{ id: 0, start: 0, end: 2.5, text: ' Hello, I need a plumber tomorrow morning.' }],
      }),
    ),
  );

/** The service in its own process, driven over IPC (bench/capture-service.ts). */
const startService = (env: Record<string, string>, execArgv: string[] = []) =>
  forkService(new URL('./capture-service.ts', import.meta.url), env, execArgv);

/** Busy and total clock ticks of the machine (/proc/stat), and this process's CPU, to tell what others used. */
function machineTicks(): { busy: number; total: number; cpus: number } {
  try {
    const lines = readFileSync('/proc/stat', 'utf8').split('\n');
    const f = lines[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    const cpus = lines.filter((l) => /^cpu\d/.test(l)).length;
    return { busy: total - f[3]! - f[4]!, total, cpus };
  } catch {
    return { busy: 0, total: 1, cpus: 1 };
  }
}

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** Runs `drive` inside a measurement window of the service; answers the window and the machine's other load. */
async function measured(
  service: ServiceProcess,
  until: { until: string; n: number; rss?: boolean; profile?: boolean; waits?: boolean },
  drive: () => Promise<unknown>,
): Promise<{
  w: Window;
  wallSeconds: number;
  otherPct: number;
  driverCpuMs: number;
  idlePct: number;
  cpus: number;
}> {
  await service.call('start', {
    rss: until.rss === true,
    profile: until.profile === true,
    waits: until.waits === true,
  });
  const m0 = machineTicks();
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const done = service.call<{ window: Window }>('wait', until);
  await drive();
  const { window: w } = await done;
  const wallSeconds = (performance.now() - t0) / 1000;
  const self = process.cpuUsage(self0);
  const m1 = machineTicks();
  const oursTicks = (w.processCpuMs + w.dbCpuMs + (self.user + self.system) / 1000) / 10;
  const totalTicks = Math.max(1, m1.total - m0.total);
  const otherPct = Math.max(0, (100 * (m1.busy - m0.busy - oursTicks)) / totalTicks);
  // idle (and iowait) of all CPUs over the window: near 0 % = the run was CPU-bound
  const idlePct = (100 * (totalTicks - (m1.busy - m0.busy))) / totalTicks;
  return { w, wallSeconds, otherPct, driverCpuMs: (self.user + self.system) / 1000, idlePct, cpus: m1.cpus };
}

const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);

type Measured = Awaited<ReturnType<typeof measured>>;

/** The CPU lines of a window: per call, by process and by thread, and the machine's idle share. */
function printCpu(r: Measured, calls: number) {
  const { w, wallSeconds, otherPct, driverCpuMs, idlePct, cpus } = r;
  const per = (x: number) => x / calls;
  log(`  other processes used ${otherPct.toFixed(0)} % of the machine meanwhile`);
  // the machine's CPU time over the window split: ours (service, PostgreSQL, this driver), the
  // others', idle. Idle near 0 % = CPU-bound: calls/s is then the cores over the CPU per call.
  const oursCores = (w.processCpuMs + w.dbCpuMs + driverCpuMs) / 1000 / wallSeconds;
  log(
    `  machine idle ${idlePct.toFixed(0)} % of ${cpus} CPUs over the window` +
      ` (${idlePct < 5 ? 'CPU-bound' : idlePct < 20 ? 'nearly CPU-bound' : 'not CPU-bound: waiting'}); ` +
      `service + PostgreSQL + driver used ${f2(oursCores)} cores`,
  );
  log(
    `  CPU per call: service ${f2(per(w.processCpuMs))} ms (main thread ${f2(per(w.mainThreadCpuMs))} ms), ` +
      `PostgreSQL backends ${f2(per(w.dbCpuMs))} ms, bench driver (fake Twilio, speech-to-text, receiver) ` +
      `${f2(per(driverCpuMs))} ms; all three ${f2(per(w.processCpuMs + w.dbCpuMs + driverCpuMs))} ms`,
  );
  log(
    `  service threads, ms per call: ${Object.entries(w.threads)
      .filter(([, ms]) => ms > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${f2(per(ms))}`)
      .join(', ')}`,
  );
  const c = w.counts;
  log(
    `  per call: ${f1(per(c.statements))} statements in ${f1(per(c.transactions))} transactions; ` +
      Object.entries(c.byKind)
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${f1(per(n))}`)
        .join(', '),
  );
}

async function main() {
  const fake = await startFakeTwilio({ publicBaseUrl: PUBLIC_BASE_URL });
  const stt = await instantTranscriber();
  const receiver = await serve((res) => res.writeHead(200).end());
  try {
    if (process.env.BENCH_ONLY === 'memory') {
      for (let i = 0; i < MEMORY_RUNS; i++) await memory(fake);
      return;
    }
    const account = fake.addAccount();
    const service = await startService({
      PUBLIC_BASE_URL,
      TWILIO_API_BASE_URL: fake.url,
      TRANSCRIPTION_PROVIDER: 'openai',
      TRANSCRIPTION_BASE_URL: `${stt.url}/v1`,
      TRANSCRIPTION_API_KEY: 'bench',
      PROCESSING_CONCURRENCY: String(CONCURRENCY),
      // the product's pool size (20) unless set here, to measure another
      ...(process.env.DATABASE_POOL_MAX ? { DATABASE_POOL_MAX: process.env.DATABASE_POOL_MAX } : {}),
    });
    try {
      const org = await service.call<{ port: number; number: string }>('setup', { account });
      fake.serviceOrigin = `http://127.0.0.1:${org.port}`;
      const audio = stereoMp3({ seconds: 5, ...INBOUND_TONES });
      const [l1, l5] = loadavg();
      log(
        `Capture benchmark — ${new Date().toISOString()} — ${CALLS} calls per window, concurrency ${CONCURRENCY}` +
          `${WARMUP > 0 ? `, after ${WARMUP} calls untimed (BENCH_WARMUP)` : ', cold (no warm-up)'}; ` +
          `the service in its own process; load average ${f1(l1!)} / ${f1(l5!)} (1 / 5 min)`,
      );

      // Baseline: a call row and its outbox event, bare INSERTs in one transaction each, in the service.
      const { seconds: baselineSeconds } = await service.call<{ seconds: number }>('baseline', {
        calls: CALLS,
        concurrency: CONCURRENCY,
      });
      const baseline = CALLS / baselineSeconds;

      let rung = 0;
      /** CALLS calls ring in (untimed: Voice URL answered with a <Dial> of the ring-to number), then the
       * timed part: the dialled number answers and hangs up — the recording callback, then the download,
       * transcription, analysis and completion as durable jobs, until every call.completed is queued. */
      const window = async (instruments: { profile: boolean; waits: boolean }, n = CALLS) => {
        const calls: FakeCall[] = [];
        for (let i = 0; i < n; i++, rung++) {
          calls.push(
            await fake.inboundCall({
              from: `+1415${String(5_000_000 + rung).padStart(7, '0')}`,
              to: org.number,
              account,
            }),
          );
        }
        const r = await measured(service, { until: 'completed', n, ...instruments }, () =>
          pool(calls, CONCURRENCY, (call) => call.answerDial({ recording: audio })),
        );
        return { ...r, rate: n / r.wallSeconds };
      };
      const row = (label: string, rate: number, note = '') =>
        log(
          `${label.padEnd(66)} ${(rate >= 100 ? rate.toFixed(0) : f1(rate)).padStart(7)}   ${f1((rate / baseline) * 100).padStart(5)} %${note}`,
        );

      // Three windows, each its own calls. Calls/s comes from the windows without instruments: the CPU
      // profile and the pg_stat_activity sampler cost the service and PostgreSQL CPU of their own.
      // 1. no webhook subscription: the scenario issue 16 measured (d58afa4's bench had none)
      // 0. BENCH_WARMUP=n: n calls untimed first (JIT, the pool's connections and their statements)
      if (WARMUP > 0) await window({ profile: false, waits: false }, WARMUP);
      const plain = await window({ profile: false, waits: false });
      // 2. a subscription to every event: four webhook deliveries per call to the receiver
      await service.call('subscribe', { receiverUrl: `${receiver.url}/hooks` });
      const hooked = await window({ profile: false, waits: false });
      // 3. as 2, with the CPU profile and the waits (BENCH_PROFILE=0 and BENCH_WAITS=0: skipped)
      const profile = process.env.BENCH_PROFILE !== '0';
      const waits = process.env.BENCH_WAITS !== '0';
      const inst = profile || waits ? await window({ profile, waits }) : null;

      log('');
      log('scenario                                                              calls/s   vs base');
      row('baseline: INSERT call + outbox row', baseline, '');
      row('recording callback -> call.completed enqueued', plain.rate, '   (target >= 30 %)');
      printCpu(plain, CALLS);
      row('  the same, with a webhook subscription (4 deliveries per call)', hooked.rate);
      printCpu(hooked, CALLS);
      if (!inst) return;
      row(
        `  the same, subscribed, with ${[profile && 'the CPU profile', waits && 'the waits sampler'].filter(Boolean).join(' and ')}`,
        inst.rate,
      );
      printCpu(inst, CALLS);
      const w = inst.w;
      const per = (x: number) => x / CALLS;
      printWaits(w.waits);
      if (w.profile) {
        log('');
        log('service main thread, by stage (CPU profile; window 3)             ms/call    share');
        for (const r of w.profile.stages) {
          if (r.share < 0.001) continue;
          log(
            `${r.stage.padEnd(62)} ${f2(per(w.mainThreadCpuMs) * r.share).padStart(8)}  ${f1(r.share * 100).padStart(5)} %`,
          );
        }
        if (TOP > 0) {
          log('');
          log('hottest functions (self time)');
          for (const r of w.profile.top.slice(0, TOP))
            log(`  ${f1(r.share * 100).padStart(5)} %  ${r.stage}`);
        }
      }
    } finally {
      await service.close();
    }
    if (process.env.BENCH_MEMORY !== '0') for (let i = 0; i < MEMORY_RUNS; i++) await memory(fake);
  } finally {
    await fake.close();
    await stt.close();
    await receiver.close();
  }
}

/** The window's waits (./capture-waits.ts): event loop, pool, PostgreSQL's backends, the jobs by stage. */
function printWaits(x: Waits) {
  const d = (v: Dist | null) =>
    v ? `mean ${f1(v.mean)} / p50 ${f1(v.p50)} / p95 ${f1(v.p95)} / max ${f1(v.max)}` : '—';
  log('');
  log(
    `waits: event-loop delay mean ${f1(x.loopDelayMs.mean)} ms, p99 ${f1(x.loopDelayMs.p99)} ms, max ${f1(x.loopDelayMs.max)} ms; ` +
      (x.pool.samples > 0
        ? `pg pool of ${x.pool.size}: ${f1(x.pool.inUseMean)} connections in use, ${f2(x.pool.waitingMean)} waiting on average ` +
          `(max ${x.pool.waitingMax}, some waiting in ${f1(x.pool.waitingShare * 100)} % of ${x.pool.samples} samples)`
        : 'pg pool: not sampled (no poolStats)'),
  );
  const b = x.backends;
  log(
    `PostgreSQL backends (${b.samples} samples): ${f2(b.activeMean)} active, ${f2(b.idleInTxMean)} idle in transaction on average; ` +
      `the active ones: ${Object.entries(b.waits)
        .sort((p, q) => q[1] - p[1])
        .map(([k, v]) => `${k} ${f2(v)}`)
        .join(', ')}`,
  );
  const lw = Object.entries(b.lockWaiters).sort((p, q) => q[1] - p[1]);
  if (lw.length > 0) for (const [q, n] of lw.slice(0, 5)) log(`  waiting on a Lock, ${n} samples: ${q}`);
  const it = Object.entries(b.idleInTxAfter).sort((p, q) => q[1] - p[1]);
  for (const [q, n] of it.slice(0, 5)) log(`  idle in transaction after, ${n} samples: ${q}`);
  log(`jobs by stage, ms (chained = inserted leased to the runner that queued it: no claim)`);
  for (const [stage, j] of Object.entries(x.jobs))
    log(
      `  ${stage.padEnd(10)} ${String(j.n).padStart(4)} (${j.chained} chained)  due -> claimed ${d(j.dueToClaimed)};  claimed -> ended ${d(j.claimedToEnded)}`,
    );
  log(`  per call, download due -> last stage ended: ${d(x.callLatency)}`);
}

/**
 * Ten 50 MB recordings downloaded at once by a fresh service (no speech-to-text): the service's RSS
 * sampled every 20 ms, growth over the start (after a GC).
 */
async function memory(fake: Awaited<ReturnType<typeof startFakeTwilio>>) {
  const account = fake.addAccount();
  const receiver = await serve((res) => res.writeHead(200).end());
  const service = await startService({ PUBLIC_BASE_URL, TWILIO_API_BASE_URL: fake.url }, ['--expose-gc']);
  try {
    const org = await service.call<{ port: number; number: string }>('setup', { account });
    await service.call('subscribe', { receiverUrl: `${receiver.url}/hooks` });
    fake.serviceOrigin = `http://127.0.0.1:${org.port}`;
    const frames = Math.ceil((50 * 1024 * 1024) / 417);
    const chunk = mp3Frames(2400); // ~1 MB of frames, repeated
    const big = () => {
      let left = frames;
      return Readable.from(
        (function* () {
          while (left > 0) {
            const n = Math.min(left, 2400);
            left -= n;
            yield n === 2400 ? chunk : chunk.subarray(0, n * 417);
          }
        })(),
      );
    };
    const calls: FakeCall[] = [];
    for (let i = 0; i < 10; i++) {
      calls.push(
        await fake.inboundCall({
          from: `+1415555${String(4000 + i).padStart(4, '0')}`,
          to: org.number,
          account,
        }),
      );
    }
    const { w, wallSeconds } = await measured(service, { until: 'available', n: 10, rss: true }, () =>
      Promise.all(calls.map((c) => c.answerDial({ recording: big }))),
    );
    const growth = w.rssPeakMb - w.rssStartMb;
    const [l1, l5] = loadavg();
    log('');
    log(`load average ${f1(l1!)} / ${f1(l5!)} (1 / 5 min)`);
    log(
      `memory: ten ${((frames * 417) / 1048576).toFixed(0)} MB recordings streamed at once in ${f1(wallSeconds)} s; ` +
        `service RSS ${Math.round(w.rssStartMb)} -> peak ${Math.round(w.rssPeakMb)} MB ` +
        `(growth ${growth.toFixed(0)} MB, target <= 50 MB); CPU ${f1(w.processCpuMs / 10)} ms per recording`,
    );
    const [s, p, x] = [w.memStart, w.memAtPeak, w.memMax];
    if (s && p && x) {
      const row = (k: keyof typeof s) =>
        `  ${k.padEnd(13)} ${f1(s[k]).padStart(7)} ${f1(p[k]).padStart(9)} ${`+${f1(p[k] - s[k])}`.padStart(8)} ${f1(x[k]).padStart(7)}`;
      log('  MB            start  at RSS peak  growth     max');
      for (const k of ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'] as const) log(row(k));
    }
  } finally {
    await service.close();
    await receiver.close();
  }
}

await main();
