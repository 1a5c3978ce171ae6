import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import type { FollowupDraft, ProcessedAnalysis } from '../domain/analysis.ts';
import { AppError } from '../errors.ts';
import { type Analyzer, ruleBasedAnalyzer } from './analyzer.ts';
import { findIngestCall, lockLiveCall } from './call-record.ts';
import { completeIfReady, RECORDING_WAIT_MS } from './completion.ts';

/**
 * The transcript pipeline. POST …/transcript stores the raw text in the call's inbox and marks it
 * queued (submitTranscript); the analysis then runs in-process right after the response
 * (processTranscript), and the worker's processQueuedTranscripts heals whatever a crash left queued.
 * Analysis runs outside any transaction (a real provider takes seconds); its result is written, and
 * the completion step run, in one transaction that re-checks the call under a row lock, so two runs of
 * the same transcript store it once.
 */

/** A queued transcript is left to its in-process run for this long before the worker takes it over. */
export const QUEUE_TAKEOVER_MS = 2 * 60 * 1000;
const BATCH = 50;

export interface TranscriptInput {
  text: string;
  language?: string | null;
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
      if (existing !== input.text) {
        throw new AppError(
          'CONFLICT',
          'This call already has a different transcript; a call is transcribed once. Re-post the same text to retry safely.',
        );
      }
      return { call_id: call.id, processing_state: call.processing_state, queued: false };
    }
    await tx.query(
      `UPDATE calls SET pending_transcript = $2, pending_transcript_language = $3, processing_state = 'queued',
              updated_at = $4
        WHERE id = $1`,
      [call.id, input.text, input.language ?? null, deps.clock.now()],
    );
    return { call_id: call.id, processing_state: 'queued', queued: true };
  });
}

async function storedTranscript(tx: Queryable, callId: string): Promise<string | null> {
  const { rows } = await tx.query<{ t: string | null }>(
    'SELECT transcript_original AS t FROM call_analyses WHERE call_id = $1',
    [callId],
  );
  return rows[0]?.t ?? null;
}

/** Stores the analysis (call_analyses) and marks the call processed; the caller runs the completion. */
export async function storeAnalysis(
  tx: Queryable,
  a: {
    callId: string;
    organizationId: string;
    transcriptOriginal: string | null;
    analysis: ProcessedAnalysis;
    followup: FollowupDraft | null;
    now: Date;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, language, analysis, followup_email,
       created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [
      a.callId,
      a.organizationId,
      a.transcriptOriginal,
      a.analysis.detected_language ?? a.followup?.language ?? null,
      JSON.stringify(a.analysis),
      a.followup ? JSON.stringify(a.followup) : null,
      a.now,
    ],
  );
  await tx.query(
    `UPDATE calls SET processing_state = 'processed', pending_transcript = NULL, pending_transcript_language = NULL,
            caller_name = COALESCE(caller_name, $2), updated_at = $3
      WHERE id = $1`,
    [a.callId, a.analysis.caller_name, a.now],
  );
}

/** Analyses one queued transcript and completes the call if it is ready. Returns true when it stored it. */
export async function processTranscript(deps: Deps, callId: string, analyzer: Analyzer): Promise<boolean> {
  const call = await findIngestCall(deps.db, callId);
  if (!call || call.erased_at || call.processing_state !== 'queued' || call.pending_transcript === null)
    return false;
  const text = call.pending_transcript;
  const result = await analyzer.analyze({
    transcript: text,
    direction: call.direction,
    language: call.pending_transcript_language,
    organization: { name: call.org_name, language: call.org_language },
  });
  return deps.db.transaction(async (tx) => {
    const fresh = await findIngestCall(tx, callId, { forUpdate: true });
    if (
      !fresh ||
      fresh.erased_at ||
      fresh.processing_state !== 'queued' ||
      fresh.pending_transcript !== text
    ) {
      return false;
    }
    await storeAnalysis(tx, {
      callId: fresh.id,
      organizationId: fresh.organization_id,
      transcriptOriginal: text,
      analysis: result.analysis,
      followup: result.followup,
      now: deps.clock.now(),
    });
    await completeIfReady(tx, deps, fresh.id);
    return true;
  });
}

/**
 * The worker's sweep: analyses transcripts left queued (older than minAgeMs, so an in-process run is
 * not duplicated), and completes processed calls whose recording has been pending longer than
 * RECORDING_WAIT_MS. Each call is its own transaction; one failure does not stop the others.
 */
export async function processQueuedTranscripts(
  deps: Deps,
  opts: { analyzer?: Analyzer; minAgeMs?: number } = {},
): Promise<{ analysed: number; completed: number }> {
  const analyzer = opts.analyzer ?? ruleBasedAnalyzer();
  const now = deps.clock.now().getTime();
  const queued = await deps.db.query<{ id: string }>(
    `SELECT id FROM calls WHERE processing_state = 'queued' AND erased_at IS NULL AND updated_at <= $1
      ORDER BY updated_at LIMIT ${BATCH}`,
    [new Date(now - (opts.minAgeMs ?? QUEUE_TAKEOVER_MS))],
  );
  let analysed = 0;
  for (const { id } of queued.rows) {
    try {
      if (await processTranscript(deps, id, analyzer)) analysed++;
    } catch (err) {
      deps.log.error({ err, callId: id }, 'transcript analysis failed; it stays queued');
    }
  }
  const overdue = await deps.db.query<{ id: string }>(
    `SELECT c.id FROM calls c JOIN call_analyses a ON a.call_id = c.id
      WHERE c.processing_state = 'processed' AND c.completion_emitted_at IS NULL AND c.erased_at IS NULL
        AND a.created_at <= $1
      ORDER BY a.created_at LIMIT ${BATCH}`,
    [new Date(now - RECORDING_WAIT_MS)],
  );
  let completed = 0;
  for (const { id } of overdue.rows) {
    try {
      if (await deps.db.transaction((tx) => completeIfReady(tx, deps, id, { force: true }))) completed++;
    } catch (err) {
      deps.log.error({ err, callId: id }, 'completing a call without its recording failed');
    }
  }
  return { analysed, completed };
}
