/**
 * What one webhook delivery attempt means (spec "Events → Delivery rules", "Webhook subscription
 * states", "Limits"): a pure rule, table-tested; the worker applies it inside a transaction.
 *
 * - 2xx → delivered; the subscription's consecutive counters reset.
 * - 401, 403, 422 → the delivery is dead-lettered at once (no retries) and an active subscription
 *   is paused at once.
 * - 410 → retried on the transient schedule (docs/webhooks.md: a receiver that answers 410 once may
 *   be mid-deploy); it counts toward the 50 consecutive failures, and a second consecutive 410 of
 *   the subscription pauses it. The delivery itself is not dead-lettered by the pause: it waits with
 *   every other queued delivery and goes out after re-verification.
 * - Anything else is transient: other statuses (3xx are never followed, 408, 429, 5xx…), time-outs,
 *   connection, DNS and TLS errors, refused addresses. 5 attempts in total; the retries come 2 min,
 *   5 min, 30 min and 2 h after the failed attempt; the fifth failure dead-letters ('max_attempts').
 * - 50 consecutive failures of one subscription (across its deliveries) pause it.
 *
 * Jitter: the 30 min and 2 h retries are delayed by an extra 0–10 % (30–33 min, 120–132 min), never
 * less than the spec's delay, so a receiver can rely on "not before"; the 2 and 5 min retries are
 * exact. A pause resets both counters, so a re-verified subscription starts counting afresh.
 *
 * Whether a reply pauses the subscription, and the paused_reason it gets, come from the subscription
 * state machine (./subscription-state.ts); this rule adds the counters and the delivery's fate.
 */
import {
  GONE_PAUSE_THRESHOLD,
  nextSubscriptionState,
  type SubscriptionState,
  type SubscriptionTransition,
  TRANSIENT_PAUSE_THRESHOLD,
} from './subscription-state.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Attempts in total, the first included (spec "Limits"). */
export const MAX_ATTEMPTS = 5;
/** Delay before retry n (n = 1…4), counted from the failed attempt. */
export const RETRY_DELAYS_MS: readonly number[] = [2 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR];
/** Retries from this index on (the 30 min and 2 h ones) get jitter. */
export const FIRST_JITTERED_RETRY = 2;
/** Largest extra delay of a jittered retry, as a fraction of its nominal delay. */
export const RETRY_JITTER = 0.1;
/** Consecutive failures of one subscription that pause it (the subscription state machine's rule). */
export const TRANSIENT_FAILURES_TO_PAUSE = TRANSIENT_PAUSE_THRESHOLD;
/** Consecutive 410 replies of one subscription that pause it. */
export const GONE_REPLIES_TO_PAUSE = GONE_PAUSE_THRESHOLD;
/** Replies that pause the subscription at once and dead-letter the delivery. */
export const REJECTING_STATUSES: ReadonlySet<number> = new Set([401, 403, 422]);

/** The outcome of one POST, as the HTTP client reports it. */
export type AttemptResult = { kind: 'response'; status: number } | { kind: 'error'; errorClass: string };

export type ReplyClass = 'success' | 'rejected' | 'gone' | 'transient';

export function classifyReply(r: AttemptResult): ReplyClass {
  if (r.kind === 'error') return 'transient';
  if (r.status >= 200 && r.status <= 299) return 'success';
  if (REJECTING_STATUSES.has(r.status)) return 'rejected';
  if (r.status === 410) return 'gone';
  return 'transient';
}

/** Short machine label of a failed attempt: 'http_503', 'timeout', 'connection'… */
export function failureLabel(r: AttemptResult): string {
  return r.kind === 'response' ? `http_${r.status}` : r.errorClass;
}

/**
 * Delay before the retry that follows failed attempt `attemptNumber` (1-based), or null when that
 * was the last attempt. `random` returns [0, 1) and is injected so tests pin the jitter.
 */
export function retryDelayMs(attemptNumber: number, random: () => number): number | null {
  if (attemptNumber >= MAX_ATTEMPTS) return null;
  const i = attemptNumber - 1;
  const base = RETRY_DELAYS_MS[i];
  if (i < FIRST_JITTERED_RETRY) return base;
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(base * (1 + RETRY_JITTER * r));
}

export interface SubscriptionCounters {
  consecutiveTransientFailures: number;
  consecutiveGone: number;
}

export type DeliveryNext =
  | { status: 'delivered' }
  | { status: 'pending'; nextAttemptAt: Date; reason: string }
  | { status: 'dead_lettered'; reason: string };

export interface AttemptDecision {
  reply: ReplyClass;
  delivery: DeliveryNext;
  /** The subscription's counters after this attempt. */
  counters: SubscriptionCounters;
  /** Set when this attempt pauses an active subscription; reason is a paused_reason value. */
  pause: { reason: string } | null;
}

export interface AttemptFacts {
  result: AttemptResult;
  /** 1-based number of the attempt just made. */
  attemptNumber: number;
  /** When the attempt was made (the clock, not the wall). */
  now: Date;
  counters: SubscriptionCounters;
  /** Only an active subscription can be paused (a paused one stays paused: one pause, one e-mail). */
  subscriptionState: SubscriptionState;
  random: () => number;
}

export function decideAttempt(f: AttemptFacts): AttemptDecision {
  const reply = classifyReply(f.result);
  const zero: SubscriptionCounters = { consecutiveTransientFailures: 0, consecutiveGone: 0 };
  if (reply === 'success') return { reply, delivery: { status: 'delivered' }, counters: zero, pause: null };
  const paused = (t: SubscriptionTransition) =>
    t.state === 'paused' && f.subscriptionState === 'active' ? { reason: String(t.pausedReason) } : null;

  const label = failureLabel(f.result);
  if (reply === 'rejected') {
    const status = f.result.kind === 'response' ? f.result.status : 0;
    const pause = paused(nextSubscriptionState(f.subscriptionState, { kind: 'delivery_rejected', status }));
    return {
      reply,
      delivery: { status: 'dead_lettered', reason: `receiver_rejected_${status}` },
      counters: pause ? zero : f.counters,
      pause,
    };
  }

  const counters: SubscriptionCounters = {
    consecutiveTransientFailures: f.counters.consecutiveTransientFailures + 1,
    consecutiveGone: reply === 'gone' ? f.counters.consecutiveGone + 1 : 0,
  };
  const pause =
    (reply === 'gone'
      ? paused(
          nextSubscriptionState(f.subscriptionState, {
            kind: 'delivery_gone',
            consecutiveGone: counters.consecutiveGone,
          }),
        )
      : null) ??
    paused(
      nextSubscriptionState(f.subscriptionState, {
        kind: 'transient_failure',
        consecutiveFailures: counters.consecutiveTransientFailures,
      }),
    );
  const delay = retryDelayMs(f.attemptNumber, f.random);
  const delivery: DeliveryNext =
    delay === null
      ? { status: 'dead_lettered', reason: 'max_attempts' }
      : { status: 'pending', nextAttemptAt: new Date(f.now.getTime() + delay), reason: label };
  return { reply, delivery, counters: pause ? zero : counters, pause };
}
