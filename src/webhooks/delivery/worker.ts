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
 * This file wires the parts and owns the wake-ups and stopping:
 * - ./claim-loop.ts claims ahead of the slots: up to 2.5 × concurrency rows held (in flight +
 *   ready), claiming again when no more than concurrency / 2 are ready, so a busy queue costs one
 *   claim per dozens of deliveries and no slot waits for a claim round trip; a wake-up on an idle
 *   worker claims at once.
 * - ./slot-pump.ts runs up to `concurrency` attempts (./attempt.ts) in flight. A ready row that
 *   waited past half its lease is dropped (another claim takes it when the lease expires); one that
 *   waited RECHECK_AFTER_MS is re-read before its request, so a delivery withdrawn meanwhile (its
 *   call erased, ./erasure.ts) is not sent.
 * - ./success-writer.ts writes successes in batches behind the requests, so a slot is free as soon
 *   as its reply is in (the rows stay leased until written; claiming pauses if the writer falls
 *   4 × concurrency behind). A subscription's outcomes are still written in the order their replies
 *   came in (./outcome-order.ts), so its consecutive counters count them in that order.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Deps } from '../../deps.ts';
import { createMailer, type Mailer } from '../../mail/mailer.ts';
import { drainRuns, startWakeups } from '../../queue.ts';
import { type AttemptContext, attemptDelivery } from './attempt.ts';
import { createClaimLoop } from './claim-loop.ts';
import { createWebhookClient, type WebhookClient } from './http-client.ts';
import { createOutcomeOrder } from './outcome-order.ts';
import { createSlotPump } from './slot-pump.ts';
import { releaseDeliveries } from './sql/claim-deliveries.ts';
import { createSuccessWriter } from './success-writer.ts';

export const DELIVERY_CHANNEL = 'webhook_deliveries';
/** In-flight requests per worker: enough to hide receiver latency, few enough for one DB pool. */
export const DEFAULT_CONCURRENCY = 64;
/** A claimed delivery is this worker's for 60 s: well above the 10 s request time-out plus writing. */
export const LEASE_MS = 60_000;
/** Poll for retries that fell due and for expired leases (notifications cover new work). */
export const POLL_INTERVAL_MS = 1_000;
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
  // lease_owner names the process (host and pid), so an operator can tell whose leases a row carries.
  const owner = opts.workerId ?? `worker-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const client =
    opts.client ??
    createWebhookClient({
      allowPrivateTargets: deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      timeoutMs: opts.timeoutMs,
    });
  const mailer = opts.mailer ?? createMailer(deps);
  const order = createOutcomeOrder();
  // A freed slot or a written success may owe the claim loop another round.
  const successes = createSuccessWriter({ deps, owner, order, onWritten: () => claims.freed() });
  const ctx: AttemptContext = {
    deps,
    owner,
    client,
    mailer,
    random: opts.random ?? Math.random,
    secrets: new Map(),
    recordSuccess: (item) => successes.record(item),
    failureTurn: (subscriptionId) => order.failure(subscriptionId),
  };
  const slots = createSlotPump({
    deps,
    concurrency,
    leaseMs,
    recheckAfterMs: opts.recheckAfterMs ?? RECHECK_AFTER_MS,
    attempt: (row, recheck) => attemptDelivery(ctx, row, { recheck }),
    onSlotFree: () => claims.freed(),
  });
  const claims = createClaimLoop({ deps, owner, concurrency, leaseMs, slots, successes });
  const { kick } = claims;
  let stopWakeups: (() => Promise<void>) | undefined;

  async function runOnce(): Promise<number> {
    const n = await claims.claim(concurrency - slots.inFlight - slots.runnable);
    await slots.idle();
    await successes.written();
    return n;
  }

  return {
    id: owner,
    async start() {
      if (claims.running) return;
      claims.start();
      stopWakeups = await startWakeups(deps, {
        channel: DELIVERY_CHANNEL,
        pollIntervalMs: opts.pollIntervalMs ?? POLL_INTERVAL_MS,
        kick,
      });
    },
    async stop() {
      const claimed = claims.stop();
      await stopWakeups?.();
      await claimed;
      // Claimed but not started: hand them back at once rather than when their leases expire.
      const unstarted = slots.takeUnstarted();
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
      await slots.allSettled();
      await successes.written();
      if (!opts.client) await client.close();
      if (!opts.mailer) await mailer.close();
    },
    runOnce,
    drain: () => drainRuns(runOnce),
  };
}
