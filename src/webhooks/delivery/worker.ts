/**
 * The delivery worker (DESIGN.md "The queue is the deliveries table"). Several may run, in one or
 * many processes, against one PostgreSQL: the claim (FOR UPDATE SKIP LOCKED + lease) gives each
 * delivery to one worker at a time, and a crashed worker's rows come back when their lease expires.
 *
 * Wake-ups: LISTEN webhook_deliveries (emitEvent, resend and re-verification notify in their
 * transaction), so an idle queue delivers within milliseconds (a lost LISTEN connection is re-opened
 * with backoff, and the worker claims once when it is back); and a poll every POLL_INTERVAL_MS
 * for retries falling due and expired leases. Time rules read deps.clock only: tests drive a fake
 * clock and call runOnce()/drain() instead of waiting for the poll.
 *
 * Up to `concurrency` requests are in flight per worker. A slot is free again as soon as its reply
 * is in: successes are written in batches behind the requests (their rows stay leased until then;
 * claiming pauses if the writer falls 4 × concurrency behind). A subscription's outcomes are still
 * written in the order their replies came in (./outcome-order.ts), so its consecutive counters
 * count them in that order. Claims run ahead of the slots: the
 * worker holds up to 2.5 × concurrency rows (in flight + ready) and claims again when fewer than
 * concurrency / 2 are ready, so a busy queue costs one claim per dozens of deliveries and no slot
 * waits for a claim round trip; a wake-up on an idle worker claims at once. A ready row that waited
 * past half its lease is dropped (another claim takes it when the lease expires); one that waited
 * RECHECK_AFTER_MS is re-read before its request, so a delivery withdrawn meanwhile (its call
 * erased, src/webhooks/delivery/erasure.ts) is not sent.
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { createMailer, type Mailer } from '../../mail/mailer.ts';
import { type AttemptContext, attemptDelivery } from './attempt.ts';
import { createWebhookClient, type WebhookClient } from './http-client.ts';
import { createOutcomeOrder } from './outcome-order.ts';
import { type ClaimedDelivery, claimDeliveries, releaseDeliveries } from './sql/claim-deliveries.ts';
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
/**
 * A claimed row that waited at least this long for a request slot is re-read before it is sent
 * (one primary-key read): meanwhile its call may have been erased, or the row skipped. Rows sent
 * within this time of their claim are not: the claim itself just read them, and in a busy queue
 * rows wait far less than this, so the hot path stays at one claim per dozens of deliveries.
 */
export const RECHECK_AFTER_MS = 100;

export interface DeliveryWorkerOptions {
  concurrency?: number;
  leaseMs?: number;
  pollIntervalMs?: number;
  /** lease_owner written on claimed rows; random by default */
  workerId?: string;
  /** re-read a claimed row before its request when it waited this long (RECHECK_AFTER_MS) */
  recheckAfterMs?: number;
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
  const leaseMs = opts.leaseMs ?? LEASE_MS;
  const recheckAfterMs = opts.recheckAfterMs ?? RECHECK_AFTER_MS;
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
  const order = createOutcomeOrder();
  /** Attempts whose request is in flight (or whose failure is being recorded). */
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let claiming = false;
  let claimLoop: Promise<void> = Promise.resolve();
  let wakeAgain = false;
  let lastClaimFull = false;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;

  /** Successes handed to the batch writer and not yet written; their rows stay leased meanwhile. */
  const writes = new Set<Promise<void>>();
  const maxPendingWrites = concurrency * 4;
  const ctx: AttemptContext = {
    deps,
    owner,
    client,
    mailer,
    random: opts.random ?? Math.random,
    secrets: new Map(),
    recordSuccess(item) {
      const w: Promise<void> = order
        .success(item.subscriptionId, () => successes.add(item))
        .catch((err: Error) => {
          // The rows keep their leases and are delivered again when those expire (at-least-once).
          deps.log.error({ err: err.message, deliveries: 1 }, 'webhook success not recorded');
        })
        .finally(() => {
          writes.delete(w);
          if (running && (wakeAgain || lastClaimFull) && wantMore()) kick();
        });
      writes.add(w);
    },
    failureTurn: (subscriptionId) => order.failure(subscriptionId),
  };

