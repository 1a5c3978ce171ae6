import { Readable } from 'node:stream';
import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import { MESSAGES, recordingAvailability } from '../domain/recording-availability.ts';
import { consentAllowsRecording } from '../domain/recording-consent.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { factsOf, findRecordingCall, type RecordingCall } from '../recordings/call-recording.ts';
import { EVENT_LINK_TTL_MS, mintRecordingLink } from '../recordings/links.ts';
import { capped, cappedChunks, MAX_RECORDING_BYTES, Mp3Sniffer, measureMp3 } from '../recordings/measure.ts';
import { recordingReadyData, recordingReadyFactKey } from '../webhooks/outbox/event-data/recording.ts';
import { emitEvent } from '../webhooks/outbox/outbox.ts';
import { completeIfReady } from './completion.ts';
import { enqueueStage } from './jobs/enqueue.ts';
import { RunCancelled, type RunChain, type StageOutcome } from './jobs/types.ts';

/** What the transaction that stores audio reads of the call, locked (findRecordingCall's row, or a job run's lock). */
export type AudioCall = Pick<
  RecordingCall,
  | 'id'
  | 'organization_id'
  | 'environment'
  | 'direction'
  | 'recording_state'
  | 'recording_mode'
  | 'recording_consent'
  | 'outbound_lifecycle'
  | 'recording_key'
  | 'trashed_at'
  | 'deletion_scheduled_at'
  | 'pending_deletion_at'
  | 'erased_at'
  | 'processing_state'
>;

/**
 * Audio may be stored for a call unless that would contradict an answer the service already gave:
 * an erased call is gone (404); a call whose recording-url answers 410 (deleted, never captured)
 * must keep answering 410, and a call in no_recording mode, or whose caller refused the recording
 * at the consent announcement, must not hold audio (409 CONFLICT). Checked again under the call's
 * lock in the transaction that stores the audio: no path (the Twilio download, an operator upload)
 * stores audio the caller refused.
 */
function assertAcceptsAudio(call: AudioCall | null): asserts call is AudioCall {
  if (!call || call.erased_at) throw new AppError('NOT_FOUND', MESSAGES.NOT_FOUND);
  if (call.recording_mode === 'no_recording') {
    throw new AppError('CONFLICT', 'The call runs in no_recording mode; its audio must not be stored.');
  }
  if (!consentAllowsRecording(call.recording_consent)) {
    throw new AppError(
      'CONFLICT',
      'The caller refused the recording at the consent announcement; its audio must not be stored.',
    );
  }
  const a = recordingAvailability(factsOf(call));
  if (!a.available && a.status === 410) {
    throw new AppError(
      'CONFLICT',
      `The call's recording-url already answers ${a.code}, which is final; audio can no longer be stored for it.`,
    );
  }
}

/** A recording in the blob store, measured, not yet the call's (prepareRecording). */
export interface PreparedRecording {
  callId: string;
  key: string;
  bytes: number;
  duration: number;
}

/** What writeRecording wrote: whether the transcription was queued, and the blob the call held before. */
export interface WrittenRecording {
  transcriptionQueued: boolean;
  previousKey: string | null;
}

/**
 * PUT /admin/v1/calls/{id}/recording: streams the body into a fresh blob (one per upload, so a bad
 * re-upload never destroys a good file), measures its duration from the stored frames, then in ONE
 * transaction marks the recording available, emits call.recording.ready and runs the capture
 * pipeline's completion step (a processed call waiting for its audio completes) — or, for a call
 * without a transcript, queues its transcription when a speech-to-text provider is configured (with
 * TRANSCRIPTION_PROVIDER=none the call waits for a transcript posted by an adapter, POST
 * …/transcript; `transcribe` queues it anyway: the simulated carrier's calls are transcribed from
 * their script). The call's processing state comes back from the UPDATE that stores the audio, so
 * neither step reads the call again. The previous blob of a
 * re-upload is deleted after the commit; the new one is deleted whenever the upload does not commit.
 * Its three steps, for a caller whose transaction is another's (the download stage's write, in its
 * job run's transaction): prepareRecording, writeRecording, settleRecording.
 */
