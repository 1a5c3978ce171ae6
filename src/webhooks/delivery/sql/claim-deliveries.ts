import type { Queryable } from '../../../db/types.ts';
import type { Environment } from '../../../domain/tenant.ts';
import type { LeaseClaim } from '../../../queue.ts';

/**
 * The claim: one statement (graphile-worker's getJobs shape). Picks due pending deliveries in
 * next_attempt_at order from the claim index, skipping rows another worker is claiming right now
 * (FOR UPDATE SKIP LOCKED), and leases them: lease_owner/lease_expires_at, and next_attempt_at moved
 * to the lease expiry. That last move keeps in-flight rows out of the due range of the claim index,
 * and makes a crashed worker's rows due again exactly when their lease expires — no sweeper. The
 * lease condition is repeated for rows a resend re-queued while a stale lease was still set.
 *
 * Only deliveries of active subscriptions: `NOT d.held` is the index's view of it (kept by the 0003
 * triggers). `due` reads one table on purpose: joined with webhook_subscriptions there, the planner
 * could drive the claim from the subscriptions and sort every pending row (seen with fresh
 * statistics on a 20,000-row burst: 8 ms per claim instead of 0.1 ms). The subscription is checked
 * by primary key in `claimed` instead: a row whose flag disagrees (written around the triggers) is
 * not leased but held, so it is never sent to a paused subscription.
 *
 * `exclude` ($5) names subscriptions this worker already holds its allowance of (./slot-pump.ts):
 * their due rows are passed over, so the claim fills with other customers' work. Empty on a healthy
 * queue, where the condition costs nothing. `perSubscription` ($6), while several subscriptions
 * share the worker, caps the rows any one of them gets from a claim (DUE_PER_SUBSCRIPTION): without
 * it, a claim that passes over all but one subscription fills with that one's rows.
 *
 * Returns what an attempt needs: the stored body bytes, the URL, and the encrypted signing secret —
 * the delivery's own secret_id for a rotation test, else the subscription's active secret.
 *
 * The claim commits with synchronous_commit off (set_config(…, true) in its output: local to this
 * one statement's transaction, evaluated for every leased row): it only writes leases, and a lease
 * lost in a database crash just means the row is due again — the at-least-once retry we promise
 * anyway. That saves a WAL flush (~4 ms on the benchmark machine) between an event and its POST,
 * in one round trip.
 */
const DUE_WHERE = `d.status = 'pending' AND NOT d.held
     AND d.next_attempt_at <= $1
     AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1)`;

/** The due rows in order, up to $2, leaving out the subscriptions in $5. */
const DUE_IN_ORDER = `due AS (
  SELECT d.id
    FROM webhook_deliveries d
   WHERE ${DUE_WHERE}
     AND d.subscription_id <> ALL ($5::uuid[])
   ORDER BY d.next_attempt_at
   LIMIT $2
   FOR UPDATE SKIP LOCKED
)`;

/**
 * The same, taking at most $6 rows of any one subscription: from the first 4 × $2 due rows in
 * order (unlocked: a window function cannot sit beside FOR UPDATE), the first $6 of each
 * subscription, then those rows locked, re-checked and skipped when another worker holds them.
 */
const DUE_PER_SUBSCRIPTION = `candidates AS (
  SELECT d.id, d.subscription_id, d.next_attempt_at
    FROM webhook_deliveries d
   WHERE ${DUE_WHERE}
     AND d.subscription_id <> ALL ($5::uuid[])
   ORDER BY d.next_attempt_at
   LIMIT $2 * 4
), picked AS (
  SELECT id FROM (
    SELECT id, next_attempt_at, row_number() OVER (PARTITION BY subscription_id ORDER BY next_attempt_at) AS n
      FROM candidates) c
   WHERE n <= $6
   ORDER BY next_attempt_at
   LIMIT $2
), due AS (
  SELECT d.id
    FROM webhook_deliveries d
   WHERE d.id IN (SELECT id FROM picked) AND ${DUE_WHERE}
   FOR UPDATE SKIP LOCKED
)`;