  /** Claimed rows waiting for a request slot, with their lease expiry. */
  const ready: Array<{ row: ClaimedDelivery; leaseUntil: number }> = [];
  /**
   * Rows held in flight or ready: claims run ahead of the slots, so no slot waits for a claim. With
   * a refill below concurrency / 2 ready, a busy worker claims about `concurrency` rows at a time.
   */
  const capacity = Math.ceil(concurrency * 2.5);
  const wantMore = () =>
    writes.size < maxPendingWrites &&
    ready.length <= concurrency / 2 &&
    inFlight.size + ready.length < capacity;

  function launch(row: ClaimedDelivery, recheck: boolean): void {
    const p: Promise<void> = attemptDelivery(ctx, row, { recheck })
      .catch((err: Error) => {
        // The row keeps its lease and is attempted again when it expires (at-least-once).
        deps.log.error({ deliveryId: row.id, err: err.message }, 'webhook attempt not recorded');
      })
      .finally(() => {
        inFlight.delete(p);
        pump();
        if (running && (wakeAgain || lastClaimFull) && wantMore()) kick();
      });
    inFlight.add(p);
  }

  /**
   * Starts ready rows while slots are free; a row past half its lease is left for a later claim, a
   * row that waited RECHECK_AFTER_MS or more is re-read before its request.
   */
  function pump(): void {
    while (inFlight.size < concurrency && ready.length > 0) {
      const next = ready.shift()!;
      const now = deps.clock.now().getTime();
      if (now > next.leaseUntil - leaseMs / 2) continue;
      launch(next.row, now - (next.leaseUntil - leaseMs) >= recheckAfterMs);
    }
  }

  async function claim(limit: number): Promise<number> {
    if (limit <= 0) return 0;
    const now = deps.clock.now();
    const leaseUntil = now.getTime() + leaseMs;
    const rows = await claimDeliveries(deps.db, { now, limit, owner, leaseUntil: new Date(leaseUntil) });
    lastClaimFull = rows.length === limit;
    for (const row of rows) ready.push({ row, leaseUntil });
    pump();
    return rows.length;
  }

  async function claimAhead(): Promise<void> {
    try {
      do {
        wakeAgain = false;
        if (!wantMore()) {
          wakeAgain = true; // claim when slots free up
          break;
        }
        await claim(capacity - inFlight.size - ready.length);
      } while (running && (wakeAgain || lastClaimFull) && wantMore());
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
    claimLoop = claimAhead();
  }

  /** Resolves once nothing is ready, in flight or waiting to be written. */
  async function settled(): Promise<void> {
    for (pump(); inFlight.size > 0; pump()) await Promise.race(inFlight);
    await Promise.all([...writes]);
  }

  async function runOnce(): Promise<number> {
    const n = await claim(concurrency - inFlight.size - ready.length);
    await settled();
    return n;
  }

  return {
    id: owner,
    async start() {
      if (running) return;
      running = true;
      // After a lost LISTEN connection is back, claim once: notifications sent meanwhile are lost.
      unlisten = await deps.db.listen(DELIVERY_CHANNEL, () => kick(), { onReconnect: kick, log: deps.log });
      timer = setInterval(kick, opts.pollIntervalMs ?? POLL_INTERVAL_MS);
      kick();
    },
    async stop() {
      running = false;
      if (timer) clearInterval(timer);
      await unlisten?.();
      await claimLoop;
      // Claimed but not started: hand them back at once rather than when their leases expire.
      const unstarted = ready.splice(0).map((r) => r.row.id);
      if (unstarted.length > 0) {
        await releaseDeliveries(deps.db, { ids: unstarted, owner, now: deps.clock.now() }).catch(
          (err: Error) => {
            deps.log.warn(
              { err: err.message },
              'unstarted deliveries not released; their leases will expire',
            );
          },
        );
      }
      await Promise.allSettled([...inFlight]);
      await Promise.allSettled([...writes]);
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
