/**
 * The webhook side of erasing a call (src/capture/deletion.ts eraseCall), run in the erase
 * transaction (docs/decisions.md "Erasure really erases"). Afterwards nothing in the webhook tables
 * holds the call's content and nothing of it is sent again; its deletion events
 * (call.deletion_scheduled, call.recording.deleted) carry only ids and go out as before.
 *
 * 1. Every delivery of the call's other events that is not delivered — pending (queued, held for a
 *    paused subscription, or claimed by a worker right now), dead-lettered or skipped — becomes
 *    skipped with reason 'call_erased', its lease cleared. Rows are locked in id order. A worker
 *    holding one writes its outcome only while the row is pending under its lease, so a skipped
 *    row is never brought back; a worker that claimed one and has not sent it yet re-reads it
 *    first (src/webhooks/delivery/worker.ts). Resend refuses these deliveries (src/webhooks/subscriptions/resend.ts) and
 *    reconciliation does not re-create them (src/webhooks/delivery/reconcile.ts).
 * 2. The stored bodies of those events lose their data: what is left is the envelope with
 *    data = {call_id, erased_at}. Event ids, types and the delivery log stay.
 * 3. The reply snippets of every attempt of the call's deliveries are cleared (a receiver may echo
 *    what it was sent), and pause e-mails quoting such a reply lose the quote.
 *
 * Deliveries are found through the call's events (events_call_idx) and the organization's
 * subscriptions: (subscription_id, event_id) is the deliveries table's unique key, so no index on
 * event_id alone is needed on the queue table.
 */
import type { Queryable } from '../../db/types.ts';
import { DELETION_EVENT_TYPES } from '../outbox/outbox.ts';
import { redactPauseNotice } from './pause-notice.ts';

/** Reason of the deliveries an erase withdraws (delivery log, resend refusal). */
export const CALL_ERASED_REASON = 'call_erased';

const CALL_DELIVERIES = `
  FROM events e
  JOIN webhook_subscriptions s ON s.organization_id = e.organization_id
  JOIN webhook_deliveries d ON d.subscription_id = s.id AND d.event_id = e.id
 WHERE e.call_id = $1`;

export const SKIP_ERASED_DELIVERIES_SQL = `
WITH targets AS (
  SELECT d.id ${CALL_DELIVERIES} AND e.event_type <> ALL ($2::text[]) AND d.status <> 'delivered'
   ORDER BY d.id
   FOR UPDATE OF d
)
UPDATE webhook_deliveries d
   SET status = 'skipped', reason = '${CALL_ERASED_REASON}', lease_owner = NULL, lease_expires_at = NULL,
       updated_at = $3
  FROM targets t
 WHERE d.id = t.id AND d.status <> 'delivered'`;

export const SCRUB_EVENT_BODIES_SQL = `
UPDATE events
   SET body = json_build_object(
         'api_version', body::json -> 'api_version', 'event_id', id, 'event_type', event_type,
         'resource_id', resource_id, 'created_at', body::json -> 'created_at',
         'data', json_build_object('call_id', call_id, 'erased_at', $3::text))::text
 WHERE call_id = $1 AND event_type <> ALL ($2::text[])`;

export const CLEAR_ATTEMPT_SNIPPETS_SQL = `
UPDATE webhook_attempts a SET response_snippet = NULL
  FROM events e
  JOIN webhook_subscriptions s ON s.organization_id = e.organization_id
  JOIN webhook_deliveries d ON d.subscription_id = s.id AND d.event_id = e.id
 WHERE e.call_id = $1 AND a.delivery_id = d.id AND a.response_snippet IS NOT NULL`;

/** True when the call of an event is erased and the event is not one of its deletion events. */
export const ERASED_CONTENT_SQL = (event: string) => `(
  ${event}.event_type <> ALL ('{${[...DELETION_EVENT_TYPES].join(',')}}'::text[])
  AND EXISTS (SELECT 1 FROM calls c WHERE c.id = ${event}.call_id AND c.erased_at IS NOT NULL))`;

export async function eraseCallFromWebhooks(
  tx: Queryable,
  p: { callId: string; now: Date },
): Promise<{ skipped: number }> {
  const deletionTypes = [...DELETION_EVENT_TYPES];
  const skipped = await tx.query(SKIP_ERASED_DELIVERIES_SQL, [p.callId, deletionTypes, p.now]);
  await tx.query(SCRUB_EVENT_BODIES_SQL, [p.callId, deletionTypes, p.now.toISOString()]);
  await tx.query(CLEAR_ATTEMPT_SNIPPETS_SQL, [p.callId]);
  const mails = await tx.query<{ id: string; body: string }>(
    'SELECT id, body FROM email_outbox WHERE call_id = $1 FOR UPDATE',
    [p.callId],
  );
  for (const m of mails.rows) {
    const body = redactPauseNotice(m.body);
    if (body !== m.body) await tx.query('UPDATE email_outbox SET body = $2 WHERE id = $1', [m.id, body]);
  }
  return { skipped: skipped.rowCount };
}