const CLAIM_REST = `, claimed AS (
  UPDATE webhook_deliveries d
     SET lease_owner = CASE WHEN s.live THEN $3 END,
         lease_expires_at = CASE WHEN s.live THEN $4::timestamptz END,
         next_attempt_at = CASE WHEN s.live THEN $4::timestamptz ELSE d.next_attempt_at END,
         held = NOT s.live,
         updated_at = $1
    FROM due, (SELECT id, state = 'active' AND deleted_at IS NULL AND kind = 'webhook' AS live FROM webhook_subscriptions) s
   WHERE d.id = due.id AND s.id = d.subscription_id
  RETURNING d.id, d.organization_id, d.subscription_id, d.event_id, d.attempts, d.secret_id, s.live
)
SELECT c.id, c.organization_id, c.subscription_id, c.event_id, c.attempts, c.secret_id AS rotation_secret_id,
       e.event_type, e.call_id, e.body, e.environment,
       s.url,
       k.id AS signing_secret_id, k.ciphertext AS signing_secret_ciphertext,
       set_config('synchronous_commit', 'off', true) AS async_commit
  FROM claimed c
  JOIN events e ON e.id = c.event_id
  JOIN webhook_subscriptions s ON s.id = c.subscription_id
  LEFT JOIN LATERAL (
    SELECT k.id, k.ciphertext
      FROM webhook_secrets k
     WHERE k.subscription_id = c.subscription_id
       AND CASE WHEN c.secret_id IS NULL THEN k.status = 'active' ELSE k.id = c.secret_id END
     ORDER BY k.activated_at DESC NULLS LAST, k.created_at DESC
     LIMIT 1
  ) k ON true
 WHERE c.live`;

export const CLAIM_DELIVERIES_SQL = `WITH ${DUE_IN_ORDER}${CLAIM_REST}`;
export const CLAIM_DELIVERIES_PER_SUBSCRIPTION_SQL = `WITH ${DUE_PER_SUBSCRIPTION}${CLAIM_REST}`;

export interface ClaimedDelivery {
  id: string;
  organizationId: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  callId: string | null;
  /** events.body: the exact bytes to sign and send */
  body: string;
  /** the event's data environment: the service-environment header */
  environment: Environment;
  url: string;
  /** attempts made before this one */
  attempts: number;
  /** set on a rotation test: sign with this secret and send service-secret-rotation-id */
  rotationSecretId: string | null;
  signingSecretId: string | null;
  signingSecretCiphertext: string | null;
}

interface Row {
  id: string;
  organization_id: string;
  subscription_id: string;
  event_id: string;
  attempts: number;
  rotation_secret_id: string | null;
  event_type: string;
  call_id: string | null;
  body: string;
  environment: Environment;
  url: string;
  signing_secret_id: string | null;
  signing_secret_ciphertext: string | null;
}

export async function claimDeliveries(
  db: Queryable,
  p: LeaseClaim & {
    exclude?: readonly string[];
    /** At most this many rows of any one subscription (unset, or not below `limit`: no such cap). */
    perSubscription?: number;
  },
): Promise<ClaimedDelivery[]> {
  const params: unknown[] = [p.now, p.limit, p.owner, p.leaseUntil, p.exclude ?? []];
  const capped = p.perSubscription !== undefined && p.perSubscription < p.limit;
  if (capped) params.push(p.perSubscription);
  const { rows } = await db.query<Row>(
    capped ? CLAIM_DELIVERIES_PER_SUBSCRIPTION_SQL : CLAIM_DELIVERIES_SQL,
    params,
  );
  return rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    subscriptionId: r.subscription_id,
    eventId: r.event_id,
    eventType: r.event_type,
    callId: r.call_id,
    body: r.body,
    environment: r.environment,
    url: r.url,
    attempts: r.attempts,
    rotationSecretId: r.rotation_secret_id,
    signingSecretId: r.signing_secret_id,
    signingSecretCiphertext: r.signing_secret_ciphertext,
  }));
}

/** Hands claimed rows that were never attempted back to the queue (a worker stopping). */
export async function releaseDeliveries(
  db: Queryable,
  p: { ids: readonly string[]; owner: string; now: Date },
): Promise<number> {
  const r = await db.query(
    `UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = $3, updated_at = $3
      WHERE id = ANY ($1::uuid[]) AND lease_owner = $2 AND status = 'pending'`,
    [p.ids, p.owner, p.now],
  );
  return r.rowCount;
}

/**
 * Whether a claimed row is still this worker's to send: pending under its lease. A row that waited
 * for a request slot is re-read with this before its POST (src/webhooks/delivery/worker.ts), so a delivery
 * skipped meanwhile (its call erased, an emergency rotation, its subscription deleted) is not sent.
 */
export async function stillLeased(db: Queryable, p: { id: string; owner: string }): Promise<boolean> {
  const r = await db.query(
    `SELECT 1 FROM webhook_deliveries WHERE id = $1 AND status = 'pending' AND lease_owner = $2`,
    [p.id, p.owner],
  );
  return r.rowCount > 0;
}
