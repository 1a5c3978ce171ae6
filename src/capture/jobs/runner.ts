/**
 * The processing job runner (docs/capture.md "Processing jobs"). Several may run, in one or many
 * processes, against one database: the claim (FOR UPDATE SKIP LOCKED + lease, ./sql/claim-jobs.ts)
 * gives each job to one runner at a time. The lease is short (LEASE_MS, 30 s) and a running job
 * renews it by a heartbeat every third of its length (src/periodic.ts startHeartbeat: due by
 * deps.clock), so a stage may run for as long as its provider takes while a dead worker's job is due
 * again within 30 s. A heartbeat that finds the lease gone (another runner took the job) aborts the
 * stage. Every write of a run is fenced by the lease (./sql/finish-job.ts lockRun): a run that lost
 * its lease writes nothing.
 *
 * Two ways in:
 * - the worker role: start() LISTENs on processing_jobs (an enqueue notifies at commit) and polls
 *   every POLL_INTERVAL_MS for retries falling due and expired leases; up to `concurrency` jobs run
 *   at once;
 * - the API process: soon(callId) runs the call's due jobs right after the response that enqueued
 *   them (single-process latency stays low); it claims like any runner, so it never runs a job
 *   another runner holds. A route that queues the job itself may insert it already leased to this
 *   runner (offer(): the chain's lease, below) and hand it to soon(callId, job), which runs it
 *   without a claim.
 *
 * Time rules read deps.clock only: tests drive a fake clock and call drain().
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { ProviderError } from '../../domain/capture-providers.ts';
import { type FailureKind, retryVerdict } from '../../domain/processing-retry.ts';
import { processingJobRuns } from '../../observability/metrics.ts';
import { startHeartbeat } from '../../periodic.ts';
import { drainRuns, kickedRounds, startWakeups } from '../../queue.ts';
import { JOBS_CHANNEL } from './enqueue.ts';
import { operatorMessage } from './error-message.ts';
import { claimJobs, extendLease, releaseJob } from './sql/claim-jobs.ts';
import { endRun, type JobOutcome, LeaseLost, lockAndEndRun, type RunEnd } from './sql/finish-job.ts';
import {
  type ClaimedJob,
  RunCancelled,
  type RunChain,
  STAGES,
  type Stage,
  type StageHandlers,
  type StageOutcome,
  type StageWrite,
} from './types.ts';

/**
 * A claimed job is this runner's for 30 s, renewed every 10 s while it runs (a long transcription
 * takes minutes): a job whose worker died (kill -9, a lost machine) runs again within 30 s.
 */
export const LEASE_MS = 30_000;
/** Poll for retries that fell due and for expired leases (notifications cover new work). */
export const POLL_INTERVAL_MS = 1_000;

export interface JobRunnerOptions {
  handlers: StageHandlers;
  /** jobs running at once (PROCESSING_CONCURRENCY); soon() runs are not capped, but chain no further beyond it */
  concurrency?: number;
  /**
   * The stages this runner claims (default: every stage it has a handler for). The others it has a
   * handler for it runs only as a chain (below): the public listener claims downloads and, in a
   * process that is a worker too, transcribes and analyses what it downloaded.
   */
  claimStages?: readonly Stage[];
  leaseMs?: number;
  pollIntervalMs?: number;
  /** lease_owner written on claimed rows; random by default */
  owner?: string;
  /** jitter source, [0, 1) */
  random?: () => number;
  /** how often, in real time, a running job's heartbeat looks at the clock (SCHEDULER_TICK_MS) */
  tickMs?: number;
}

export interface JobRunner {
  readonly owner: string;
  /** LISTEN + poll until stop(). */
  start(): Promise<void>;
  /** Stops claiming and waits for the jobs running. */
  stop(): Promise<void>;
  /**
   * Runs the due jobs of one call in the background, one after another (the API process after a
   * 202). `leased`: the job offer() leased to this runner, run first and without a claim.
   */
  soon(callId: string, leased?: ClaimedJob): void;
  /**
   * For a route that queues a job of `callId` and runs it right after its response (soon): the
   * lease to insert it under (`chain`, enqueueStage's), when this runner will run it — it claims the
   * stage and is not stopping; `job()` answers the job the enqueue leased, to hand to soon().
   */
  offer(callId: string): RunOffer;
  /** Runs the due jobs of one call now, one after another; returns how many ran. */
  runCall(callId: string): Promise<number>;
  /** One claim of due jobs (up to `concurrency`) and their runs; returns how many ran. */
  runOnce(): Promise<number>;
  /** runOnce until nothing is due at the current clock; returns how many ran. */
  drain(): Promise<number>;
}

