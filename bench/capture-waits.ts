/**
 * The waits of `npm run bench:capture`, measured in the service process over the timed window
 * (bench/capture-service.ts starts and stops them with the window):
 * - the main thread's event-loop delay (perf_hooks.monitorEventLoopDelay): how long a ready callback
 *   waited for the thread — the service's own CPU queue;
 * - the pg pool (Db.poolStats, sampled every 20 ms): connections in use and queries waiting for one;
 * - PostgreSQL's backends of the bench database (pg_stat_activity on a connection of its own, every
 *   20 ms): how many were active, idle in a transaction, and what the active ones waited on (a Lock
 *   wait on a row or a transaction id is a lock serialising the calls; Client/ClientRead is the
 *   backend waiting for the service);
 * - each processing job's times (from the statements the counting Db sees, in real time: the bench's
 *   clock is a fake one, so the job rows' timestamps say nothing): due (queued due now) → claimed (or
 *   inserted leased: the chain) → ended (its end statement answered), by stage.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import type { PoolStats } from '../src/db/types.ts';

const SAMPLE_MS = 20;

export interface JobTimes {
  stage: string;
  due?: number;
  claimed?: number;
  ended?: number;
  chained: boolean;
}

export interface Dist {
  n: number;
  mean: number;
  p50: number;
  p95: number;
  max: number;
}

export interface Waits {
  loopDelayMs: { mean: number; p99: number; max: number };
  pool: {
    size: number;
    samples: number;
    inUseMean: number;
    waitingMean: number;
    waitingMax: number;
    waitingShare: number;
  };
  backends: {
    samples: number;
    activeMean: number;
    idleInTxMean: number;
    /** active backends' wait events: mean number per sample, by "type:event" ("CPU" = no wait) */
    waits: Record<string, number>;
    /** the statements (first 70 characters) of the backends seen waiting on a Lock, with how often */
    lockWaiters: Record<string, number>;
    /** the last statements (first 70 characters) of the backends seen idle in a transaction, with how often */
    idleInTxAfter: Record<string, number>;
  };
  /** by stage: due → claimed (not chained) and claimed → ended, ms */
  jobs: Record<
    string,
    { n: number; chained: number; dueToClaimed: Dist | null; claimedToEnded: Dist | null }
  >;
  /** per call: the download queued due → call.completed's analyse (or complete) run ended, ms */
  callLatency: Dist | null;
}

const dist = (xs: number[]): Dist | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return {
    n: s.length,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    p50: at(0.5),
    p95: at(0.95),
    max: s.at(-1)!,
  };
};

