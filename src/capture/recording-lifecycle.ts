import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import { MESSAGES } from '../domain/recording-availability.ts';
import { AppError } from '../errors.ts';
import { findRecordingCall, type RecordingCall } from '../recordings/call-recording.ts';
import { recordingDeletedEvent } from '../webhooks/outbox/event-data/recording.ts';
import { emitEvent } from '../webhooks/outbox/outbox.ts';
import { completeIfReady } from './completion.ts';
import { deleteBlob } from './recording-ingest.ts';

export type DeletionKind = 'hard_deleted' | 'provider_404';

function assertPresent(call: RecordingCall | null): asserts call is RecordingCall {
  if (!call || call.erased_at) throw new AppError('NOT_FOUND', MESSAGES.NOT_FOUND);
}

/**
 * POST /admin/v1/calls/{id}/recording-refused. Inbound: recording_state refused (recording-url keeps
 * answering 409 RECORDING_NOT_READY: a recording can still follow). Outbound: not_captured (410
 * RECORDING_NOT_CAPTURED). Repeating it is harmless; refusing audio that is already stored or
 * deleted answers 409 CONFLICT and changes nothing. The completion step runs: the recording is settled.
 */
export async function refuseRecording(deps: Deps, callId: string): Promise<void> {
  await deps.db.transaction((tx) => refuseRecordingIn(tx, deps, callId));
}

/** refuseRecording inside the caller's transaction (a telephony callback claims itself in the same one). */
export async function refuseRecordingIn(tx: Queryable, deps: Deps, callId: string): Promise<void> {
  const call = await findRecordingCall(tx, callId, { forUpdate: true });
  assertPresent(call);
  if (call.recording_state === 'available' || call.recording_state === 'deleted') {
    throw new AppError(
      'CONFLICT',
      `The call's recording is already ${call.recording_state}; a refusal can only precede the audio.`,
    );
  }
  const next = call.direction === 'inbound' ? 'refused' : 'not_captured';
  if (call.recording_state === next) return;
  await tx.query(`UPDATE calls SET recording_state = $2, updated_at = $3 WHERE id = $1`, [
    call.id,
    next,
    deps.clock.now(),
  ]);
  // The recording is settled: a processed call that waited for it completes now, without audio.
  await completeIfReady(tx, deps, call.id);
}

/**
 * POST /admin/v1/calls/{id}/recording/delete. In one transaction: recording_state deleted,
 * recording_deleted_at, the blob reference cleared, and call.recording.deleted emitted (fact key =
 * call id: a recording is deleted once, whoever deletes it), and the completion step run (the
 * recording is settled). After the commit the blob itself is removed, for both kinds:
 * a recording that answers 410 keeps no bytes. Repeating it on a deleted recording is a no-op (204).
 */
export async function deleteRecording(
  deps: Deps,
  callId: string,
  input: { deletionKind: DeletionKind; reason: string | null },
): Promise<void> {
  const blobKey = await deps.db.transaction(async (tx) => {
    const call = await findRecordingCall(tx, callId, { forUpdate: true });
    assertPresent(call);
    if (call.recording_state === 'deleted') return call.recording_key;
    const deletedAt = deps.clock.now();
    await tx.query(
      `UPDATE calls SET recording_state = 'deleted', recording_deleted_at = $2, recording_key = NULL,
              recording_bytes = NULL, updated_at = $2
        WHERE id = $1`,
      [call.id, deletedAt],
    );
    await emitEvent(
      tx,
      recordingDeletedEvent({
        organizationId: call.organization_id,
        environment: call.environment,
        callId: call.id,
        reason: input.reason,
        recordingSid: call.recording_sid,
        deletionKind: input.deletionKind,
        deletedAt,
      }),
    );
    await completeIfReady(tx, deps, call.id);
    return call.recording_key;
  });
  if (blobKey) await deleteBlob(deps, blobKey);
}
