import type { Deps } from '../../deps.ts';
import { isUuid } from '../../ids.ts';
import { findAccountBySid } from './accounts.ts';
import { deleteTwilioRecording } from './twilio/rest.ts';

/**
 * Deleting a call's recording at the telephony provider (retention and erasure: the audio must not
 * outlive its deletion here). 'deleted': the provider deleted it now; 'not_found': the provider
 * answered 404 — it was already gone (deletion_kind provider_404); 'none': nothing to delete there
 * (not a provider call, no recording sid, or already deleted at the provider). Either of the first
 * two sets provider_recording_deleted_at. A provider error throws: the caller decides whether
 * to wait (retention) or go on and let the sweep retry (erasure).
 *
 * Claimed exactly once: the call's row is locked (FOR UPDATE) from the read of
 * provider_recording_deleted_at through the provider's DELETE to the write of its answer, in one
 * transaction, so a second path — the retention sweep, a refused recording's callback, an erasure,
 * the carrier copy's deletion after the download — waits and then finds it deleted instead of asking
 * the provider again. The lock is held across the provider's request (bounded by its timeout, one
 * call's row); a provider error or a crash rolls back and leaves the deletion due for the sweep.
 * `skipLocked` (the sweep): a call whose deletion another path holds is passed over ('none'), not
 * waited for.
 */
export async function deleteRecordingAtProvider(
  deps: Deps,
  callId: string,
  opts: { skipLocked?: boolean } = {},
): Promise<'deleted' | 'not_found' | 'none'> {
  if (!isUuid(callId)) return 'none';
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query<{
      telephony_provider: string | null;
      provider_account_sid: string | null;
      recording_sid: string | null;
      provider_recording_deleted_at: Date | null;
    }>(
      `SELECT telephony_provider, provider_account_sid, recording_sid, provider_recording_deleted_at
         FROM calls WHERE id = $1 FOR UPDATE${opts.skipLocked ? ' SKIP LOCKED' : ''}`,
      [callId],
    );
    const call = rows[0];
    const markDeleted = () =>
      tx.query('UPDATE calls SET provider_recording_deleted_at = $2 WHERE id = $1', [
        callId,
        deps.clock.now(),
      ]);
    if (
      call?.telephony_provider === 'simulated' &&
      call.recording_sid &&
      !call.provider_recording_deleted_at
    ) {
      // The simulated carrier's copy went when the download stored ours (simulated/download.ts):
      // nothing to ask anyone, and nothing for the retention sweep to retry.
      await markDeleted();
      return 'none';
    }
    if (
      call?.telephony_provider !== 'twilio' ||
      !call.recording_sid ||
      !call.provider_account_sid ||
      call.provider_recording_deleted_at
    ) {
      return 'none';
    }
    // read in this transaction on a miss, kept in the database's cache (the callbacks' reads)
    const account = await findAccountBySid({ db: tx, keys: deps.keys }, call.provider_account_sid, deps.db);
    if (!account) throw new Error(`telephony account ${call.provider_account_sid} is no longer connected`);
    const outcome = await deleteTwilioRecording(deps.config, account, call.recording_sid);
    await markDeleted();
    return outcome;
  });
}

/**
 * The carrier's copy goes once ours is final (docs/capture.md "Redaction"): the silenced copy stored
 * by the transcribe stage, or the downloaded file when no transcription follows. Only with redaction
 * on — the carrier's copy is the unredacted audio; an organization that turned redaction off keeps
 * it as before. The call is marked due first (provider_recording_delete_due), so the retention sweep
 * retries a DELETE that fails now (Twilio unreachable) until Twilio confirms; a provider error is
 * logged, never thrown. A call that is not a carrier's call is left alone.
 */
export async function deleteCarrierCopy(deps: Deps, callId: string): Promise<void> {
  const { rows } = await deps.db.query<{ id: string }>(
    `UPDATE calls SET provider_recording_delete_due = true
      WHERE id = $1 AND telephony_provider IS NOT NULL AND recording_sid IS NOT NULL
        AND provider_recording_deleted_at IS NULL
    RETURNING id`,
    [callId],
  );
  if (!rows[0]) return;
  try {
    await deleteRecordingAtProvider(deps, callId);
  } catch (err) {
    deps.log.error(
      { call_id: callId, err: (err as Error).message },
      "could not delete the carrier's copy of a stored recording; the retention sweep retries",
    );
  }
}

/**
 * Calls whose recording is deleted here (recording deleted or call erased), whose copy at the
 * carrier is due for deletion since ours is stored (deleteCarrierCopy), or whose caller refused
 * the recording at the consent announcement (a recording Twilio reported anyway is deleted there,
 * never fetched), but may still exist at the provider, because the provider could not be reached
 * then: the retention sweep retries them. ('announced' = the announcement was never answered,
 * treated as refused: domain/recording-consent.ts.)
 */
export async function undeletedProviderRecordings(
  deps: Deps,
  limit: number,
  skip: string[],
): Promise<string[]> {
  const { rows } = await deps.db.query<{ id: string }>(
    `SELECT id FROM calls
      WHERE recording_sid IS NOT NULL AND telephony_provider IS NOT NULL AND provider_recording_deleted_at IS NULL
        AND (erased_at IS NOT NULL OR recording_state = 'deleted' OR recording_consent IN ('refused', 'announced')
             OR provider_recording_delete_due)
        AND NOT (id = ANY ($2::uuid[]))
      ORDER BY id LIMIT $1`,
    [limit, skip],
  );
  return rows.map((r) => r.id);
}