/** The job statements' times, keyed by call and stage (one job row per call and stage). */
export class JobClock {
  readonly jobs = new Map<string, JobTimes>();
  private on = false;
  start() {
    this.jobs.clear();
    this.on = true;
  }
  stop() {
    this.on = false;
  }
  private at(callId: string, stage: string): JobTimes {
    const k = `${callId}:${stage}`;
    let j = this.jobs.get(k);
    if (!j) {
      j = { stage, chained: false };
      this.jobs.set(k, j);
    }
    return j;
  }
  /** A statement answered: its SQL, parameters, options' name and rows. */
  seen(sql: string, params: readonly unknown[] | undefined, name: string | undefined, rows: unknown[]) {
    if (!this.on) return;
    const now = performance.now();
    if (name === 'capture_enqueue_leased_v1' && rows.length > 0 && params) {
      const j = this.at(String(params[2]), String(params[3]));
      j.due = j.claimed = now;
      j.chained = true;
    } else if (
      name === 'capture_enqueue_stage_v1' &&
      params?.[4] === 'pending' &&
      (params[5] as Date).getTime() <= (params[7] as Date).getTime()
    ) {
      const j = this.at(String(params[2]), String(params[3]));
      j.due = now;
      j.chained = false;
      j.claimed = j.ended = undefined;
    } else if (/^\s*WITH due AS \(\s*SELECT j\.id\s+FROM processing_jobs/.test(sql)) {
      for (const r of rows as { call_id: string; stage: string }[]) this.at(r.call_id, r.stage).claimed = now;
    } else if (/^capture_(lock_)?end_run_v\d+$/.test(name ?? '') && params) {
      this.at(String(params[3]), String(params[4])).ended = now;
    }
  }
}

export function startWaits(p: {
  url: string;
  poolSize: number;
  poolStats?: () => PoolStats;
  jobs: JobClock;
  /** sample pg_stat_activity (costs PostgreSQL ~30 ms of CPU per second) */
  sampleBackends: boolean;
}) {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  p.jobs.start();
  const pool = { samples: 0, inUse: 0, waiting: 0, waitingMax: 0, waitingSamples: 0 };
  const backends = {
    samples: 0,
    active: 0,
    idleInTx: 0,
    waits: {} as Record<string, number>,
    lockWaiters: {} as Record<string, number>,
    idleInTxAfter: {} as Record<string, number>,
  };
  const poolTimer = p.poolStats
    ? setInterval(() => {
        const s = p.poolStats!();
        pool.samples++;
        pool.inUse += s.total - s.idle;
        pool.waiting += s.waiting;
        pool.waitingMax = Math.max(pool.waitingMax, s.waiting);
        if (s.waiting > 0) pool.waitingSamples++;
      }, SAMPLE_MS)
    : null;
  // pg_stat_activity on a connection of its own (not the pool it measures), one query in flight at a
  // time: ~30 ms of PostgreSQL CPU per second, not counted as the service's (bench-sampler is left out
  // of its backends) but part of the machine's "other" share; only when asked (sampleBackends)
  const client = new pg.Client({ connectionString: p.url, application_name: 'bench-sampler' });
  let stopped = !p.sampleBackends;
  const sampling = (async () => {
    if (stopped) return;
    await client.connect();
    while (!stopped) {
      const t = performance.now();
      const { rows } = await client.query<{ state: string; wt: string | null; we: string | null; q: string }>(
        `SELECT state, wait_event_type AS wt, wait_event AS we, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS q
           FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            AND application_name <> 'callcap-listen'`,
      );
      backends.samples++;
      for (const r of rows) {
        if (r.state === 'idle in transaction') {
          backends.idleInTx++;
          backends.idleInTxAfter[r.q] = (backends.idleInTxAfter[r.q] ?? 0) + 1;
        }
        if (r.state !== 'active') continue;
        backends.active++;
        const k = r.wt ? `${r.wt}:${r.we}` : 'CPU';
        backends.waits[k] = (backends.waits[k] ?? 0) + 1;
        if (r.wt === 'Lock') backends.lockWaiters[r.q] = (backends.lockWaiters[r.q] ?? 0) + 1;
      }
      const left = SAMPLE_MS - (performance.now() - t);
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    }
  })();

  return async (): Promise<Waits> => {
    loop.disable();
    p.jobs.stop();
    if (poolTimer) clearInterval(poolTimer);
    const sampled = !stopped;
    stopped = true;
    await sampling.catch(() => {});
    if (sampled) await client.end().catch(() => {});
    const jobs: Waits['jobs'] = {};
    const byCall = new Map<string, { start?: number; end?: number }>();
    for (const [k, j] of p.jobs.jobs) {
      jobs[j.stage] ??= { n: 0, chained: 0, dueToClaimed: null, claimedToEnded: null };
      const s = jobs[j.stage]!;
      s.n++;
      if (j.chained) s.chained++;
      const callId = k.slice(0, k.indexOf(':'));
      const c = byCall.get(callId) ?? {};
      if (j.stage === 'download' && j.due !== undefined) c.start = j.due;
      if ((j.stage === 'analyse' || j.stage === 'complete') && j.ended !== undefined)
        c.end = Math.max(c.end ?? 0, j.ended);
      byCall.set(callId, c);
    }
    for (const stage of Object.keys(jobs)) {
      const all = [...p.jobs.jobs.values()].filter((j) => j.stage === stage);
      jobs[stage]!.dueToClaimed = dist(
        all
          .filter((j) => !j.chained && j.due !== undefined && j.claimed !== undefined)
          .map((j) => j.claimed! - j.due!),
      );
      jobs[stage]!.claimedToEnded = dist(
        all.filter((j) => j.claimed !== undefined && j.ended !== undefined).map((j) => j.ended! - j.claimed!),
      );
    }
    const ns = (x: number) => x / 1e6;
    const mean = (x: number, n: number) => (n > 0 ? x / n : 0);
    return {
      loopDelayMs: { mean: ns(loop.mean), p99: ns(loop.percentile(99)), max: ns(loop.max) },
      pool: {
        size: p.poolSize,
        samples: pool.samples,
        inUseMean: mean(pool.inUse, pool.samples),
        waitingMean: mean(pool.waiting, pool.samples),
        waitingMax: pool.waitingMax,
        waitingShare: mean(pool.waitingSamples, pool.samples),
      },
      backends: {
        samples: backends.samples,
        activeMean: mean(backends.active, backends.samples),
        idleInTxMean: mean(backends.idleInTx, backends.samples),
        waits: Object.fromEntries(
          Object.entries(backends.waits).map(([k, v]) => [k, mean(v, backends.samples)]),
        ),
        lockWaiters: backends.lockWaiters,
        idleInTxAfter: backends.idleInTxAfter,
      },
      jobs,
      callLatency: dist(
        [...byCall.values()]
          .filter((c) => c.start !== undefined && c.end !== undefined)
          .map((c) => c.end! - c.start!),
      ),
    };
  };
}
