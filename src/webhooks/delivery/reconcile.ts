/**
 * Reconciliation of recent gaps (spec "Delivery rules": "The service reconciles recent gaps within a
 * bounded window; it is not unlimited historical recovery"). The transactional outbox already makes
 * an event and its deliveries commit together, so a gap here is narrower. What this design can miss:
 *
 * 1. Missing delivery rows. An event's fan-out reads the subscriptions its transaction can see; a
 *    subscription whose verification committed concurrently is not among them, so an event created
 *    after that subscription's verification has no delivery to it. Healed: for every event created in
 *    the window (webhook.test excepted, it targets one subscription) and every subscription of the
 *    organization that is active or paused, not deleted, verified no later than the event, whose
 *    event_types match and — for deletion events — that received the call's content, a missing
 *    delivery is inserted (pending, due now). An erased call's events other than its deletion
 *    events are never healed: their content is gone and nothing of it is sent again. The unique (subscription_id, event_id) makes this
 *    idempotent and safe next to a concurrent fan-out.
 * 2. A held flag out of step with its subscription (the triggers of 0003 prevent it; this repairs a
 *    row written around them): released for active subscriptions, held for the others.
 * 3. Pending deliveries of a deleted subscription: skipped with reason 'subscription_deleted', so
 *    nothing stays pending forever and nothing is dropped silently.
 * 4. Pause e-mails left 'queued' by a crash between commit and send: dispatched again.
 *
 * Each pass also refreshes the statistics of webhook_deliveries (ANALYZE, a sample: cheap), so the
 * claim keeps its index plan after a burst even where autovacuum is off; on PGlite, which has no
 * autovacuum at all, it also VACUUMs the table so dead queue rows do not pile up.
 *
 * Expired leases are not a gap: a claim moves next_attempt_at to the lease expiry, so a crashed
 * worker's rows are simply due again then and the ordinary claim takes them.
 */
import { HOUR, MINUTE } from '../../clock.ts';
import type { Deps } from '../../deps.ts';
import type { Mailer } from '../../mail/mailer.ts';
import { DELETION_EVENT_TYPES } from '../outbox/outbox.ts';

/** Events older than this are never reconciled (default; WEBHOOK_RECONCILE_WINDOW_HOURS overrides). */
export const RECONCILE_WINDOW_MS = 72 * HOUR;
/** How often the worker process runs a reconciliation pass. */
export const RECONCILE_INTERVAL_MS = 5 * MINUTE;
/** Missing deliveries inserted per statement; the pass loops until a batch comes back short. */
export const RECONCILE_BATCH = 1000;

export const HEAL_MISSING_SQL = `
INSERT INTO webhook_deliveries (id, organization_id, subscription_id, event_id, event_type, status,
                                next_attempt_at, created_at, updated_at)
SELECT gen_random_uuid(), e.organization_id, s.id, e.id, e.event_type, 'pending', $3, $3, $3
  FROM events e
  JOIN webhook_subscriptions s
    ON s.organization_id = e.organization_id AND s.environment = e.environment
   AND s.deleted_at IS NULL AND s.state IN ('active', 'paused')
   AND s.last_verified_at IS NOT NULL AND s.last_verified_at <= e.created_at
   AND (cardinality(s.event_types) = 0 OR e.event_type = ANY (s.event_types))
 WHERE e.created_at >= $1 AND e.created_at <= $2 AND e.event_type <> 'webhook.test'
   AND (e.event_type <> ALL ($4::text[]) OR EXISTS (
         SELECT 1 FROM webhook_call_reach r WHERE r.subscription_id = s.id AND r.call_id = e.call_id))
   AND (e.event_type = ANY ($4::text[]) OR e.call_id IS NULL OR NOT EXISTS (
         SELECT 1 FROM calls c WHERE c.id = e.call_id AND c.erased_at IS NOT NULL))
   AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = s.id AND d.event_id = e.id)
 ORDER BY s.id, e.id
 LIMIT $5
ON CONFLICT (subscription_id, event_id) DO NOTHING`;

export const RELEASE_HELD_SQL = `
UPDATE webhook_deliveries d SET held = false
  FROM webhook_subscriptions s
 WHERE s.state = 'active' AND s.deleted_at IS NULL AND s.kind = 'webhook' AND d.subscription_id = s.id
   AND d.status = 'pending' AND d.held`;

export const HOLD_STRAYS_SQL = `
UPDATE webhook_deliveries d SET held = true
  FROM webhook_subscriptions s
 WHERE d.status = 'pending' AND NOT d.held AND s.id = d.subscription_id
   AND (s.state <> 'active' OR s.deleted_at IS NOT NULL OR s.kind = 'cli')`;

export const SKIP_DELETED_SQL = `
UPDATE webhook_deliveries d
   SET status = 'skipped', reason = 'subscription_deleted', lease_owner = NULL, lease_expires_at = NULL,
       updated_at = $1
  FROM webhook_subscriptions s
 WHERE s.deleted_at IS NOT NULL AND d.subscription_id = s.id AND d.status = 'pending'`;

export interface ReconcileReport {
  deliveriesCreated: number;
  released: number;
  held: number;
  skippedDeleted: number;
  emailsDispatched: number;
}

export async function reconcileDeliveries(
  deps: Pick<Deps, 'db' | 'clock'>,
  opts: { windowMs?: number; mailer?: Mailer } = {},
): Promise<ReconcileReport> {
  const now = deps.clock.now();
  const from = new Date(now.getTime() - (opts.windowMs ?? RECONCILE_WINDOW_MS));
  let deliveriesCreated = 0;
  for (;;) {
    const r = await deps.db.query(HEAL_MISSING_SQL, [
      from,
      now,
      now,
      [...DELETION_EVENT_TYPES],
      RECONCILE_BATCH,
    ]);
    deliveriesCreated += r.rowCount;
    if (r.rowCount < RECONCILE_BATCH) break;
  }
  const released = (await deps.db.query(RELEASE_HELD_SQL)).rowCount;
  const held = (await deps.db.query(HOLD_STRAYS_SQL)).rowCount;
  const skippedDeleted = (await deps.db.query(SKIP_DELETED_SQL, [now])).rowCount;
  if (deliveriesCreated > 0 || released > 0)
    await deps.db.query(`SELECT pg_notify('webhook_deliveries', '')`);
  const emailsDispatched = opts.mailer ? await opts.mailer.dispatchStale() : 0;
  await deps.db.query(
    deps.db.kind === 'pglite' ? 'VACUUM (ANALYZE) webhook_deliveries' : 'ANALYZE webhook_deliveries',
  );
  return { deliveriesCreated, released, held, skippedDeleted, emailsDispatched };
}

/** Runs a pass at start and every RECONCILE_INTERVAL_MS; returns the function that stops it. */
export function startReconciler(
  deps: Pick<Deps, 'db' | 'clock' | 'log'>,
  opts: { windowMs?: number; intervalMs?: number; mailer?: Mailer } = {},
): () => Promise<void> {
  let current: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const run = () => {
    if (stopped) return;
    current = reconcileDeliveries(deps, opts)
      .then((r) => {
        if (r.deliveriesCreated + r.released + r.held + r.skippedDeleted + r.emailsDispatched > 0) {
          deps.log.info(r, 'webhook reconciliation healed gaps');
        }
      })
      .catch((err: Error) => deps.log.error({ err: err.message }, 'webhook reconciliation failed'));
  };
  run();
  const timer = setInterval(run, opts.intervalMs ?? RECONCILE_INTERVAL_MS);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await current;
  };
}
