import { type Clock, SECOND } from './clock.ts';
import type { Deps } from './deps.ts';

/** A job the worker role runs every `periodMs` (docs/operations.md "Periodic jobs"). */
export interface PeriodicJob {
  name: string;
  periodMs: number;
  run(): Promise<unknown>;
}

/**
 * How often, in real time, the scheduler looks at the clock. A job therefore starts at most this
 * late; one comparison per job per tick costs nothing.
 */
export const SCHEDULER_TICK_MS = SECOND;

/**
 * Runs each job at start and then whenever `deps.clock` says `periodMs` has passed since its last
 * run started. Due is decided by the clock, not by a timer per job, so a test that moves a fake
 * clock sees the job run at the next tick; a system clock stepped backwards makes every job due
 * at once instead of silencing it until the clock catches up. Never two runs of one job at once
 * (a run longer than its period delays the next one; missed periods are not made up). A failure is
 * logged and the job stays scheduled. Returns the function that stops scheduling and waits for the
 * runs in progress.
 */
export function startPeriodicJobs(
  deps: Pick<Deps, 'clock' | 'log'>,
  jobs: readonly PeriodicJob[],
  opts: { tickMs?: number } = {},
): () => Promise<void> {
  const stops = jobs.map((job) =>
    onTheClock(deps.clock, {
      periodMs: job.periodMs,
      firstRun: 'at-start',
      tickMs: opts.tickMs ?? SCHEDULER_TICK_MS,
      run: () =>
        Promise.resolve()
          .then(() => job.run())
          .then(
            () => undefined,
            (err: Error) =>
              deps.log.error({ job: job.name, err: err?.message ?? String(err) }, 'periodic job failed'),
          ),
    }),
  );
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}

/**
 * A heartbeat for as long as one piece of work runs (a processing job's lease,
 * src/capture/jobs/runner.ts): beat() runs one period after the start and then whenever `periodMs`
 * has passed on `clock` since the previous beat started, with the periodic jobs' rules (due by the
 * clock, looked at every `tickMs` of real time; never two beats at once). beat() handles its own
 * failures. Returns the function that stops it and waits for a beat in progress, so no beat lands
 * after the work's own final write.
 */
export function startHeartbeat(
  clock: Clock,
  p: { periodMs: number; beat: () => Promise<void>; tickMs?: number },
): () => Promise<void> {
  return onTheClock(clock, {
    periodMs: p.periodMs,
    firstRun: 'after-a-period',
    tickMs: p.tickMs ?? SCHEDULER_TICK_MS,
    run: p.beat,
  });
}

/** The one schedule of startPeriodicJobs and startHeartbeat; `run` must not reject. */
function onTheClock(
  clock: Clock,
  p: { periodMs: number; firstRun: 'at-start' | 'after-a-period'; tickMs: number; run: () => Promise<void> },
): () => Promise<void> {
  let lastStart: number | null = p.firstRun === 'at-start' ? null : clock.now().getTime();
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (stopped || running) return;
    const now = clock.now().getTime();
    const due = lastStart === null || now >= lastStart + p.periodMs || now < lastStart;
    if (!due) return;
    lastStart = now;
    running = Promise.resolve()
      .then(p.run)
      .finally(() => {
        running = null;
      });
  };
  tick();
  const timer = setInterval(tick, p.tickMs);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
