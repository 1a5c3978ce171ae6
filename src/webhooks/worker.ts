/**
 * The delivery worker (DESIGN.md "The queue is the deliveries table"). Several may run, in one or
 * many processes, against one PostgreSQL: the claim (FOR UPDATE SKIP LOCKED + lease) gives each
 * delivery to one worker at a time, and a crashed worker's rows come back when their lease expires.
 *
 * Wake-ups: LISTEN webhook_deliveries (emitEvent, resend and re-verification notify in their
 * transaction), so an idle queue delivers within milliseconds; and a poll every POLL_INTERVAL_MS
 * for retries falling due and expired leases. Time rules read deps.clock only: tests drive a fake
 * clock and call runOnce()/drain() instead of waiting for the poll.
 *
 * Up to `concurrency` attempts are in flight per worker. Claims are batched: after a full claim the
 * worker claims again once a quarter of its slots are free, so a busy queue costs one claim query
 * per many deliveries, and a wake-up with free slots claims at once.
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.ts';
import { createMailer, type Mailer } from '../mail/mailer.ts';
import { attemptDelivery } from './attempt.ts';
import { createWebhookClient, type WebhookClient } from './http-client.ts';
import { type ClaimedDelivery, claimDeliveries } from './sql/claim-deliveries.ts';
import { completeDeliveries, type DeliverySuccess } from './sql/complete-delivery.ts';
import { createBatcher } from './success-batch.ts';

export const DELIVERY_CHANNEL = 'webhook_deliveries';
/** In-flight requests per worker: enough to hide receiver latency, few enough for one DB pool. */
export const DEFAULT_CONCURRENCY = 64;
/** A claimed delivery is this worker's for 60 s: well above the 10 s request time-out plus writing. */
export const LEASE_MS = 60_000;
/** Poll for retries that fell due and for expired leases (notifications cover new work). */
export const POLL_INTERVAL_MS = 1_000;
/** Largest batch of successes written by one statement. */
export const MAX_SUCCESS_BATCH = 500;

export interface DeliveryWorkerOptions {
  concurrency?: number;
  leaseMs?: number;
  pollIntervalMs?: number;
  /** lease_owner written on claimed rows; random by default */
  workerId?: string;
  /** request time-out of the default client (tests shorten it) */
  timeoutMs?: number;
  client?: WebhookClient;
  mailer?: Mailer;
  /** jitter source, [0, 1) */
  random?: () => number;
}

export interface DeliveryWorker {
  readonly id: string;
  /** LISTEN + poll until stop(). */
  start(): Promise<void>;
  /** Stops claiming, waits for in-flight attempts, releases what the worker created. */
  stop(): Promise<void>;
  /** One claim of due deliveries (up to the free slots) and all their attempts; returns how many. */
  runOnce(): Promise<number>;
  /** runOnce until nothing is due at the current clock; returns how many attempts were made. */
  drain(): Promise<number>;
}

export function createDeliveryWorker(deps: Deps, opts: DeliveryWorkerOptions = {}): DeliveryWorker {
  const concurrency = Math.max(1, opts.concurrency ?? DEFAULT_CONCURRENCY);
  const refillAt = Math.max(1, Math.floor(concurrency / 4));
  const leaseMs = opts.leaseMs ?? LEASE_MS;
  const owner = opts.workerId ?? `worker-${randomUUID()}`;
  const client =
    opts.client ??
    createWebhookClient({
      allowPrivateTargets: deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      timeoutMs: opts.timeoutMs,
    });
  const mailer = opts.mailer ?? createMailer(deps);
  const successes = createBatcher<DeliverySuccess>(async (items) => {
    await completeDeliveries(deps.db, { owner, now: deps.clock.now(), items });
  }, MAX_SUCCESS_BATCH);
  const ctx = { deps, owner, client, mailer, successes, random: opts.random ?? Math.random };

  const inFlight = new Set<Promise<void>>();
  let running = false;
  let claiming = false;
  let claimLoop: Promise<void> = Promise.resolve();
  let wakeAgain = false;
  let lastClaimFull = false;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;

  function launch(row: ClaimedDelivery): Promise<void> {
    const p = attemptDelivery(ctx, row)
      .catch((err: Error) => {
        // The row keeps its lease and is attempted again when it expires (at-least-once).
        deps.log.error({ deliveryId: row.id, err: err.message }, 'webhook attempt not recorded');
      })
      .finally(() => {
        inFlight.delete(p);
        if (running && (wakeAgain || (lastClaimFull && concurrency - inFlight.size >= refillAt))) kick();
      });
    inFlight.add(p);
    return p;
  }

  async function claim(): Promise<Promise<void>[]> {
    const free = concurrency - inFlight.size;
    if (free <= 0) return [];
    const now = deps.clock.now();
    const rows = await claimDeliveries(deps.db, {
      now,
      limit: free,
      owner,
      leaseUntil: new Date(now.getTime() + leaseMs),
    });
    lastClaimFull = rows.length === free;
    return rows.map(launch);
  }

  async function claimUntilFull(): Promise<void> {
    try {
      do {
        wakeAgain = false;
        if (inFlight.size >= concurrency) {
          wakeAgain = true; // claim when a slot frees
          break;
        }
        await claim();
      } while (running && (wakeAgain || (lastClaimFull && concurrency - inFlight.size >= refillAt)));
    } catch (err) {
      deps.log.error({ err: (err as Error).message }, 'webhook claim failed; retrying at the next poll');
    } finally {
      claiming = false;
    }
  }

  function kick(): void {
    if (!running) return;
    if (claiming) {
      wakeAgain = true;
      return;
    }
    // The flag is set before the loop starts: the loop may finish without ever awaiting.
    claiming = true;
    claimLoop = claimUntilFull();
  }

  async function runOnce(): Promise<number> {
    const started = await claim();
    await Promise.all(started);
    return started.length;
  }

  return {
    id: owner,
    async start() {
      if (running) return;
      running = true;
      unlisten = await deps.db.listen(DELIVERY_CHANNEL, () => kick());
      timer = setInterval(kick, opts.pollIntervalMs ?? POLL_INTERVAL_MS);
      kick();
    },
    async stop() {
      running = false;
      if (timer) clearInterval(timer);
      await unlisten?.();
      await claimLoop;
      await Promise.allSettled([...inFlight]);
      if (!opts.client) await client.close();
      if (!opts.mailer) await mailer.close();
    },
    runOnce,
    async drain() {
      let total = 0;
      for (;;) {
        const n = await runOnce();
        if (n === 0) return total;
        total += n;
      }
    },
  };
}
