import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import { isUuid } from '../../ids.ts';
import { findAccountBySid } from './accounts.ts';
import { deleteTwilioRecording } from './twilio/rest.ts';

/**
 * How long a claim on a call's deletion at the provider lasts (calls.provider_recording_delete_claimed_until,
 * migration 0031): 2 minutes, 8 times the Twilio client's timeout (API_TIMEOUT_MS, 15 s: the DELETE is
 * aborted after it, body included), so a claimant that is still alive has always answered — written
 * provider_recording_deleted_at, or cleared its claim on an error — long before its claim runs out,
 * even with the account's read and the writes on a loaded machine. Only a claimant that died (a crash,
 * a restart) leaves it to run out; the retention sweep (every minute) retries the call after that.
 */
export const DELETE_CLAIM_LEASE_MS = 2 * 60_000;

/**
 * Deleting a call's recording at the telephony provider (retention and erasure: the audio must not
 * outlive its deletion here). 'deleted': the provider deleted it now; 'not_found': the provider
 * answered 404 — it was already gone (deletion_kind provider_404); 'none': nothing to delete there
 * (not a provider call, no recording sid, already deleted at the provider, or another path's claim
 * on it is live: that path is asking the provider now). Either of the first two sets
 * provider_recording_deleted_at. A provider error throws: the caller decides whether to wait
 * (retention) or go on and let the sweep retry (erasure).
 *
 * Claimed once, with a lease, not a held transaction (docs/decisions.md "Carrier recording deletion:
 * a lease, not a row lock across the DELETE"): one UPDATE claims the call — still to delete there, no
 * live claim — until now + DELETE_CLAIM_LEASE_MS; only the claimant sends the provider's DELETE,
 * outside any transaction, then writes provider_recording_deleted_at and clears its claim. A second
 * path — the retention sweep, a refused recording's callback, an erasure, the carrier copy's deletion
 * after the download — finds the claim live (or the deletion done) and asks the provider nothing. No
 * connection or row lock is held across the provider's request: on PGlite a transaction holds the
 * only connection, so a slow Twilio would have stalled every query of the service. A provider error
 * clears the claim and throws (every path that claims has made the call a sweep candidate, or retries
 * on its own: retention); a claimant that died leaves it to run out, and the sweep retries then.
 */
export async function deleteRecordingAtProvider(
  deps: Deps,
  callId: string,
): Promise<'deleted' | 'not_found' | 'none'> {
  if (!isUuid(callId)) return 'none';
  const now = deps.clock.now();
  const claimedUntil = new Date(now.getTime() + DELETE_CLAIM_LEASE_MS);
  // The simulated carrier's copy went when the download stored ours (simulated/download.ts): it is
  // marked deleted here at once — nothing to ask anyone, nothing for the sweep to retry, no claim.
  const { rows } = await deps.db.query<ClaimedDeletion>(
    `UPDATE calls
        SET provider_recording_deleted_at = CASE WHEN telephony_provider = 'simulated' THEN $2::timestamptz END,
            provider_recording_delete_claimed_until = CASE WHEN telephony_provider = 'twilio' THEN $3::timestamptz END
      WHERE id = $1 AND recording_sid IS NOT NULL AND provider_recording_deleted_at IS NULL
        AND (telephony_provider = 'simulated' OR (telephony_provider = 'twilio' AND provider_account_sid IS NOT NULL))
        AND (provider_recording_delete_claimed_until IS NULL OR provider_recording_delete_claimed_until <= $2)
    RETURNING telephony_provider, provider_account_sid, recording_sid`,
    [callId, now, claimedUntil],
  );
  return (await deleteClaimed(deps, callId, rows[0], claimedUntil)).outcome;
}

/**
 * The provider's answer to a claimant's DELETE, not written yet (deleteCarrierCopy's deferWrite):
 * the caller writes it in its own transaction (writeProviderDeletion, or the same SET in an UPDATE
 * of the call it runs anyway: PROVIDER_DELETION_SET).
 */
export interface ProviderDeletion {
  recordingSid: string;
  at: Date;
}

/**
 * SET items writing a ProviderDeletion given as $sid, $at: provider_recording_deleted_at and the
 * claim cleared, only while the call still names that recording (what the claimant's own UPDATE
 * does); a NULL $sid changes nothing.
 */
export function providerDeletionSet(sid: string, at: string): string {
  return `provider_recording_deleted_at = CASE WHEN recording_sid = ${sid}::text THEN ${at}::timestamptz ELSE provider_recording_deleted_at END,
            provider_recording_delete_claimed_until = CASE WHEN recording_sid = ${sid}::text THEN NULL ELSE provider_recording_delete_claimed_until END`;
}

/** Writes a ProviderDeletion on its own (a caller with no UPDATE of the call to carry it). */
export async function writeProviderDeletion(
  q: Queryable,
  callId: string,
  d: ProviderDeletion,
): Promise<void> {
  await q.query(
    `UPDATE calls SET provider_recording_deleted_at = $3, provider_recording_delete_claimed_until = NULL
      WHERE id = $1 AND recording_sid = $2`,
    [callId, d.recordingSid, d.at],
  );
}

interface ClaimedDeletion {
  telephony_provider: string;
  provider_account_sid: string | null;
  recording_sid: string;
}

/**
 * The claimant's part of deleteRecordingAtProvider (the call claimed, or none): the provider's
 * DELETE, outside any transaction, then its answer written (or the claim cleared on an error).
 */
