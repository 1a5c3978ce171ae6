import type { Queryable } from '../../../db/types.ts';

/**
 * Successful attempts, written in batches (graphile-worker's completeJobs shape): the worker buffers
 * the 2xx results that finish close together and writes them with one statement — the delivery rows
 * (only while this worker still holds their lease), one webhook_attempts row each, and the
 * webhook_call_reach rows that later let deletion events through.
 *
 * `d.id = ANY ($1)` drives the update by primary key whatever the table statistics say (with stale
 * statistics the planner otherwise scanned every pending row through the partial index).
 *
 * A row that is no longer this worker's (its call was erased while the request was out — eraseCall
 * skips it under a row lock, so the UPDATE waits for that commit and then leaves the row alone — or
 * its lease was lost) keeps its status; its attempt is logged without the reply text, which may echo
 * an erased call's content. The reach row is still written: the content did reach the subscription,
 * so the call's deletion events are owed to it (reconciliation creates them).
 *
 * A success resets its subscription's consecutive counters, judged when it is written, not when the
 * delivery was claimed (the counters may have grown meanwhile) — in the same statement, so the hot
 * path stays one round trip. The `reset` CTE runs first (the `done` CTE waits for it through its
 * scalar subquery): the subscriptions are locked in id order before any delivery row, the order every
 * other writer uses (fan-out share-locks subscriptions in id order; a failure or a state change locks
 * the subscription, then its deliveries), so waiting for a lock cannot deadlock. It waits for a
 * subscription locked by another transaction rather than skipping it (a skipped reset loses the
 * success from the count). Only subscriptions whose counters are non-zero are locked and written:
 * rows that do not match are neither locked nor waited for, so a healthy subscription's successes
 * cost one index probe per batch.
 *
 * The batch commits with synchronous_commit off (set_config(…, true) in the statement: local to its
 * transaction, so no wait for the WAL flush, and one round trip). If the database itself
 * crashes within the last fraction of a second, a success can be lost: the row is still pending under
 * an expired lease and is delivered again — a duplicate, which at-least-once delivery allows and
 * receivers dedupe on event_id. Failures (pauses, e-mails, dead letters) commit durably.
 */
export const COMPLETE_DELIVERIES_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::timestamptz[], $6::int[], $7::int[],
                       $8::text[], $9::uuid[], $10::bigint[], $11::uuid[])
    AS t(delivery_id, subscription_id, organization_id, attempt_number, started_at, duration_ms, status,
         snippet, secret_id, signature_ts, reach_call_id)
), reset AS (
  UPDATE webhook_subscriptions s
     SET consecutive_transient_failures = 0, consecutive_gone = 0
    FROM (SELECT id FROM webhook_subscriptions
           WHERE id = ANY ($2::uuid[]) AND (consecutive_transient_failures > 0 OR consecutive_gone > 0)
           ORDER BY id FOR NO KEY UPDATE) x
   WHERE s.id = x.id
  RETURNING s.id
), done AS (
  UPDATE webhook_deliveries d
     SET status = 'delivered', attempts = i.attempt_number, delivered_at = $12, updated_at = $12,
         lease_owner = NULL, lease_expires_at = NULL, reason = NULL,
         last_response_status = i.status, last_error = NULL
    FROM input i
   WHERE d.id = ANY ($1::uuid[]) AND d.id = i.delivery_id AND d.status = 'pending' AND d.lease_owner = $13
     AND (SELECT count(*) FROM reset) >= 0
  RETURNING d.id
), attempts AS (
  INSERT INTO webhook_attempts (id, delivery_id, organization_id, attempt_number, started_at, duration_ms,
                                response_status, error_class, response_snippet, secret_id, signature_timestamp)
  SELECT gen_random_uuid(), i.delivery_id, i.organization_id, i.attempt_number, i.started_at, i.duration_ms,
         i.status, NULL, CASE WHEN done.id IS NOT NULL THEN i.snippet END, i.secret_id, i.signature_ts
    FROM input i LEFT JOIN done ON done.id = i.delivery_id
), reach AS (
  INSERT INTO webhook_call_reach (subscription_id, call_id, organization_id, first_delivered_at)
  SELECT DISTINCT i.subscription_id, i.reach_call_id, i.organization_id, $12::timestamptz
    FROM input i WHERE i.reach_call_id IS NOT NULL
  ON CONFLICT (subscription_id, call_id) DO NOTHING
)
SELECT count(*)::int AS n, set_config('synchronous_commit', 'off', true) AS async_commit FROM done`;

export interface DeliverySuccess {
  deliveryId: string;
  subscriptionId: string;
  organizationId: string;
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  status: number;
  snippet: string;
  secretId: string;
  signatureTimestamp: number;
  /** the call whose content reached the subscription (call.* events other than deletions), else null */
  reachCallId: string | null;
}

/** Returns how many delivery rows were marked delivered (a row whose lease was lost is not). */
export async function completeDeliveries(
  db: Queryable,
  p: { owner: string; now: Date; items: readonly DeliverySuccess[] },
): Promise<number> {
  const it = p.items;
  const params = [
    it.map((s) => s.deliveryId),
    it.map((s) => s.subscriptionId),
    it.map((s) => s.organizationId),
    it.map((s) => s.attemptNumber),
    it.map((s) => s.startedAt.toISOString()),
    it.map((s) => s.durationMs),
    it.map((s) => s.status),
    it.map((s) => s.snippet),
    it.map((s) => s.secretId),
    it.map((s) => s.signatureTimestamp),
    it.map((s) => s.reachCallId),
    p.now,
    p.owner,
  ];
  const r = await db.query<{ n: number }>(COMPLETE_DELIVERIES_SQL, params);
  return r.rows[0]?.n ?? 0;
}
