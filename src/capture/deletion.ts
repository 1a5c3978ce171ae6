import { DAY } from '../clock.ts';
import type { Deps } from '../deps.ts';
import type { Scope } from '../domain/tenant.ts';
import { badRequest } from '../errors.ts';
import { eraseCallFromWebhooks } from '../webhooks/delivery/erasure.ts';
import {
  type DeletionReason,
  deletionScheduledData,
  deletionScheduledFactKey,
} from '../webhooks/outbox/event-data/deletion.ts';
import { recordingDeletedEvent } from '../webhooks/outbox/event-data/recording.ts';
import { emitEvent } from '../webhooks/outbox/outbox.ts';
import { findCallInScope, lockCallInScope } from './call-record.ts';
import { cancelCallJobs } from './jobs/enqueue.ts';
import { deleteBlob } from './recording-ingest.ts';
import { deleteRecordingAtProvider } from './telephony/provider-recordings.ts';
import { simulatedRecordingKey } from './telephony/simulated/store.ts';

/**
 * Trash, scheduled deletion and erasure of a call. Trash and scheduled deletion are reversible and
 * only withhold the recording (recording-url 409 RECORDING_WITHHELD); erasure is final.
 */

/** Default time between scheduling a deletion and carrying it out: the window to reverse it. */
export const DEFAULT_DELETION_DELAY_MS = 30 * DAY;

export async function setTrashed(deps: Deps, scope: Scope, callId: string, trashed: boolean): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const call = await lockCallInScope(tx, scope, callId);
    if ((call.trashed_at !== null) === trashed) return;
    const now = deps.clock.now();
    await tx.query('UPDATE calls SET trashed_at = $2, updated_at = $3 WHERE id = $1', [
      call.id,
      trashed ? now : null,
      now,
    ]);
  });
}

/**
 * POST …/schedule-deletion: sets the schedule and emits call.deletion_scheduled (sent by the outbox
 * only to subscriptions the call's content reached). An unchanged schedule re-posted changes nothing
 * and emits nothing; without pending_deletion_at an existing schedule keeps its date.
 */
export async function scheduleDeletion(
  deps: Deps,
  scope: Scope,
  callId: string,
  input: { reason: DeletionReason; pendingDeletionAt: Date | null },
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const call = await lockCallInScope(tx, scope, callId);
    const now = deps.clock.now();
    if (input.pendingDeletionAt && input.pendingDeletionAt.getTime() < now.getTime()) {
      throw badRequest('Field "pending_deletion_at" must not be in the past.', 'pending_deletion_at');
    }
    const pending =
      input.pendingDeletionAt ??
      call.pending_deletion_at ??
      new Date(now.getTime() + DEFAULT_DELETION_DELAY_MS);
    if (
      call.deletion_scheduled_at &&
      call.pending_deletion_at?.getTime() === pending.getTime() &&
      call.deletion_reason === input.reason
    ) {
      return;
    }
    await tx.query(
      `UPDATE calls SET deletion_scheduled_at = $2, pending_deletion_at = $3, deletion_reason = $4, updated_at = $2
        WHERE id = $1`,
      [call.id, now, pending, input.reason],
    );
    await emitEvent(tx, {
      organizationId: call.organization_id,
      environment: call.environment,
      eventType: 'call.deletion_scheduled',
      resourceId: call.id,
      callId: call.id,
      factKey: deletionScheduledFactKey(call.id, now, pending, input.reason),
      data: deletionScheduledData(call.id, pending, input.reason),
      createdAt: now,
    });
  });
}

/** POST …/cancel-deletion: the scheduled deletion is called off (no event: the spec has none). */
export async function cancelDeletion(deps: Deps, scope: Scope, callId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const call = await lockCallInScope(tx, scope, callId);
    if (!call.deletion_scheduled_at && !call.pending_deletion_at) return;
    await tx.query(
      `UPDATE calls SET deletion_scheduled_at = NULL, pending_deletion_at = NULL, deletion_reason = NULL,
              updated_at = $2
        WHERE id = $1`,
      [call.id, deps.clock.now()],
    );
  });
}