async function deleteClaimed(
  deps: Deps,
  callId: string,
  call: ClaimedDeletion | undefined,
  claimedUntil: Date,
  deferWrite = false,
): Promise<{ outcome: 'deleted' | 'not_found' | 'none'; deferred?: ProviderDeletion }> {
  if (call?.telephony_provider !== 'twilio' || !call.provider_account_sid) return { outcome: 'none' };
  let outcome: 'deleted' | 'not_found';
  try {
    const account = await findAccountBySid(deps, call.provider_account_sid);
    if (!account) throw new Error(`telephony account ${call.provider_account_sid} is no longer connected`);
    outcome = await deleteTwilioRecording(deps.config, account, call.recording_sid);
  } catch (err) {
    // Released for the sweep's next run (only this claim: one taken over after it ran out stays).
    await deps.db
      .query(
        `UPDATE calls SET provider_recording_delete_claimed_until = NULL
          WHERE id = $1 AND provider_recording_delete_claimed_until = $2`,
        [callId, claimedUntil],
      )
      .catch(() => {}); // left to run out
    throw err;
  }
  // Only while the call still names this recording (a refused recording's callback may have named
  // another since, clearing the claim: that one is still to delete).
  const answer: ProviderDeletion = { recordingSid: call.recording_sid, at: deps.clock.now() };
  if (deferWrite) return { outcome, deferred: answer };
  await writeProviderDeletion(deps.db, callId, answer);
  return { outcome };
}

/**
 * The carrier's copy goes once ours is final (docs/capture.md "Redaction"): the silenced copy stored
 * by the transcribe stage, or the downloaded file when no transcription follows. Only with redaction
 * on — the carrier's copy is the unredacted audio; an organization that turned redaction off keeps
 * it as before. The call is marked due first (provider_recording_delete_due), so the retention sweep
 * retries a DELETE that fails now (Twilio unreachable) until Twilio confirms; a provider error is
 * logged, never thrown. A call that is not a carrier's call is left alone.
 */
export async function deleteCarrierCopy(
  deps: Deps,
  callId: string,
  opts: {
    /**
     * The caller's transaction follows at once (the transcribe stage's write): the provider's answer
     * is returned, not written, and that transaction writes it (providerDeletionSet) — one commit
     * fewer. Should that transaction never commit (a crash, the call erased meanwhile), the claim
     * runs out and the sweep asks the provider again: a 404, recorded as deleted.
     */
    deferWrite?: boolean;
  } = {},
): Promise<ProviderDeletion | null> {
  if (!isUuid(callId)) return null;
  const now = deps.clock.now();
  const claimedUntil = new Date(now.getTime() + DELETE_CLAIM_LEASE_MS);
  // One statement, one commit: marked due and, when deleteRecordingAtProvider's claim would take it
  // (same conditions, on the row as locked: a concurrent claimant's commit is seen), claimed in the
  // same UPDATE — what the two statements did one after the other. A crash after it leaves the call
  // due with a claim that runs out: the sweep retries it then, as after the claim alone before.
  const { rows } = await deps.db.query<ClaimedDeletion & { claimed: boolean }>(
    `WITH c AS MATERIALIZED (
       SELECT id,
              (telephony_provider = 'simulated' OR (telephony_provider = 'twilio' AND provider_account_sid IS NOT NULL))
              AND (provider_recording_delete_claimed_until IS NULL OR provider_recording_delete_claimed_until <= $2)
                AS claimed
         FROM calls
        WHERE id = $1 AND telephony_provider IS NOT NULL AND recording_sid IS NOT NULL
          AND provider_recording_deleted_at IS NULL
          FOR UPDATE)
     UPDATE calls
        SET provider_recording_delete_due = true,
            provider_recording_deleted_at = CASE WHEN c.claimed AND telephony_provider = 'simulated' THEN $2::timestamptz END,
            provider_recording_delete_claimed_until = CASE WHEN NOT c.claimed THEN provider_recording_delete_claimed_until
                                                           WHEN telephony_provider = 'twilio' THEN $3::timestamptz END
       FROM c WHERE calls.id = c.id
    RETURNING telephony_provider, provider_account_sid, recording_sid, c.claimed`,
    [callId, now, claimedUntil],
    { name: 'carrier_copy_delete_due_claim_v1' },
  );
  const row = rows[0];
  if (!row) return null;
  try {
    const r = await deleteClaimed(deps, callId, row.claimed ? row : undefined, claimedUntil, opts.deferWrite);
    return r.deferred ?? null;
  } catch (err) {
    deps.log.error(
      { call_id: callId, err: (err as Error).message },
      "could not delete the carrier's copy of a stored recording; the retention sweep retries",
    );
    return null;
  }
}

/**
 * Calls whose recording is deleted here (recording deleted or call erased), whose copy at the
 * carrier is due for deletion since ours is stored (deleteCarrierCopy), or whose caller refused
 * the recording at the consent announcement (a recording Twilio reported anyway is deleted there,
 * never fetched), but may still exist at the provider, because the provider could not be reached
 * then: the retention sweep retries them. ('announced' = the announcement was never answered,
 * treated as refused: domain/recording-consent.ts.) A call whose deletion another path has claimed
 * (a live provider_recording_delete_claimed_until) is passed over: it is being deleted there now.
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
        AND (provider_recording_delete_claimed_until IS NULL OR provider_recording_delete_claimed_until <= $3)
        AND NOT (id = ANY ($2::uuid[]))
      ORDER BY id LIMIT $1`,
    [limit, skip, deps.clock.now()],
  );
  return rows.map((r) => r.id);
}
