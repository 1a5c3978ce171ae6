import { deleteExpiredRateLimitWindows } from './accounts/rate-limit-windows.ts';
import { processQueuedTranscripts } from './capture/pipeline.ts';
import { runRetentionSweep } from './capture/retention.ts';
import { HOUR, MINUTE, SECOND } from './clock.ts';
import type { Deps } from './deps.ts';
import { createMailer, type Mailer } from './mail/mailer.ts';
import { type PeriodicJob, startPeriodicJobs } from './periodic.ts';
import { RECONCILE_INTERVAL_MS, reconcileDeliveries } from './webhooks/delivery/reconcile.ts';
import { createDeliveryWorker } from './webhooks/delivery/worker.ts';
import { expirePendingRotations } from './webhooks/subscriptions/rotation.ts';

/**
 * Periods of the worker's periodic jobs (docs/operations.md "Periodic jobs" lists them). Each is as
 * precise as the rule it serves needs; none is worth an operator setting (docs/decisions.md).
 */
export const JOB_PERIODS = {
  /** Scheduled deletions and retention_days: a deletion due at pending_deletion_at happens within a minute. */
  retention: MINUTE,
  /** Transcripts are left to their in-process run for 2 minutes (QUEUE_TAKEOVER_MS); then picked up promptly. */
  transcripts: 15 * SECOND,
  /** Pending rotations expire after 24 h and retiring secrets after their 1 h grace: a minute is precise enough. */
  rotations: MINUTE,
  /** Missing deliveries, stale held flags, stuck pause e-mails; each pass also ANALYZEs the queue. */
  reconciliation: RECONCILE_INTERVAL_MS,
  /** Rate-limit windows older than the previous UTC hour are garbage. */
  rateLimitWindows: 10 * MINUTE,
} as const;

/** The jobs of the worker role, in the order they run at start. */
export function periodicJobs(deps: Deps, mailer: Mailer): PeriodicJob[] {
  const windowMs = deps.config.WEBHOOK_RECONCILE_WINDOW_HOURS * HOUR;
  return [
    {
      name: 'retention',
      periodMs: JOB_PERIODS.retention,
      run: async () => {
        const r = await runRetentionSweep(deps);
        if (r.erased + r.recordingsDeleted > 0) deps.log.info(r, 'retention sweep deleted data');
      },
    },
    {
      name: 'transcripts',
      periodMs: JOB_PERIODS.transcripts,
      run: () => processQueuedTranscripts(deps),
    },
    {
      name: 'rotations',
      periodMs: JOB_PERIODS.rotations,
      run: () => expirePendingRotations(deps),
    },
    {
      name: 'reconciliation',
      periodMs: JOB_PERIODS.reconciliation,
      run: async () => {
        const r = await reconcileDeliveries(deps, { windowMs, mailer });
        if (r.deliveriesCreated + r.released + r.held + r.skippedDeleted + r.emailsDispatched > 0)
          deps.log.info(r, 'webhook reconciliation healed gaps');
      },
    },
    {
      name: 'rate-limit-windows',
      periodMs: JOB_PERIODS.rateLimitWindows,
      run: () => deleteExpiredRateLimitWindows(deps.db, deps.clock.now()),
    },
  ];
}

/**
 * Starts the worker role: webhook deliveries (LISTEN + poll) and the periodic jobs, each due by
 * deps.clock (a test moves a fake clock and sees them run). tickMs: how often the scheduler looks at
 * the clock (SCHEDULER_TICK_MS). Returns the function that stops everything, waiting for the
 * attempts and job runs in progress.
 */
export async function startWorkers(deps: Deps, opts: { tickMs?: number } = {}): Promise<() => Promise<void>> {
  const mailer = createMailer(deps);
  const deliveries = createDeliveryWorker(deps, { concurrency: deps.config.WEBHOOK_CONCURRENCY, mailer });
  await deliveries.start();
  const stopJobs = startPeriodicJobs(deps, periodicJobs(deps, mailer), opts);
  return async () => {
    await deliveries.stop();
    await stopJobs();
    await mailer.close();
  };
}
