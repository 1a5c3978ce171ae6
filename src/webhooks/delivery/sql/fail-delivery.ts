import type { Queryable } from '../../../db/types.ts';
import type { AttemptDecision, SubscriptionCounters } from '../../../domain/delivery-outcome.ts';
import type { SubscriptionState } from '../../../domain/subscription-state.ts';

/**
 * A failed attempt, applied in the caller's transaction. The backoff is not computed in SQL (as
 * graphile-worker's failJobs does) because ours is a table with jitter: the pure rule
 * `decideAttempt` (src/domain/delivery-outcome.ts) gets the subscription's counters, read here under
 * a row lock, and its decision — next_attempt_at, dead-letter reason, new counters, pause — comes
 * back as parameters of the UPDATEs. Order: subscription first, then the delivery (the same order as
 * a pause or re-verification, whose trigger locks the subscription and then its pending deliveries).
 *
 * A delivery that is no longer this worker's when the outcome is written (its call was erased
 * meanwhile — eraseCall skips it under a row lock — or its lease was lost) is not changed, and its
 * attempt is logged without the reply text: the reply may echo an erased call's content. The
 * delivery UPDATE waits for a concurrent erase to commit, so the attempt row is written knowing it.
 */
export const LOCK_SUBSCRIPTION_SQL = `
SELECT state, deleted_at, url, consecutive_transient_failures, consecutive_gone
  FROM webhook_subscriptions WHERE id = $1 FOR NO KEY UPDATE`;

export const UPDATE_SUBSCRIPTION_SQL = `
UPDATE webhook_subscriptions
   SET consecutive_transient_failures = $2, consecutive_gone = $3,
       state = CASE WHEN $4::text IS NULL THEN state ELSE 'paused' END,
       paused_reason = CASE WHEN $4::text IS NULL THEN paused_reason ELSE $4::text END,
       paused_at = CASE WHEN $4::text IS NULL THEN paused_at ELSE $5::timestamptz END,
       updated_at = CASE WHEN $4::text IS NULL THEN updated_at ELSE $5::timestamptz END
 WHERE id = $1`;

export const FAIL_DELIVERY_SQL = `
UPDATE webhook_deliveries
   SET status = $3, attempts = $4, next_attempt_at = coalesce($5, next_attempt_at), reason = $6,
       last_response_status = $7, last_error = $8, lease_owner = NULL, lease_expires_at = NULL, updated_at = $9
 WHERE id = $1 AND status = 'pending' AND lease_owner = $2`;

export const INSERT_ATTEMPT_SQL = `
INSERT INTO webhook_attempts (id, delivery_id, organization_id, attempt_number, started_at, duration_ms,
                              response_status, error_class, response_snippet, secret_id, signature_timestamp)
VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;

export interface FailedAttempt {
  deliveryId: string;
  subscriptionId: string;
  organizationId: string;
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  errorClass: string | null;
  /** response snippet, or the error message when there was no response */
  snippet: string | null;
  secretId: string | null;
  signatureTimestamp: number | null;
}

export interface SubscriptionAtFailure {
  /** a deleted subscription reads as 'inactive': it can no longer be paused */
  state: SubscriptionState;
  url: string;
  counters: SubscriptionCounters;
}

export async function failDelivery(
  tx: Queryable,
  p: {
    owner: string;
    now: Date;
    attempt: FailedAttempt;
    decide: (sub: SubscriptionAtFailure) => AttemptDecision;
  },
): Promise<{ decision: AttemptDecision; url: string; updated: boolean }> {
  const a = p.attempt;
  const sub = await tx.query<{
    state: string;
    deleted_at: Date | null;
    url: string;
    consecutive_transient_failures: number;
    consecutive_gone: number;
  }>(LOCK_SUBSCRIPTION_SQL, [a.subscriptionId]);
  const s = sub.rows[0];
  const decision = p.decide({
    state: s.deleted_at === null ? (s.state as SubscriptionState) : 'inactive',
    url: s.url,
    counters: {
      consecutiveTransientFailures: s.consecutive_transient_failures,
      consecutiveGone: s.consecutive_gone,
    },
  });
  await tx.query(UPDATE_SUBSCRIPTION_SQL, [
    a.subscriptionId,
    decision.counters.consecutiveTransientFailures,
    decision.counters.consecutiveGone,
    decision.pause?.reason ?? null,
    p.now,
  ]);
  const d = decision.delivery;
  const upd = await tx.query(FAIL_DELIVERY_SQL, [
    a.deliveryId,
    p.owner,
    d.status,
    a.attemptNumber,
    d.status === 'pending' ? d.nextAttemptAt : null,
    d.status === 'delivered' ? null : d.reason,
    a.responseStatus,
    a.errorClass ? `${a.errorClass}${a.snippet ? `: ${a.snippet}` : ''}`.slice(0, 500) : null,
    p.now,
  ]);
  const updated = upd.rowCount > 0;
  await tx.query(INSERT_ATTEMPT_SQL, [
    a.deliveryId,
    a.organizationId,
    a.attemptNumber,
    a.startedAt,
    a.durationMs,
    a.responseStatus,
    a.errorClass,
    updated ? a.snippet : null,
    a.secretId,
    a.signatureTimestamp,
  ]);
  return { decision, url: s.url, updated };
}
