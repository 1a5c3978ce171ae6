import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import type { FollowupDraft, ProcessedAnalysis } from '../domain/analysis.ts';
import type { AnalyzerResult, TranscriptSegment } from '../domain/capture-providers.ts';
import type { TalkMetrics } from '../domain/talk-metrics.ts';
import { AppError } from '../errors.ts';
import { type IngestCall, lockLiveCall } from './call-record.ts';
import {
  ANALYSIS_COPY_SET,
  completeIfReady,
  type DeferredAnalysisRow,
  deferredAnalysisInsert,
  RECORDING_WAIT_MS,
  type StoredAnalysis,
} from './completion.ts';
import { type AlsoWrite, enqueueStage } from './jobs/enqueue.ts';
import type { RunChain } from './jobs/types.ts';
import { redacted, redactionEnabled, redactStrings, redactText } from './redaction/index.ts';
import { type ProviderDeletion, providerDeletionSet } from './telephony/provider-recordings.ts';
import type { Tracker } from './trackers.ts';
import { transcriptTimes } from './transcript-times.ts';

/**
 * The transcript pipeline. A transcript — posted by an adapter (POST …/transcript) or written by
 * the transcribe stage — is stored in the call's inbox (processing_state queued) and the analyse
 * stage is queued in the same transaction; the job runner (./jobs/) analyses it, stores the
 * analysis and, in that transaction, emits the completion events once the recording has settled
 * (settleCompletion). A crash anywhere leaves a job row that runs again.
 */

export interface TranscriptInput {
  text: string;
  language?: string | null;
  /**
   * The transcribe stage silenced the redacted words in the stored recording (it had word times).
   * Otherwise, when redaction took something out, the call is flagged: its audio may still hold it.
   */
  audioSilenced?: boolean;
  /** each line's [start, end] in seconds, when the speech-to-text provider gave segment times */
  lineTimes?: [number, number][] | null;
  /** measured on a dual-channel recording (docs/capture.md "Talk metrics") */
  talkMetrics?: TalkMetrics | null;
  /**
   * The speech-to-text segments `text` was written from (the transcribe stage): where each turn was
   * said is kept beside the transcript (calls.pending_transcript_times, ./transcript-times.ts) to time
   * the evidence of the analysis. Absent for an adapter's transcript.
   */
  segments?: readonly TranscriptSegment[];
  /** the transcribe stage's runner, which runs the analysis next itself (./jobs/runner.ts "The chain") */
  chain?: RunChain;
  /** the organization's redaction setting when the caller read it in this transaction already */
  redaction?: boolean;
  /**
   * the carrier's answer to the DELETE of its copy, which the transcribe stage left to this
   * transaction (deleteCarrierCopy's deferWrite): written by the transcript's UPDATE of the call
   */
  providerDeletion?: ProviderDeletion | null;
}

/**
 * One transcript per call. Re-posting the same text is harmless (202, nothing new); a different text
 * for a call that already has one answers 409 CONFLICT: call.completed is emitted once per call.
 */
export async function submitTranscript(
  deps: Deps,
  callId: string,
  input: TranscriptInput,
): Promise<{ call_id: string; processing_state: string; queued: boolean }> {
  return deps.db.transaction(async (tx) => {
    const call = await lockLiveCall(tx, callId);
    if (call.processing_state !== 'none') {
      const existing =
        call.processing_state === 'queued' ? call.pending_transcript : await storedTranscript(tx, call.id);
      // what was stored is the redacted text: the same post redacts to it
      const same = (await redactionEnabled(tx, call.organization_id)) ? redacted(input.text) : input.text;
      if (existing !== same) {
        throw new AppError(
          'CONFLICT',
          'This call already has a different transcript; a call is transcribed once. Re-post the same text to retry safely.',
        );
      }
      return { call_id: call.id, processing_state: call.processing_state, queued: false };
    }
    await queueTranscript(tx, deps, call, input);
    return { call_id: call.id, processing_state: 'queued', queued: true };
  });
}

/**
 * Stores a transcript in the inbox of a call that has none (locked by the caller) and queues its
 * analysis, in the caller's transaction. This is the one door a transcript takes into the database:
 * when the organization has redaction on (docs/capture.md "Redaction") the text is redacted here,
 * before its first write, whoever brought it (the transcribe stage, which redacts first to silence
 * the audio too, an adapter's POST …/transcript, an imported call). Redacting a redacted text
 * changes nothing.
 */
