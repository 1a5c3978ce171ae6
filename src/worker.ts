import { deleteExpiredIdempotencyKeys } from './accounts/idempotency.ts';
import { deleteExpiredRateLimitWindows } from './accounts/rate-limit-windows.ts';
import { createJobRunner } from './capture/jobs/runner.ts';
import { captureStageHandlers } from './capture/jobs/stages/index.ts';
import type { StageHandlers } from './capture/jobs/types.ts';
import { runRetentionSweep } from './capture/retention.ts';
import { telephonyStageHandlers } from './capture/telephony/download-stage.ts';
import { reconcileOutboundCalls } from './capture/telephony/twilio/outbound.ts';
import { HOUR, MINUTE } from './clock.ts';
import type { Deps } from './deps.ts';
import { createMailer, type Mailer } from './mail/mailer.ts';
import { type PeriodicJob, startPeriodicJobs } from './periodic.ts';
import { RECONCILE_INTERVAL_MS, reconcileDeliveries } from './webhooks/delivery/reconcile.ts';
import { createDeliveryWorker } from './webhooks/delivery/worker.ts';
import { expireListenSessions } from './webhooks/subscriptions/listen.ts';
import { expirePendingRotations } from './webhooks/subscriptions/rotation.ts';

/**
 * Periods of the worker's periodic jobs (docs/operations.md "Periodic jobs" lists them). Each is as
 * precise as the rule it serves needs; none is worth an operator setting (docs/decisions.md).
 */
export const JOB_PERIODS = {
  /** Scheduled deletions and retention_days: a deletion due at pending_deletion_at happens within a minute. */
  retention: MINUTE,
  /** Pending rotations expire after 24 h and retiring secrets after their 1 h grace: a minute is precise enough. */
  rotations: MINUTE,
  /** Missing deliveries, stale held flags, stuck pause e-mails; each pass also ANALYZEs the queue. */
  reconciliation: RECONCILE_INTERVAL_MS,
  /** Rate-limit windows older than the previous UTC hour are garbage. */
  rateLimitWindows: 10 * MINUTE,
  /** Outbound calls whose callbacks stopped: reconciliation_required becomes agent_only after 10 minutes. */
  outboundReconcile: MINUTE,
  /** `callcap listen` sessions whose stream has been gone for the grace period (a minute) are deleted. */
  listenSessions: MINUTE,
  /** Idempotency keys past their 24 hours (an expired key is already ignored when a request meets it). */
  idempotencyKeys: 10 * MINUTE,
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
        if (r.erased + r.recordingsDeleted + r.providerRecordingsDeleted > 0)
          deps.log.info(r, 'retention sweep deleted data');
      },
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
    {
      name: 'outbound-reconcile',
      periodMs: JOB_PERIODS.outboundReconcile,
      run: () => reconcileOutboundCalls(deps),
    },
    {
      name: 'listen-sessions',
      periodMs: JOB_PERIODS.listenSessions,
      run: async () => {
        const n = await expireListenSessions(deps);
        if (n > 0) deps.log.info({ sessions: n }, 'idle callcap listen sessions deleted');
      },
    },
    {
      name: 'idempotency-keys',
      periodMs: JOB_PERIODS.idempotencyKeys,
      run: () => deleteExpiredIdempotencyKeys(deps.db, deps.clock.now()),
    },
  ];
}

/** The processing stages the worker role runs: capture's, telephony's, and any `extra`. */
export function workerStageHandlers(extra?: StageHandlers): StageHandlers {
  return { ...captureStageHandlers(), ...telephonyStageHandlers(), ...extra };
}

/**
 * Starts the worker role: webhook deliveries (LISTEN + poll), the processing jobs (LISTEN + poll,
 * src/capture/jobs/) and the periodic jobs, each due by deps.clock (a test moves a fake clock and
 * sees them run). tickMs: how often the scheduler, and a running processing job's lease heartbeat,
 * look at the clock (SCHEDULER_TICK_MS).
 * stageHandlers: processing stages beyond capture's own — the telephony adapter's download stage
 * is plugged in here by the composition root (server.ts). Returns the function that stops
 * everything, waiting for the attempts and job runs in progress.
 */
export async function startWorkers(
  deps: Deps,
  opts: { tickMs?: number; stageHandlers?: StageHandlers; jobsPollIntervalMs?: number } = {},
): Promise<() => Promise<void>> {
  deps.capture.transcription?.warmUp?.();
  const mailer = createMailer(deps);
  const deliveries = createDeliveryWorker(deps, { concurrency: deps.config.WEBHOOK_CONCURRENCY, mailer });
  await deliveries.start();
  const processing = createJobRunner(deps, {
    handlers: workerStageHandlers(opts.stageHandlers),
    pollIntervalMs: opts.jobsPollIntervalMs,
    tickMs: opts.tickMs,
  });
  await processing.start();
  const stopJobs = startPeriodicJobs(deps, periodicJobs(deps, mailer), opts);
  return async () => {
    await deliveries.stop();
    await processing.stop();
    await stopJobs();
    await mailer.close();
  };
}
