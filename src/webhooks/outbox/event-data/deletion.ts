/**
 * data of call.deletion_scheduled. Pure builder, exactly the spec's keys.
 *
 * Fact key: one scheduling decision — "<call id>:<scheduled at>:<pending deletion at>:<reason>".
 * Re-posting an unchanged schedule emits nothing (the service sees no change); rescheduling, or
 * scheduling again after a cancel, is a new fact with a new event id.
 */

export const DELETION_REASONS = [
  'consent_not_asked',
  'consent_withdrawn',
  'retention_expired',
  'user_erasure',
] as const;
export type DeletionReason = (typeof DELETION_REASONS)[number];

export const deletionScheduledFactKey = (
  callId: string,
  scheduledAt: Date,
  pendingAt: Date,
  reason: string,
) => `${callId}:${scheduledAt.toISOString()}:${pendingAt.toISOString()}:${reason}`;

export function deletionScheduledData(callId: string, pendingDeletionAt: Date, reason: DeletionReason) {
  return { call_id: callId, pending_deletion_at: pendingDeletionAt.toISOString(), reason };
}
