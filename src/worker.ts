import { deleteExpiredRateLimitWindows } from './accounts/rate-limit-windows.ts';
import { processQueuedTranscripts } from './capture/pipeline.ts';
import { HOUR, MINUTE, SECOND } from './clock.ts';
import type { Deps } from './deps.ts';
import { createMailer } from './mail/mailer.ts';
import { startReconciler } from './webhooks/reconcile.ts';
import { expirePendingRotations } from './webhooks/rotation.ts';
import { createDeliveryWorker } from './webhooks/worker.ts';

/** Sweep of transcripts left queued (capture pipeline). */
const TRANSCRIPT_SWEEP_MS = 15 * SECOND;
/** Pending rotations expire after 24 h and retiring secrets after their 1 h grace: a minute is precise enough. */
const ROTATION_SWEEP_MS = MINUTE;
/** Rate-limit windows older than the previous UTC hour are garbage. */
const RATE_LIMIT_SWEEP_MS = 10 * MINUTE;

/** Runs job now and then every `ms`, never two runs at once; returns the function that stops it. */
function every(deps: Deps, name: string, ms: number, job: () => Promise<unknown>): () => Promise<void> {
  let current: Promise<unknown> = Promise.resolve();
  let busy = false;
  let stopped = false;
  const run = () => {
    if (busy || stopped) return;
    busy = true;
    current = job()
      .catch((err: Error) => deps.log.error({ job: name, err: err.message }, 'periodic job failed'))
      .finally(() => {
        busy = false;
      });
  };
  run();
  const timer = setInterval(run, ms);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await current;
  };
}

/**
 * Starts the background workers of the worker role: webhook deliveries (LISTEN + poll), webhook
 * reconciliation, and the periodic sweeps other areas export. Returns the function that stops them
 * all, waiting for attempts in flight.
 */
export async function startWorkers(deps: Deps): Promise<() => Promise<void>> {
  const mailer = createMailer(deps);
  const deliveries = createDeliveryWorker(deps, { concurrency: deps.config.WEBHOOK_CONCURRENCY, mailer });
  await deliveries.start();
  const stops = [
    startReconciler(deps, { windowMs: deps.config.WEBHOOK_RECONCILE_WINDOW_HOURS * HOUR, mailer }),
    every(deps, 'transcripts', TRANSCRIPT_SWEEP_MS, () => processQueuedTranscripts(deps)),
    every(deps, 'rotations', ROTATION_SWEEP_MS, () => expirePendingRotations(deps)),
    every(deps, 'rate-limit-windows', RATE_LIMIT_SWEEP_MS, () =>
      deleteExpiredRateLimitWindows(deps.db, deps.clock.now()),
    ),
  ];
  return async () => {
    await deliveries.stop();
    await Promise.all(stops.map((stop) => stop()));
    await mailer.close();
  };
}
