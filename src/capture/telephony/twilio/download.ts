import type { Deps } from '../../../deps.ts';
import { isUuid } from '../../../ids.ts';
import type { StageHandler } from '../../jobs/types.ts';
import { storeRecording } from '../../recording-ingest.ts';
import { findAccountBySid } from '../accounts.ts';
import { fetchRecordingMp3 } from './rest.ts';

/**
 * The download stage of a Twilio call: fetches <provider_recording_url>.mp3 with the account's
 * credentials (only from TWILIO_API_BASE_URL's origin), streams it into the blob store and stores it
 * through the ingest path (storeRecording: duration measured, recording_sid kept,
 * call.recording.ready, completion step). Idempotent: a call whose audio is already stored (or that
 * has nothing to fetch, or is gone) is 'skipped'; a failure throws and may simply be run again.
 */
export async function downloadRecording(deps: Deps, callId: string): Promise<'stored' | 'skipped'> {
  if (!isUuid(callId)) return 'skipped';
  const { rows } = await deps.db.query<{
    recording_state: string;
    recording_sid: string | null;
    provider_recording_url: string | null;
    provider_account_sid: string | null;
    erased_at: Date | null;
  }>(
    `SELECT recording_state, recording_sid, provider_recording_url, provider_account_sid, erased_at
       FROM calls WHERE id = $1 AND telephony_provider = 'twilio'`,
    [callId],
  );
  const call = rows[0];
  if (!call || call.erased_at || !call.provider_recording_url || !call.provider_account_sid) return 'skipped';
  if (call.recording_state !== 'pending' && call.recording_state !== 'refused') return 'skipped';
  const account = await findAccountBySid(deps, call.provider_account_sid);
  if (!account) throw new Error(`telephony account ${call.provider_account_sid} is no longer connected`);
  const audio = await fetchRecordingMp3(deps.config, account, call.provider_recording_url);
  await storeRecording(deps, callId, audio, { recordingSid: call.recording_sid ?? undefined });
  return 'stored';
}

/**
 * The durable download job (the processing jobs' download stage) is due this long after the
 * recording callback: the in-process attempts below (1 + 5 + 30 s of waits) have finished by then,
 * so the job runs only when they failed for good or their process died — and then downloads once.
 */
export const DOWNLOAD_FALLBACK_DELAY_MS = 2 * 60_000;

/** The download stage of the processing jobs: the same idempotent download, retried by the runner. */
export const downloadStage: StageHandler = async ({ deps, job }) => {
  await downloadRecording(deps, job.callId);
  return { kind: 'succeeded' };
};

/** Attempts of the in-process runner and the waits between them. */
const RETRY_DELAYS_MS = [1_000, 5_000, 30_000];
const running = new WeakMap<Deps, Set<Promise<void>>>();

/**
 * Runs downloadRecording after Twilio got its answer, in this process, with a few retries; every
 * failure is logged (without credentials). The processing-jobs room makes this durable by running
 * downloadRecording as its download stage instead.
 */
export function startRecordingDownload(deps: Deps, callId: string): void {
  const set = running.get(deps) ?? new Set();
  running.set(deps, set);
  const run = (async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        await downloadRecording(deps, callId);
        return;
      } catch (err) {
        const delay = RETRY_DELAYS_MS[attempt];
        deps.log.error(
          { call_id: callId, attempt: attempt + 1, err: (err as Error).message, retry_in_ms: delay ?? null },
          'twilio recording download failed',
        );
        if (delay === undefined) return;
        await new Promise((r) => setTimeout(r, delay).unref());
      }
    }
  })();
  set.add(run);
  void run.finally(() => set.delete(run));
}

/**
 * Resolves when every download started for these deps has finished (tests, shutdown), or after
 * timeoutMs. A download cut off by a shutdown leaves the call pending with its recording URL
 * stored: downloadRecording picks it up when run again.
 */
export async function settleRecordingDownloads(
  deps: Deps,
  timeoutMs = Number.POSITIVE_INFINITY,
): Promise<void> {
  const set = running.get(deps);
  const deadline = Date.now() + timeoutMs;
  while (set && set.size > 0 && Date.now() < deadline) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((r) => {
      timer = setTimeout(r, Math.min(deadline - Date.now(), 2 ** 31 - 1)).unref();
    });
    await Promise.race([Promise.allSettled([...set]), timeout]);
    clearTimeout(timer);
  }
}
