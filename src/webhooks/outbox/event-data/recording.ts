/**
 * data of the recording events: call.recording.ready, call.recording.deleted. Pure builders, exactly
 * the spec's keys.
 *
 * Fact keys: a call's recording becomes ready once and is deleted once, whoever deletes it (the
 * recording/delete route, erasure, the retention sweep): both keys are the call id, so two paths
 * reporting the same deletion yield one event.
 */

import type { Environment } from '../../../domain/tenant.ts';
import type { CallRecordingDeletedData, CallRecordingReadyData } from '../event-schemas.ts';
import type { NewEvent } from '../outbox.ts';

export const recordingReadyFactKey = (callId: string): string => callId;
export const recordingDeletedFactKey = (callId: string): string => callId;

export function recordingReadyData(
  callId: string,
  recordingUrl: string | null,
  duration: number | null,
): CallRecordingReadyData {
  return { call_id: callId, recording_url: recordingUrl, duration };
}

export function recordingDeletedData(d: {
  callId: string;
  reason: string | null;
  recordingSid: string | null;
  deletionKind: 'hard_deleted' | 'provider_404';
  deletedAt: Date;
}): CallRecordingDeletedData {
  return {
    call_id: d.callId,
    reason: d.reason,
    recording_sid: d.recordingSid,
    deletion_kind: d.deletionKind,
    deleted_at: d.deletedAt.toISOString(),
  };
}

/**
 * The whole call.recording.deleted event, for every path that deletes a call's audio (the
 * recording/delete route, erasure, the retention sweep): one fact key, one data shape.
 */
export function recordingDeletedEvent(
  d: Parameters<typeof recordingDeletedData>[0] & { organizationId: string; environment: Environment },
): NewEvent {
  return {
    organizationId: d.organizationId,
    environment: d.environment,
    eventType: 'call.recording.deleted',
    resourceId: d.callId,
    callId: d.callId,
    factKey: recordingDeletedFactKey(d.callId),
    data: recordingDeletedData(d),
    createdAt: d.deletedAt,
  };
}
