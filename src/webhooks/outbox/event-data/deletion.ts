/**
 * data of call.deletion_scheduled. Pure builder, exactly the spec's keys.
 *
 * Fact key: one scheduling decision — "<call id>:<scheduled at>:<pending deletion at>:<reason>".
 * Re-posting an unchanged schedule emits nothing (the service sees no change); rescheduling, or
 * scheduling again after a cancel, is a new fact with a new event id.
 */

import type { CallDeletionScheduledData, DeletionReason } from '../event-schemas.ts';

export { DELETION_REASONS, type DeletionReason } from '../event-schemas.ts';

export const deletionScheduledFactKey = (
  callId: string,
  scheduledAt: Date,
  pendingAt: Date,
  reason: string,
) => `${callId}:${scheduledAt.toISOString()}:${pendingAt.toISOString()}:${reason}`;

export function deletionScheduledData(
  callId: string,
  pendingDeletionAt: Date,
  reason: DeletionReason,
): CallDeletionScheduledData {
  return { call_id: callId, pending_deletion_at: pendingDeletionAt.toISOString(), reason };
}