export async function queueTranscript(
  tx: Queryable,
  deps: Pick<Deps, 'clock'>,
  call: Pick<IngestCall, 'id' | 'organization_id'>,
  input: TranscriptInput,
): Promise<void> {
  const now = deps.clock.now();
  const r =
    (input.redaction ?? (await redactionEnabled(tx, call.organization_id)))
      ? redactText(input.text)
      : { text: input.text, spans: [] };
  const text = r.text;
  const audio = text === input.text ? null : input.audioSilenced ? 'silenced' : 'no_word_times';
  const times = input.segments ? transcriptTimes(input.text, input.segments, r.spans) : null;
  // the transcript's UPDATE of the call rides in the analyse stage's enqueue (one statement)
  const $ = (first: number) => (i: number) => `$${first + i - 1}`;
  await enqueueStage(tx, {
    organizationId: call.organization_id,
    callId: call.id,
    stage: 'analyse',
    now,
    chain: input.chain,
    also: {
      name: 'queue_transcript_v5',
      sql: (first) => {
        const p = $(first);
        return `call_row AS (UPDATE calls SET pending_transcript = ${p(2)}, pending_transcript_language = ${p(3)}, processing_state = 'queued',
            audio_redaction = ${p(5)}, updated_at = ${p(4)}::timestamptz, transcript_times = ${p(6)}::jsonb,
            talk_metrics = ${p(7)}::jsonb, pending_transcript_times = ${p(8)}::jsonb, ${providerDeletionSet(p(9), p(10))}
      WHERE id = ${p(1)}::uuid)`;
      },
      params: [
        call.id,
        text,
        input.language ?? null,
        now,
        audio,
        input.lineTimes ? JSON.stringify(input.lineTimes) : null,
        input.talkMetrics ? JSON.stringify(input.talkMetrics) : null,
        times ? JSON.stringify(times) : null,
        input.providerDeletion?.recordingSid ?? null,
        input.providerDeletion?.at ?? null,
      ],
    },
  });
}

async function storedTranscript(tx: Queryable, callId: string): Promise<string | null> {
  const { rows } = await tx.query<{ t: string | null }>(
    'SELECT transcript_original AS t FROM call_analyses WHERE call_id = $1',
    [callId],
  );
  return rows[0]?.t ?? null;
}

/**
 * Stores the analysis (call_analyses) and marks the call processed; the caller runs the completion.
 * With redaction on, the transcript and every string of the analysis and the draft are redacted
 * again here: the analysis ran on a redacted transcript, and an imported analysis or a model that
 * made a number up is caught at this second line.
 */
export async function storeAnalysis(
  tx: Queryable,
  input: {
    callId: string;
    organizationId: string;
    transcriptOriginal: string | null;
    analysis: ProcessedAnalysis;
    followup: FollowupDraft | null;
    /** the words each field was read from (call_analyses.evidence), when the analyser gave them */
    evidence?: AnalyzerResult['evidence'] | null;
    now: Date;
    /** the call's voicemail flag when the caller read the locked row already */
    voicemail?: boolean;
    /** the organization's redaction setting when the caller read it in this transaction already */
    redaction?: boolean;
    /**
     * the caller marks the call processed itself, with the completion's UPDATE (settleCompletion's
     * `processed`), and that UPDATE inserts the call_analyses row too: this writes nothing and
     * answers the row in `deferred` (settleCompletion's `processed.analysis`, which must be given it)
     */
    deferProcessed?: boolean;
  },
): Promise<StoredAnalysis & { deferred?: DeferredAnalysisRow }> {
  const a =
    (input.redaction ?? (await redactionEnabled(tx, input.organizationId)))
      ? {
          ...input,
          transcriptOriginal: input.transcriptOriginal === null ? null : redacted(input.transcriptOriginal),
          analysis: redactStrings(input.analysis),
          followup: redactStrings(input.followup),
          evidence: redactStrings(input.evidence),
        }
      : input;
  // A voicemail (telephony: the caller alone, <Record>) is one-sided: never a follow-up draft.
  const voicemail =
    a.voicemail ??
    (await tx.query<{ voicemail: boolean }>('SELECT voicemail FROM calls WHERE id = $1', [a.callId])).rows[0]
      ?.voicemail === true;
  const followup = voicemail ? null : a.followup;
  const analysisJson = JSON.stringify(a.analysis);
  const followupJson = followup ? JSON.stringify(followup) : null;
  const row: DeferredAnalysisRow = {
    values: [
      a.callId,
      a.organizationId,
      a.transcriptOriginal,
      a.analysis.detected_language ?? followup?.language ?? null,
      analysisJson,
      followupJson,
      a.now,
      a.evidence && Object.keys(a.evidence).length ? JSON.stringify(a.evidence) : null,
    ],
  };
  // the row as written (JSON values as they read back: no undefined, no Date), for the completion
  const stored: StoredAnalysis = {
    transcript_original: a.transcriptOriginal,
    analysis: JSON.parse(analysisJson) as Record<string, unknown>,
    followup_email: followupJson === null ? null : (JSON.parse(followupJson) as FollowupDraft),
  };
  if (input.deferProcessed) return { ...stored, deferred: row };
  // stored and the call marked processed in one statement (one new version of the call row)
  await markProcessed(tx, a.callId, a.analysis.caller_name ?? null, a.now, row);
  return stored;
}