/** A route's lease for the job it queues and runs right after its response (JobRunner.offer). */
export interface RunOffer {
  chain: RunChain;
  /** the job the enqueue inserted leased to this runner, if it did */
  job(): ClaimedJob | undefined;
}

export function createJobRunner(deps: Deps, opts: JobRunnerOptions): JobRunner {
  const owner = opts.owner ?? `jobs-${randomUUID()}`;
  const concurrency = Math.max(1, opts.concurrency ?? deps.config.PROCESSING_CONCURRENCY);
  const leaseMs = opts.leaseMs ?? LEASE_MS;
  const random = opts.random ?? Math.random;
  const handled = STAGES.filter((s) => opts.handlers[s] !== undefined);
  const stages = handled.filter((s) => !opts.claimStages || opts.claimStages.includes(s));
  const running = new Set<Promise<unknown>>();
  /** runs in flight that are a chain's (a stage after the one claimed): at most `concurrency` */
  let chained = 0;
  const stopping = new AbortController();
  let started = false;
  let stopWakeups: (() => Promise<void>) | undefined;

  const track = <T>(p: Promise<T>): Promise<T> => {
    running.add(p);
    p.finally(() => running.delete(p)).catch(() => {});
    return p;
  };

  async function claim(limit: number, callId: string | null): Promise<ClaimedJob[]> {
    const now = deps.clock.now();
    return claimJobs(deps.db, {
      now,
      limit,
      owner,
      leaseUntil: new Date(now.getTime() + leaseMs),
      stages,
      callId,
    });
  }

  /**
   * One run of one claimed job — the handler, then its outcome written under the lease — and the
   * chain it queued (see the chain below): returns how many runs that made.
   */
  async function run(first: ClaimedJob): Promise<number> {
    let n = 0;
    try {
      for (let job: ClaimedJob | undefined = first; job; n++) {
        if (n === 1) chained++;
        job = await runOne(job, n > 0);
      }
    } finally {
      if (n > 1) chained--;
    }
    return n;
  }

  /**
   * The chain: a run that queues the call's next stage (download → transcribe → analyse, each on
   * success) inserts it already leased to this runner when this runner has its handler (RunChain,
   * ./enqueue.ts) and has no more than `concurrency` runs in flight, or, past that (the public
   * listener's soon() runs — its downloads — are not capped), fewer than `concurrency` chained runs
   * (stages after the one claimed) in flight besides this one: the downloads in flight do not keep
   * the stages after them from the chain, and a burst still sends the rest to the workers (at most
   * `concurrency` transcriptions run here on top of theirs). The runner runs it as
   * soon as the run's outcome is written — no claim, no
   * NOTIFY, no other runner woken. The job row is the one a claim would have left (attempts 1, due
   * again at the lease's expiry), so a runner that dies before running it leaves it to lease expiry,
   * and its retries are a claimed job's. A run that does not end as written success hands the job it
   * leased back (due at once, for any runner's poll): its transaction may have rolled back the insert,
   * and then the hand-back finds nothing of this runner's to release.
   */
  function chainOf(
    job: ClaimedJob,
    isChained: boolean,
  ): { chain: RunChain; next: () => ClaimedJob | undefined } {
    let next: ClaimedJob | undefined;
    return {
      chain: {
        leaseFor: (stage, callId) =>
          callId === job.callId &&
          !next &&
          !stopping.signal.aborted &&
          handled.includes(stage) &&
          (running.size <= concurrency || chained - (isChained ? 1 : 0) < concurrency)
            ? { owner, leaseUntil: new Date(deps.clock.now().getTime() + leaseMs) }
            : null,
        leased: (j) => {
          next = j;
        },
      },
      next: () => next,
    };
  }

  /** One run of one job; answers the job its run leased to this runner next (the chain), if any. */
  async function runOne(job: ClaimedJob, isChained: boolean): Promise<ClaimedJob | undefined> {
    const handler = opts.handlers[job.stage]!;
    const lease = new AbortController();
    const signal = AbortSignal.any([lease.signal, stopping.signal]);
    const { chain, next } = chainOf(job, isChained);
    const handBack = async () => {
      const j = next();
      if (j) await releaseJob(deps.db, { job: j, owner, now: deps.clock.now() }).catch(() => {});
      return undefined;
    };
    // A failed renewal (the database unreachable) is only logged: the next beat tries again, and
    // the lease fences the run's writes if another runner took the job meanwhile.
    const stopHeartbeat = startHeartbeat(deps.clock, {
      periodMs: leaseMs / 3,
      tickMs: opts.tickMs,
      beat: async () => {
        const now = deps.clock.now();
        try {
          const mine = await extendLease(deps.db, {
            id: job.id,
            owner,
            attempts: job.attempts,
            leaseUntil: new Date(now.getTime() + leaseMs),
            now,
          });
          if (!mine) lease.abort(new LeaseLost(job));
        } catch (err) {
          deps.log.warn({ err: (err as Error).message, jobId: job.id }, 'processing lease renewal failed');
        }
      },
    });
    let outcome: StageOutcome | { kind: 'error'; err: unknown };
    try {
      outcome = await handler({ deps, job, signal, chain });
    } catch (err) {
      outcome = { kind: 'error', err };
    } finally {
      await stopHeartbeat();
    }
    if (outcome.kind === 'error' && stopping.signal.aborted) {
      // Interrupted by stop(), not failed: handed back at once, the run not counted.
      await releaseJob(deps.db, { job, owner, now: deps.clock.now() }).catch(() => {});
      return handBack();
    }
    let committed = false;
    try {
      await write(job, outcome);
      committed = true;
    } catch (err) {
      if (err instanceof LeaseLost) {
        deps.log.warn({ jobId: job.id, stage: job.stage, callId: job.callId }, err.message);
      } else {
        // The stage's own write failed (a database error, a constraint): a retryable failure of the
        // run; or it refused to store what it was given (RunCancelled): the run ends cancelled.
        try {
          await write(
            job,
            err instanceof RunCancelled ? { kind: 'cancelled', reason: err.reason } : { kind: 'error', err },
          );
        } catch (again) {
          deps.log.error(
            { err: (again as Error).message, jobId: job.id, stage: job.stage },
            'processing job outcome not written; the job runs again when its lease expires',
          );
        }
      }
    }
    if (outcome.kind === 'succeeded' && outcome.after) {
      try {
        await outcome.after(committed);
      } catch (err) {
        deps.log.error(
          { err: (err as Error).message, jobId: job.id, stage: job.stage, callId: job.callId },
          'processing stage: the step after its write failed',
        );
      }
    }
    if (!committed || outcome.kind !== 'succeeded' || stopping.signal.aborted) return handBack();
    return next();
  }

  /**
   * Writes a run's outcome under its lease and counts it twice: in the database, in the same
   * transaction (processing_job_outcomes: the fleet-wide callcap_processing_job_outcomes_total), and
   * after the commit in this process's prom-client counter callcap_processing_job_runs_total.
   * An outcome with a write of its own runs in a transaction: the call's lock, the lease's check, the
   * job row and the count in one statement (lockAndEndRun), then the write. One without (a wait, a
   * cancellation, a failure, a stage that had nothing to store) is one fenced statement, no transaction.
   */
  async function write(job: ClaimedJob, outcome: StageOutcome | { kind: 'error'; err: unknown }) {
    const { end, counted, stageWrite } = endOf(job, outcome);
    const now = deps.clock.now();
    if (stageWrite) {
      await deps.db.transaction(async (tx) => {
        // the call locked, the lease checked and the job row ended in one statement, then the write
        const call = await lockAndEndRun(tx, { job, owner, end, outcome: counted, now });
        await stageWrite(tx, call);
      });
    } else if (!(await endRun(deps.db, { job, owner, fence: true, end, outcome: counted, now }))) {
      throw new LeaseLost(job);
    }
    if (end.mode === 'finish' && outcome.kind === 'error') {
      deps.log.warn(
        { callId: job.callId, stage: job.stage, attempts: job.attempts, kind: end.errorKind },
        `processing stage ${end.state}; GET /admin/v1/calls/{id}/processing shows why, POST …/reprocess runs it again`,
      );
    }
    processingJobRuns.inc({ stage: job.stage, outcome: counted });
  }

  /** What a run's outcome writes: the job row's end, the outcome counted, and the stage's own write. */
  function endOf(
    job: ClaimedJob,
    outcome: StageOutcome | { kind: 'error'; err: unknown },
  ): { end: RunEnd; counted: JobOutcome; stageWrite?: StageWrite } {
    const finish = (
      state: 'succeeded' | 'failed' | 'needs_review' | 'cancelled',
      error: string | null,
      errorKind: string | null,
    ): RunEnd => ({
      mode: 'finish',
      state,
      error,
      errorKind,
    });
    switch (outcome.kind) {
      case 'succeeded':
        return { end: finish('succeeded', null, null), counted: 'done', stageWrite: outcome.write };
      case 'waiting':
        return { end: { mode: 'wait', at: outcome.until }, counted: 'wait' };
      case 'cancelled':
        return { end: finish('cancelled', outcome.reason, null), counted: 'cancelled' };
      case 'needs_review':
        return {
          end: finish('needs_review', operatorMessage(outcome.message), 'invalid_output'),
          counted: 'needs_review',
          stageWrite: outcome.write,
        };
      case 'error': {
        const { kind, message, retryAfterMs } = describe(outcome.err);
        const v = retryVerdict({
          kind,
          attempts: job.attempts,
          maxAttempts: deps.config.PROCESSING_MAX_ATTEMPTS,
          retryAfterMs,
          random: random(),
        });
        if (v.verdict === 'retry') {
          const at = new Date(deps.clock.now().getTime() + v.delayMs);
          return { end: { mode: 'retry', at, error: message, errorKind: kind }, counted: 'retry' };
        }
        const state = v.verdict === 'needs_review' ? 'needs_review' : 'failed';
        return { end: finish(state, message, kind), counted: state };
      }
    }
  }

  async function runCall(callId: string, leased?: ClaimedJob): Promise<number> {
    let n = 0;
    if (leased) {
      // inserted leased to this runner by the route that queued it (offer): no claim
      n += await run(leased);
      if (stages.length === 1) return n;
    }
    for (;;) {
      const [job] = await claim(1, callId);
      if (!job) return n;
      n += await run(job);
      // A runner of one stage (the public listener's downloads) has run the call's only job of it:
      // a (call, stage) has one row, and a run never leaves it due at once (a retry waits its
      // backoff), so claiming again would find nothing.
      if (stages.length === 1) return n;
    }
  }

  async function runOnce(): Promise<number> {
    const jobs = await claim(concurrency - running.size, null);
    const runs = await Promise.all(jobs.map((j) => track(run(j))));
    return runs.reduce((a, b) => a + b, 0);
  }

  /**
   * One claim round (src/queue.ts kickedRounds: one at a time, a kick during it runs one more):
   * claims up to the free slots and starts the runs; each finished run kicks again, and a claim
   * that filled every free slot claims again at once.
   */
  const rounds = kickedRounds({
    round: async () => {
      const free = concurrency - running.size;
      if (!started || free <= 0) return false;
      const jobs = await claim(free, null);
      for (const job of jobs) {
        // run() handles its own failures; the catch only keeps a bug from becoming an unhandled rejection
        track(run(job))
          .catch((err: Error) =>
            deps.log.error({ err: err?.message, jobId: job.id }, 'processing run crashed'),
          )
          .finally(() => kick());
      }
      return started && jobs.length === free;
    },
    onError: (err) =>
      deps.log.error({ err: err.message }, 'processing job claim failed; retrying at the next poll'),
  });

  function kick(): void {
    if (started) rounds.kick();
  }

  return {
    owner,
    async start() {
      if (started) return;
      started = true;
      stopWakeups = await startWakeups(deps, {
        channel: JOBS_CHANNEL,
        pollIntervalMs: opts.pollIntervalMs ?? POLL_INTERVAL_MS,
        kick,
      });
    },
    async stop() {
      started = false;
      await stopWakeups?.();
      stopping.abort(new Error('the job runner is stopping'));
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    soon(callId, leased) {
      if (stopping.signal.aborted) {
        // a job leased to this runner is handed back, due at once, instead of waiting out its lease
        if (leased) {
          track(releaseJob(deps.db, { job: leased, owner, now: deps.clock.now() })).catch(() => {});
        }
        return;
      }
      track(
        new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => runCall(callId, leased))
          .catch((err: Error) =>
            deps.log.error({ err: err.message, callId }, 'processing run failed; a worker picks the job up'),
          ),
      );
    },
    offer(callId) {
      let leased: ClaimedJob | undefined;
      return {
        chain: {
          leaseFor: (stage, id) =>
            id === callId && !leased && !stopping.signal.aborted && stages.includes(stage)
              ? { owner, leaseUntil: new Date(deps.clock.now().getTime() + leaseMs) }
              : null,
          leased: (j) => {
            leased = j;
          },
        },
        job: () => leased,
      };
    },
    runCall: (callId) => track(runCall(callId)),
    runOnce,
    drain: () => drainRuns(runOnce),
  };
}

/** A thrown error as the runner's retry rule sees it. Anything but a ProviderError is retryable. */
function describe(err: unknown): { kind: FailureKind; message: string; retryAfterMs?: number } {
  if (err instanceof ProviderError) {
    return {
      kind: err.kind,
      message: operatorMessage(`${err.provider}: ${err.message}`),
      retryAfterMs: err.retryAfterMs,
    };
  }
  return { kind: 'retryable', message: operatorMessage((err as Error)?.message ?? String(err)) };
}

export type { Stage };
