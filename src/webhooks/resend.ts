import { DAY } from '../clock.ts';
import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import type { SubscriptionState } from '../domain/subscription-state.ts';
import { AppError, badRequest, notFound } from '../errors.ts';
import { wakeWorkers } from './handshake.ts';

/**
 * Resend from the delivery log (spec "Authentication" 11, "Webhook subscription states"): a
 * dead-lettered or skipped delivery goes out again with the SAME event_id and the stored body. The
 * row itself is reset (one row per subscription and event), so there is never a second copy in the
 * queue. A paused (or not yet verified) subscription's resends wait until it is re-verified.
 */
export const RESENDABLE = ['dead_lettered', 'skipped'] as const;
export type ResendableStatus = (typeof RESENDABLE)[number];
/** Bulk resend covers at most 30 days of deliveries per request: bounded work per click. */
export const BULK_RESEND_MAX_WINDOW_MS = 30 * DAY;

const WAITING =
  'The subscription is not active, so this waits until you re-verify it (POST /app/api/webhook-subscriptions/{id}/verify).';

/** Resets rows to a fresh first attempt; a rotation-test row keeps its secret only while that is still pending. */
const reset = (now: string) => `
  status = 'pending', attempts = 0, next_attempt_at = ${now}, reason = NULL, last_error = NULL, lease_owner = NULL,
  lease_expires_at = NULL, delivered_at = NULL, updated_at = ${now},
  secret_id = CASE WHEN secret_id IS NOT NULL AND EXISTS (
      SELECT 1 FROM webhook_secrets k WHERE k.id = webhook_deliveries.secret_id AND k.status = 'pending')
    THEN secret_id ELSE NULL END`;

export async function resendDelivery(
  deps: Deps,
  organizationId: string,
  deliveryId: string,
): Promise<{
  delivery_id: string;
  event_id: string;
  status: 'pending';
  subscription_state: SubscriptionState;
  message: string;
}> {
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query<{ event_id: string; status: string; state: SubscriptionState }>(
      `SELECT d.event_id, d.status, s.state
         FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
        WHERE d.id = $1 AND d.organization_id = $2 AND s.deleted_at IS NULL
        FOR UPDATE OF d`,
      [deliveryId, organizationId],
    );
    const d = rows[0];
    if (!d) throw notFound(`No delivery ${deliveryId} in your organization.`);
    if (!(RESENDABLE as readonly string[]).includes(d.status)) {
      throw new AppError(
        'CONFLICT',
        `Only a dead-lettered or skipped delivery can be resent; this one is ${d.status}${d.status === 'pending' ? ' and will be attempted anyway' : ''}.`,
      );
    }
    const now = deps.clock.now();
    await tx.query(`UPDATE webhook_deliveries SET ${reset('$2')} WHERE id = $1`, [deliveryId, now]);
    await wakeWorkers(tx);
    return {
      delivery_id: deliveryId,
      event_id: d.event_id,
      status: 'pending',
      subscription_state: d.state,
      message:
        d.state === 'active' ? 'The delivery is queued and goes out again with the same event_id.' : WAITING,
    };
  });
}

export interface BulkResendInput {
  from: Date;
  to: Date;
  statuses: ResendableStatus[];
  dryRun: boolean;
}

export function checkBulkWindow(from: Date, to: Date): void {
  if (to.getTime() <= from.getTime()) throw badRequest('Field "to" must be later than "from".');
  if (to.getTime() - from.getTime() > BULK_RESEND_MAX_WINDOW_MS) {
    throw badRequest(
      'The window from "from" to "to" must be at most 30 days; split a longer range into several requests.',
    );
  }
}

/**
 * Resends every delivery of one subscription in [from, to) (by created_at) whose status is in
 * statuses; dry_run only counts. Returns how many were (or would be) queued again.
 */
export async function bulkResend(
  deps: Deps,
  organizationId: string,
  subscriptionId: string,
  b: BulkResendInput,
): Promise<{
  count: number;
  dry_run: boolean;
  subscription_state: SubscriptionState;
  message: string | null;
}> {
  checkBulkWindow(b.from, b.to);
  return deps.db.transaction(async (tx: Queryable) => {
    const sub = await tx.query<{ state: SubscriptionState }>(
      `SELECT state FROM webhook_subscriptions WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL FOR UPDATE`,
      [subscriptionId, organizationId],
    );
    const state = sub.rows[0]?.state;
    if (!state) throw notFound(`No webhook subscription ${subscriptionId} in your organization.`);
    const where = `subscription_id = $1 AND organization_id = $2 AND status = ANY ($3::text[])
                   AND created_at >= $4 AND created_at < $5`;
    const params = [subscriptionId, organizationId, b.statuses, b.from, b.to];
    let count: number;
    if (b.dryRun) {
      const r = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${where}`,
        params,
      );
      count = r.rows[0]?.n ?? 0;
    } else {
      const r = await tx.query(`UPDATE webhook_deliveries SET ${reset('$6')} WHERE ${where} RETURNING id`, [
        ...params,
        deps.clock.now(),
      ]);
      count = r.rowCount;
      if (count > 0) await wakeWorkers(tx);
    }
    return {
      count,
      dry_run: b.dryRun,
      subscription_state: state,
      message: state === 'active' ? null : WAITING,
    };
  });
}
