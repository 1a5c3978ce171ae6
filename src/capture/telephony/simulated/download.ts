import type { Deps } from '../../../deps.ts';
import { ProviderError } from '../../../domain/capture-providers.ts';
import { consentAllowsRecording, type RecordingConsent } from '../../../domain/recording-consent.ts';
import { AppError } from '../../../errors.ts';
import { isUuid } from '../../../ids.ts';
import type { StageHandler } from '../../jobs/types.ts';
import { deleteBlob, type PreparedRecording, prepareRecording, storedByRun } from '../../recording-ingest.ts';
import { SIMULATED_URL_PREFIX } from './store.ts';

/**
 * The download stage of a simulated call: the recording the simulated carrier announced is read
 * from its own store (never over HTTP) into the call's blob, measured (prepareRecording), and stored
 * by the run's write through the same ingest path as a Twilio download (storedByRun: recording_sid
 * kept, call.recording.ready, the transcribe stage queued — from the script: no speech-to-text
 * provider is called — in the run's transaction, after its lock). The file in the simulated store is
 * deleted once the call holds its copy. Idempotent like Twilio's.
 */
export async function downloadSimulatedRecording(
  deps: Deps,
  callId: string,
): Promise<
  'skipped' | 'refused' | { recording: PreparedRecording; recordingSid: string | null; key: string }
> {
  if (!isUuid(callId)) return 'skipped';
  const { rows } = await deps.db.query<{
    recording_state: string;
    recording_consent: RecordingConsent;
    recording_sid: string | null;
    provider_recording_url: string | null;
    erased_at: Date | null;
  }>(
    `SELECT recording_state, recording_consent, recording_sid, provider_recording_url, erased_at
       FROM calls WHERE id = $1 AND telephony_provider = 'simulated'`,
    [callId],
  );
  const call = rows[0];
  if (!call || call.erased_at) return 'skipped';
  if (!consentAllowsRecording(call.recording_consent)) return 'refused';
  const url = call.provider_recording_url;
  if (!url?.startsWith(SIMULATED_URL_PREFIX)) return 'skipped';
  if (call.recording_state !== 'pending') return 'skipped';
  const key = url.slice(SIMULATED_URL_PREFIX.length);
  if ((await deps.store.size(key)) === null) {
    throw new ProviderError(
      'simulated',
      'fatal',
      'the simulated recording is missing from the simulated store',
    );
  }
  const recording = await prepareRecording(deps, callId, deps.store.read(key));
  return { recording, recordingSid: call.recording_sid, key };
}

export const simulatedDownloadStage: StageHandler = async ({ deps, job }) => {
  let outcome: Awaited<ReturnType<typeof downloadSimulatedRecording>>;
  try {
    outcome = await downloadSimulatedRecording(deps, job.callId);
  } catch (err) {
    if (err instanceof AppError && (err.code === 'CONFLICT' || err.code === 'NOT_FOUND')) {
      return { kind: 'cancelled', reason: `not stored: ${err.message}` };
    }
    throw err;
  }
  if (outcome === 'refused') {
    return { kind: 'cancelled', reason: 'the caller refused the recording: not stored' };
  }
  if (outcome === 'skipped') return { kind: 'succeeded' };
  const { key } = outcome;
  return storedByRun(deps, outcome.recording, {
    recordingSid: outcome.recordingSid ?? undefined,
    transcribe: true,
    afterCommit: () => deleteBlob(deps, key),
  });
};
