import { DAY } from '../../clock.ts';
import { inScope, scopeParams } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import type { SubscriptionState } from '../../domain/subscription-state.ts';
import type { TenantScope } from '../../domain/tenant.ts';
import { AppError, badRequest, notFound } from '../../errors.ts';
import { ERASED_CONTENT_SQL } from '../delivery/erasure.ts';
import { wakeWorkers } from './handshake.ts';

/**
 * Resend from the delivery log (spec "Authentication" 11, "Webhook subscription states"): a
 * dead-lettered or skipped delivery goes out again with the SAME event_id and the stored body. The
 * row itself is reset (one row per subscription and event), so there is never a second copy in the
 * queue. A paused (or not yet verified) subscription's resends wait until it is re-verified.
 * Deliveries of an erased call's events (other than its deletion events) are never resent: a single
 * resend answers 409 CONFLICT, a bulk resend leaves them out (src/webhooks/delivery/erasure.ts).
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
  scope: TenantScope,
  deliveryId: string,
): Promise<{
  delivery_id: string;
  event_id: string;
  status: 'pending';
  subscription_state: SubscriptionState;
  message: string;
}> {
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query<{
      event_id: string;
      status: string;
      state: SubscriptionState;
      call_id: string | null;
      erased: boolean;
    }>(
      `SELECT d.event_id, d.status, s.state, e.call_id, ${ERASED_CONTENT_SQL('e')} AS erased
         FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
         JOIN events e ON e.id = d.event_id
        WHERE d.id = $1 AND ${inScope('s', 2, 3)} AND s.deleted_at IS NULL AND s.kind = 'webhook'
        FOR UPDATE OF d`,
      [deliveryId, ...scopeParams(scope)],
    );
    const d = rows[0];
    if (!d) throw notFound(`No delivery ${deliveryId} in your organization.`);
    if (d.erased) throw new AppError('CONFLICT', erasedMessage(d.call_id!));
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

/** 409 CONFLICT message of a resend of an erased call's content. */
export const erasedMessage = (callId: string) =>
  `The call ${callId} was erased: its events are not sent again (only its deletion events are), so this delivery cannot be resent.`;

export interface BulkResendInput {
  from: Date;
  to: Date;
  statuses: ResendableStatus[];
  /** only deliveries of this event type (the delivery log's filter) */
  eventType?: string;
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
 * statuses; dry_run only counts. Returns how many were (or would be) queued again. Deliveries of an
 * erased call's events (other than its deletion events) are left out and counted in erased_excluded.
 */
export async function bulkResend(
  deps: Deps,
  scope: TenantScope,
  subscriptionId: string,
  b: BulkResendInput,
): Promise<{
  count: number;
  dry_run: boolean;
  subscription_state: SubscriptionState;
  /** deliveries in the window and statuses that belong to erased calls: never resent */
  erased_excluded: number;
  message: string | null;
}> {
  checkBulkWindow(b.from, b.to);
  return deps.db.transaction(async (tx: Queryable) => {
    const sub = await tx.query<{ state: SubscriptionState }>(
      `SELECT state FROM webhook_subscriptions
        WHERE id = $1 AND ${inScope(null, 2, 3)} AND deleted_at IS NULL AND kind = 'webhook' FOR UPDATE`,
      [subscriptionId, ...scopeParams(scope)],
    );
    const state = sub.rows[0]?.state;
    if (!state) throw notFound(`No webhook subscription ${subscriptionId} in your organization.`);
    const where = `subscription_id = $1 AND organization_id = $2 AND status = ANY ($3::text[])
                   AND created_at >= $4 AND created_at < $5 AND ($6::text IS NULL OR event_type = $6)`;
    const erased = `EXISTS (SELECT 1 FROM events e WHERE e.id = webhook_deliveries.event_id AND ${ERASED_CONTENT_SQL('e')})`;
    const params = [subscriptionId, scope.organizationId, b.statuses, b.from, b.to, b.eventType ?? null];
    const counted = await tx.query<{ n: number; erased: number }>(
      `SELECT count(*) FILTER (WHERE NOT ${erased})::int AS n, count(*) FILTER (WHERE ${erased})::int AS erased
         FROM webhook_deliveries WHERE ${where}`,
      params,
    );
    let count = counted.rows[0]?.n ?? 0;
    const erasedExcluded = counted.rows[0]?.erased ?? 0;
    if (!b.dryRun && count > 0) {
      const r = await tx.query(
        `UPDATE webhook_deliveries SET ${reset('$7')} WHERE ${where} AND NOT ${erased} RETURNING id`,
        [...params, deps.clock.now()],
      );
      count = r.rowCount;
      if (count > 0) await wakeWorkers(tx);
    }
    const notes = [
      ...(erasedExcluded > 0
        ? [
            `${erasedExcluded} ${erasedExcluded === 1 ? 'delivery belongs' : 'deliveries belong'} to erased calls and ${erasedExcluded === 1 ? 'is' : 'are'} not sent again.`,
          ]
        : []),
      ...(state === 'active' ? [] : [WAITING]),
    ];
    return {
      count,
      dry_run: b.dryRun,
      subscription_state: state,
      erased_excluded: erasedExcluded,
      message: notes.length > 0 ? notes.join(' ') : null,
    };
  });
}
