import { SECOND } from './clock.ts';
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
  const slots = jobs.map((job) => ({
    job,
    lastStart: null as number | null,
    running: null as Promise<void> | null,
  }));
  let stopped = false;
  const tick = () => {
    const now = deps.clock.now().getTime();
    for (const slot of slots) {
      if (stopped || slot.running) continue;
      const last = slot.lastStart;
      const due = last === null || now >= last + slot.job.periodMs || now < last;
      if (!due) continue;
      slot.lastStart = now;
      slot.running = Promise.resolve()
        .then(() => slot.job.run())
        .then(
          () => undefined,
          (err: Error) =>
            deps.log.error({ job: slot.job.name, err: err?.message ?? String(err) }, 'periodic job failed'),
        )
        .finally(() => {
          slot.running = null;
        });
    }
  };
  tick();
  const timer = setInterval(tick, opts.tickMs ?? SCHEDULER_TICK_MS);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await Promise.all(slots.map((s) => s.running));
  };
}