/** markProcessed as a write riding in another statement (enqueueStage's also). */
function processedWrite(
  now: Date,
  callId: string,
  callerName: string | null,
  analysis?: DeferredAnalysisRow,
): AlsoWrite {
  return {
    name: analysis ? 'processed_analysis_v1' : 'processed_v1',
    params: [callId, callerName, now, ...(analysis?.values ?? [])],
    sql: (f) =>
      `${analysis ? `${deferredAnalysisInsert(f + 3)}, ` : ''}call_row AS (
         UPDATE calls SET processing_state = 'processed', pending_transcript = NULL, pending_transcript_language = NULL,
                pending_transcript_times = NULL, caller_name = COALESCE(caller_name, $${f + 1}::text),
                updated_at = $${f + 2}::timestamptz${analysis ? `, ${ANALYSIS_COPY_SET}` : ''}
           ${analysis ? 'FROM a ' : ''}WHERE id = $${f}::uuid)`,
  };
}

/**
 * The call's analysis is stored: processed, its queued transcript cleared, the caller's name kept if
 * it had none. With `analysis`, the deferred call_analyses row is inserted by the same statement.
 */
async function markProcessed(
  tx: Queryable,
  callId: string,
  callerName: string | null,
  now: Date,
  analysis?: DeferredAnalysisRow,
) {
  if (analysis) {
    await tx.query(
      `WITH ${deferredAnalysisInsert(4)}
       UPDATE calls SET processing_state = 'processed', pending_transcript = NULL, pending_transcript_language = NULL,
              pending_transcript_times = NULL, caller_name = COALESCE(caller_name, $2), updated_at = $3, ${ANALYSIS_COPY_SET}
         FROM a WHERE id = $1`,
      [callId, callerName, now, ...analysis.values],
      { name: 'capture_call_processed_analysis_v1' },
    );
    return;
  }
  await tx.query(
    `UPDATE calls SET processing_state = 'processed', pending_transcript = NULL, pending_transcript_language = NULL,
            pending_transcript_times = NULL, caller_name = COALESCE(caller_name, $2), updated_at = $3
      WHERE id = $1`,
    [callId, callerName, now],
    { name: 'capture_call_processed_v2' },
  );
}

/**
 * After an analysis was stored (in the same transaction; `call` may be the row the caller locked
 * before it, read again otherwise): the completion events go out now when the
 * recording has settled; otherwise the complete stage waits for the recording, up to
 * RECORDING_WAIT_MS after the analysis (./jobs/stages/complete.ts), and a recording stored,
 * refused or deleted meanwhile completes the call in its own transaction.
 */
export async function settleCompletion(
  tx: Queryable,
  deps: Pick<Deps, 'clock' | 'config' | 'keys'>,
  call: Pick<IngestCall, 'id' | 'organization_id'> | IngestCall,
  /** what storeAnalysis stored and the trackers read with the call, when the caller has them */
  known: {
    stored?: StoredAnalysis;
    trackers?: Tracker[];
    /**
     * storeAnalysis ran with deferProcessed: the call is marked processed here — with the
     * completion's UPDATE when it completes now, on its own otherwise (one UPDATE either way)
     */
    processed?: { callerName: string | null; analysis?: DeferredAnalysisRow };
  } = {},
): Promise<void> {
  const now = deps.clock.now();
  // A whole row is the one the caller locked before storeAnalysis, which made it processed.
  const locked = 'recording_state' in call ? { ...call, processing_state: 'processed' as const } : undefined;
  // when emitted, the enqueue below marks the complete stage succeeded (what markCompletionDone does);
  // the completion mark's UPDATE of the call (or, not emitted, the processed mark's) rides in it
  const deferMark: { write?: AlsoWrite } = {};
  const emitted = await completeIfReady(tx, deps, call.id, {
    locked,
    markJobDone: false,
    deferMark,
    ...known,
  });
  const also = emitted
    ? deferMark.write
    : known.processed && processedWrite(now, call.id, known.processed.callerName, known.processed.analysis);
  await enqueueStage(tx, {
    organizationId: call.organization_id,
    callId: call.id,
    stage: 'complete',
    now,
    also: also || undefined,
    ...(emitted
      ? { state: 'succeeded' }
      : { state: 'waiting', at: new Date(now.getTime() + RECORDING_WAIT_MS) }),
  });
}