/**
 * POST …/erase (and the retention sweep at pending_deletion_at): the call is gone. In one transaction
 * the personal and free-text fields are blanked, the transcript and analysis deleted, erased_at set
 * (every read answers 404 from then on), the webhook side withdrawn (src/webhooks/delivery/erasure.ts: the
 * call's undelivered deliveries skipped with reason call_erased, its event bodies emptied of data,
 * echoed replies cleared) and, when audio was stored, call.recording.deleted (hard_deleted) emitted
 * to the subscriptions the call's content reached. The audio blob is deleted after the commit.
 */
export async function eraseCall(deps: Deps, scope: Scope, callId: string): Promise<void> {
  await findCallInScope(deps.db, scope, callId); // 404 before the provider is asked to delete anything
  const atProvider = await providerDeletionForErasure(deps, callId);
  const blobKey = await deps.db.transaction(async (tx) => {
    const call = await lockCallInScope(tx, scope, callId);
    const now = deps.clock.now();
    const hadAudio = call.recording_state === 'available';
    await tx.query(
      `UPDATE calls SET erased_at = $2, updated_at = $2, caller_phone = '', customer_phone = NULL,
              customer_phone_e164 = NULL, customer_phone_national = NULL, customer_phone_rdigits = NULL,
              company_phone_e164 = NULL, caller_name = NULL, failure_reason = NULL, pending_transcript = NULL,
              pending_transcript_language = NULL, pending_transcript_times = NULL, recording_key = NULL, recording_bytes = NULL,
              agent_phone_e164 = NULL, provider_recording_url = NULL, tracker_matches = NULL,
              talk_metrics = NULL, transcript_times = NULL,
              recording_state = CASE WHEN recording_state = 'available' THEN 'deleted' ELSE recording_state END,
              recording_deleted_at = CASE WHEN recording_state = 'available' THEN $2 ELSE recording_deleted_at END
        WHERE id = $1`,
      [call.id, now],
    );
    await tx.query('DELETE FROM call_analyses WHERE call_id = $1', [call.id]);
    // The fan-out share-locks the reached subscriptions before eraseCallFromWebhooks locks the
    // call's deliveries: subscription, then delivery, the order of every other writer (a failure
    // write, a pause, a re-verification), so none of them can deadlock with an erase.
    if (hadAudio) {
      await emitEvent(
        tx,
        recordingDeletedEvent({
          organizationId: call.organization_id,
          environment: call.environment,
          callId: call.id,
          reason: call.deletion_reason ?? 'call_erased',
          recordingSid: call.recording_sid,
          deletionKind: atProvider === 'not_found' ? 'provider_404' : 'hard_deleted',
          deletedAt: now,
        }),
      );
    }
    await eraseCallFromWebhooks(tx, { callId: call.id, now });
    // Its processing stops: unfinished jobs cancelled, their errors (which may quote the call) blanked.
    await cancelCallJobs(tx, call.id, now);
    // A test call's script (its words) goes with it, and any recording the simulated carrier still holds.
    const sim = await tx.query('DELETE FROM simulated_calls WHERE call_id = $1', [call.id]);
    return {
      key: call.recording_key,
      simKey: sim.rowCount ? simulatedRecordingKey(call.organization_id, call.id) : null,
    };
  });
  if (blobKey.key) await deleteBlob(deps, blobKey.key);
  if (blobKey.simKey) await deleteBlob(deps, blobKey.simKey);
}

/**
 * Before an erasure: the recording is deleted at the telephony provider first, so its 404 can be
 * told as deletion_kind provider_404. A provider that cannot be reached does not hold the erasure
 * up: it is logged, and the retention sweep retries the provider deletion later.
 */
async function providerDeletionForErasure(deps: Deps, callId: string) {
  try {
    return await deleteRecordingAtProvider(deps, callId);
  } catch (err) {
    deps.log.error(
      { call_id: callId, err: (err as Error).message },
      'recording could not be deleted at the telephony provider; the retention sweep retries',
    );
    return 'failed' as const;
  }
}