export async function storeRecording(
  deps: Deps,
  callId: string,
  body: Readable | AsyncIterable<Buffer>,
  opts: {
    recordingSid?: string;
    transcribe?: boolean;
    /** the download stage's runner, which transcribes next itself (./jobs/runner.ts "The chain") */
    chain?: RunChain;
    /** the call as the caller read it just now (unlocked; checked again under the lock) */
    before?: RecordingCall;
  } = {},
): Promise<{ transcriptionQueued: boolean }> {
  const prepared = await prepareRecording(deps, callId, body, { before: opts.before });
  let written: WrittenRecording | null = null;
  try {
    written = await deps.db.transaction(async (tx) =>
      writeRecording(tx, deps, await findRecordingCall(tx, callId, { forUpdate: true }), prepared, opts),
    );
  } finally {
    await settleRecording(deps, prepared, written);
  }
  return { transcriptionQueued: written.transcriptionQueued };
}

/**
 * The first step of storeRecording, before its transaction: the call checked as the caller read it
 * (`before`, else read now: 404 / 409 as assertAcceptsAudio), the body streamed into a fresh blob
 * (capped at MAX_RECORDING_BYTES: 413 PAYLOAD_TOO_LARGE) and measured (not an MP3: 400
 * BAD_REQUEST). A blob that fails is deleted; one that succeeds is the caller's to settle.
 */
export async function prepareRecording(
  deps: Deps,
  callId: string,
  body: Readable | AsyncIterable<Buffer>,
  opts: { before?: RecordingCall } = {},
): Promise<PreparedRecording> {
  const before = opts.before ?? (await findRecordingCall(deps.db, callId));
  assertAcceptsAudio(before);
  const key = `recordings/${before.organization_id}/${before.id}/${newId()}.mp3`;
  let measured = false;
  try {
    const sniffer = new Mp3Sniffer();
    // a Readable (an operator's upload) through the capping Transform; the download's chunks, each
    // valid until the next is asked for, one at a time straight to the store (nothing queued)
    const { bytes } = await deps.store.put(
      key,
      body instanceof Readable
        ? capped(body, MAX_RECORDING_BYTES, sniffer)
        : cappedChunks(body, MAX_RECORDING_BYTES, sniffer),
    );
    const duration = await measureMp3(deps.store, key, bytes, sniffer);
    if (duration === null) {
      throw new AppError(
        'BAD_REQUEST',
        'body is not an MP3 file: send MPEG audio frames with Content-Type: audio/mpeg.',
      );
    }
    measured = true;
    return { callId: before.id, key, bytes, duration };
  } finally {
    if (!measured) await deleteBlob(deps, key);
  }
}

/**
 * The transaction of storeRecording, in the caller's transaction, after the call's lock (`call`:
 * the locked row; null: gone): the call checked again (404 / 409 as assertAcceptsAudio), the
 * recording marked available, call.recording.ready emitted, then the completion step or the
 * transcription queued (`chain`: leased to the runner that transcribes next).
 */
