import type { Deps } from '../../../deps.ts';
import { ProviderError } from '../../../domain/capture-providers.ts';
import { consentAllowsRecording } from '../../../domain/recording-consent.ts';
import { AppError } from '../../../errors.ts';
import { isUuid } from '../../../ids.ts';
import type { RecordingCall } from '../../../recordings/call-recording.ts';
import { MAX_RECORDING_BYTES } from '../../../recordings/measure.ts';
import type { StageHandler } from '../../jobs/types.ts';
import { type PreparedRecording, prepareRecording, storedByRun } from '../../recording-ingest.ts';
import { findAccountBySid } from '../accounts.ts';
import { deleteCarrierCopy } from '../provider-recordings.ts';
import { deleteRefusedRecording } from './recording.ts';
import { fetchRecordingMp3 } from './rest.ts';

/**
 * The download stage of a Twilio call: fetches <provider_recording_url>.mp3 with the account's
 * credentials (only from TWILIO_API_BASE_URL's origin) and streams it into the blob store, measured
 * (prepareRecording, the ingest path's first step), then answers it: the stage's write stores it
 * (writeRecording: recording_sid kept, call.recording.ready, completion step or the transcription
 * queued) in the job run's own transaction, after the run's lock — the call locked, the lease checked,
 * the job ended (lockAndEndRun), so a run that lost its lease stores nothing. Idempotent: a call whose
 * audio is already stored (or that has nothing to fetch, or is gone) is 'skipped'; a call whose caller
 * refused the recording at the consent announcement is 'refused' and nothing is fetched.
 *
 * Failures (docs/capture.md "Processing jobs"): a file that cannot become a recording by being
 * fetched again — more than MAX_RECORDING_BYTES (declared by Twilio's Content-Length, or counted
 * while streaming), or not an MP3 — throws a ProviderError of kind too_large / fatal: the stage
 * fails at once, its reason shown by GET /admin/v1/calls/{id}/processing. Anything else (Twilio's
 * 5xx, a 404 while Twilio still finalises the file, the network) throws as is and is retried by
 * the durable job with its backoff.
 */
export async function downloadRecording(
  deps: Deps,
  callId: string,
  opts: { signal?: AbortSignal } = {},
): Promise<'skipped' | 'refused' | { recording: PreparedRecording; recordingSid: string | null }> {
  if (!isUuid(callId)) return 'skipped';
  // the call as prepareRecording checks it (before a byte is fetched), and the carrier's side
  const { rows } = await deps.db.query<
    RecordingCall & { provider_recording_url: string | null; provider_account_sid: string | null }
  >(
    `SELECT c.id, c.organization_id, c.environment, c.direction, c.recording_state, c.recording_mode, c.recording_consent,
            c.outbound_lifecycle, c.recording_key, c.recording_bytes, c.recording_sid, c.duration, c.recording_deleted_at,
            c.trashed_at, c.deletion_scheduled_at, c.pending_deletion_at, c.erased_at, o.entitlement,
            c.provider_recording_url, c.provider_account_sid
       FROM calls c JOIN organizations o ON o.id = c.organization_id
      WHERE c.id = $1 AND c.telephony_provider = 'twilio'`,
    [callId],
    { name: 'twilio_download_call_v3' },
  );
  const call = rows[0];
  if (!call || call.erased_at) return 'skipped';
  if (!consentAllowsRecording(call.recording_consent)) return 'refused';
  if (!call.provider_recording_url || !call.provider_account_sid) return 'skipped';
  if (call.recording_state !== 'pending' && call.recording_state !== 'refused') return 'skipped';
  const account = await findAccountBySid(deps, call.provider_account_sid);
  if (!account) throw new Error(`telephony account ${call.provider_account_sid} is no longer connected`);
  const media = await fetchRecordingMp3(deps.config, account, call.provider_recording_url, opts);
  if (media.declaredBytes !== null && media.declaredBytes > MAX_RECORDING_BYTES) {
    media.close();
    throw tooLarge(`the recording is ${media.declaredBytes} bytes (Content-Length)`);
  }
  try {
    const recording = await prepareRecording(deps, callId, media.body, { before: call });
    return { recording, recordingSid: call.recording_sid };
  } catch (err) {
    if (err instanceof AppError && err.code === 'PAYLOAD_TOO_LARGE') {
      throw tooLarge(`the recording Twilio served exceeds ${MAX_RECORDING_BYTES} bytes`);
    }
    if (err instanceof AppError && err.code === 'BAD_REQUEST') {
      throw new ProviderError(
        'twilio',
        'fatal',
        'the recording Twilio served is not an MP3 file (no MPEG audio frames); not stored and not fetched again',
        { cause: err },
      );
    }
    throw err;
  } finally {
    // a body left unread (the call refused its audio before a byte was read) closes its connection
    media.close();
  }
}

const tooLarge = (what: string) =>
  new ProviderError(
    'twilio',
    'too_large',
    `${what}, over the limit of ${MAX_RECORDING_BYTES} bytes; not stored and not fetched again`,
  );

/** Why a download job ends without fetching anything for a call whose caller refused the recording. */
export const CONSENT_REFUSED_REASON =
  'the caller refused the recording at the consent announcement: not downloaded; the recording is deleted at Twilio';

/**
 * The download stage of the processing jobs, the one place a Twilio recording is downloaded and
 * retried (the runner's attempt cap and backoff). The recording callback queues it due at once and
 * the public listener runs it right after answering Twilio; a worker runs retries and anything a
 * dead process left. A call whose caller refused the recording is not downloaded: the job is
 * cancelled with the reason, and the recording is deleted at Twilio. A call whose audio may no
 * longer be stored (erased meanwhile, deleted, no_recording) is cancelled the same way.
 */
export const downloadStage: StageHandler = async ({ deps, job, signal, chain }) => {
  let outcome: Awaited<ReturnType<typeof downloadRecording>>;
  try {
    outcome = await downloadRecording(deps, job.callId, { signal });
  } catch (err) {
    if (err instanceof AppError && (err.code === 'CONFLICT' || err.code === 'NOT_FOUND')) {
      return { kind: 'cancelled', reason: `not stored: ${err.message}` };
    }
    throw err;
  }
  if (outcome === 'refused') {
    await deleteRefusedRecording(deps, job.callId);
    return { kind: 'cancelled', reason: CONSENT_REFUSED_REASON };
  }
  if (outcome === 'skipped') return { kind: 'succeeded' };
  // Stored by the run's write; then, no transcription following and the organization redacting,
  // this file is our final copy and the carrier's goes (otherwise the transcribe stage deletes it
  // once it stored the silenced one).
  return storedByRun(deps, outcome.recording, {
    recordingSid: outcome.recordingSid ?? undefined,
    chain,
    afterCommit: async ({ transcriptionQueued, redactionEnabled }) => {
      if (!transcriptionQueued && redactionEnabled) await deleteCarrierCopy(deps, job.callId);
    },
  });
};