export async function writeRecording(
  tx: Queryable,
  deps: Deps,
  call: AudioCall | null,
  prepared: PreparedRecording,
  opts: { recordingSid?: string; transcribe?: boolean; chain?: RunChain } = {},
): Promise<WrittenRecording> {
  assertAcceptsAudio(call);
  const { key, bytes, duration } = prepared;
  const now = deps.clock.now();
  // as the lock read it (this transaction's UPDATE below leaves it as it is)
  const processing = call.processing_state;
  const params = [call.id, key, bytes, duration, opts.recordingSid ?? null, now];
  // A call whose transcription is queued next: the UPDATE rides in that enqueue (one statement),
  // after the event (which reads nothing of it). Otherwise it comes first: the completion reads it.
  const queueTranscription = processing === 'none' && !!(deps.capture.transcription || opts.transcribe);
  if (!queueTranscription) {
    await tx.query(
      `UPDATE calls SET recording_state = 'available', recording_key = $2, recording_bytes = $3, duration = $4,
              recording_sid = COALESCE($5, recording_sid), updated_at = $6
        WHERE id = $1`,
      params,
      { name: 'capture_recording_stored_v2' },
    );
  }
  await emitEvent(tx, {
    organizationId: call.organization_id,
    environment: call.environment,
    eventType: 'call.recording.ready',
    resourceId: call.id,
    callId: call.id,
    factKey: recordingReadyFactKey(call.id),
    data: recordingReadyData(call.id, mintRecordingLink(deps, call.id, EVENT_LINK_TTL_MS).url, duration),
    createdAt: now,
  });
  // A processed call that waited for its audio completes now (call.completed with this recording);
  // one without a transcript yet (the telephony path) queues its transcription.
  if (processing === 'processed') await completeIfReady(tx, deps, call.id);
  if (queueTranscription) {
    await enqueueStage(tx, {
      organizationId: call.organization_id,
      callId: call.id,
      stage: 'transcribe',
      now,
      chain: opts.chain,
      also: {
        name: 'recording_stored_v2',
        params,
        sql: (f) => `call_row AS (
          UPDATE calls SET recording_state = 'available', recording_key = $${f + 1}::text,
                 recording_bytes = $${f + 2}, duration = $${f + 3},
                 recording_sid = COALESCE($${f + 4}::text, recording_sid), updated_at = $${f + 5}::timestamptz
           WHERE id = $${f}::uuid)`,
      },
    });
  }
  return { transcriptionQueued: queueTranscription, previousKey: call.recording_key };
}

/**
 * The last step of storeRecording, after its transaction: committed (`written`), the blob the call
 * held before is deleted; not committed (null), the prepared blob is.
 */
export async function settleRecording(
  deps: Deps,
  prepared: PreparedRecording,
  written: WrittenRecording | null,
): Promise<void> {
  if (!written) await deleteBlob(deps, prepared.key);
  else if (written.previousKey && written.previousKey !== prepared.key)
    await deleteBlob(deps, written.previousKey);
}

/**
 * storeRecording as a job run's outcome (the download stages): the recording already in the blob
 * store (prepareRecording) is stored by the run's write — writeRecording in the run's own
 * transaction, after its lock (the call locked, the lease checked, the job ended: lockAndEndRun), so
 * a run that lost its lease stores nothing. A call that refuses the audio now (erased, its recording
 * refused or final) cancels the run with the reason (RunCancelled), as the same check before the
 * fetch does. After the commit the blob the call held before is deleted, then `afterCommit` runs
 * (with the locked call's redaction setting); not committed (the lease lost, the write failed or
 * cancelled), the prepared blob is deleted.
 */
export function storedByRun(
  deps: Deps,
  recording: PreparedRecording,
  opts: {
    recordingSid?: string;
    transcribe?: boolean;
    chain?: RunChain;
    afterCommit?: (w: WrittenRecording & { redactionEnabled: boolean }) => Promise<void>;
  },
): StageOutcome {
  let written: (WrittenRecording & { redactionEnabled: boolean }) | null = null;
  return {
    kind: 'succeeded',
    write: async (tx, call) => {
      try {
        const w = await writeRecording(tx, deps, call, recording, opts);
        written = { ...w, redactionEnabled: call?.redaction_enabled === true };
      } catch (err) {
        if (err instanceof AppError && (err.code === 'CONFLICT' || err.code === 'NOT_FOUND')) {
          throw new RunCancelled(`not stored: ${err.message}`);
        }
        throw err;
      }
    },
    after: async (committed) => {
      const stored = committed ? written : null;
      await settleRecording(deps, recording, stored);
      if (stored) await opts.afterCommit?.(stored);
    },
  };
}

/** Best effort: a blob that cannot be deleted is logged for the operator, never surfaced to the caller. */
export async function deleteBlob(deps: Deps, key: string): Promise<void> {
  try {
    await deps.store.delete(key);
  } catch (err) {
    deps.log.error({ err, key }, 'could not delete recording blob');
  }
}
