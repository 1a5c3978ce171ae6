import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import { canonicalAnalysis, type FollowupDraft } from '../domain/analysis.ts';
import { callAppUrl } from '../domain/call-view.ts';
import { EVENT_LINK_TTL_MS, mintRecordingLink } from '../recordings/links.ts';
import {
  callCompletedData,
  callTranscribedData,
  followupDraftedData,
  processingFactKey,
  trackerMatchedData,
} from '../webhooks/outbox/event-data/call-processing.ts';
import { emitEvents } from '../webhooks/outbox/outbox.ts';
import { findIngestCall, type IngestCall } from './call-record.ts';
import { type AlsoWrite, markCompletionDone } from './jobs/enqueue.ts';
import { matchTrackers, type Tracker } from './trackers.ts';

/**
 * The completion step: the processing run's events — call.transcribed and call.completed, plus
 * call.followup_email.drafted and call.tracker.matched where they apply — emitted together, once per
 * call, in the caller's transaction.
 *
 * call.completed is the integrator's primary record and its duration is the recording length, so the
 * run completes when the analysis is stored AND the recording is settled: stored, or known never to
 * come (refused, not captured, no_recording mode, deleted). A recording still pending holds the run
 * back for at most RECORDING_WAIT_MS after the analysis was stored; then the complete stage
 * (./jobs/stages/complete.ts) completes it with duration 0 and recording_url null, and call.recording.ready follows if the audio ever arrives.
 */

/** Carriers deliver recordings within minutes; past an hour the transcript is worth more now. */
export const RECORDING_WAIT_MS = 60 * 60 * 1000;

/** True when the recording will not change the completion any more. */
export function recordingSettled(c: Pick<IngestCall, 'recording_state' | 'recording_mode'>): boolean {
  return c.recording_state !== 'pending' || c.recording_mode === 'no_recording';
}

/** The analysis row as stored (call_analyses): what the completion events carry. */
export interface StoredAnalysis {
  transcript_original: string | null;
  analysis: Record<string, unknown>;
  followup_email: FollowupDraft | null;
}

/**
 * The call_analyses row storeAnalysis left to the caller's UPDATE of the call (deferProcessed): its
 * 8 values in INSERT order (call_id, organization_id, transcript_original, language, analysis,
 * followup_email, created_at = updated_at, evidence).
 */
export interface DeferredAnalysisRow {
  values: unknown[];
}

/**
 * The deferred analysis row written by the UPDATE of the call that follows it (`WITH a AS (<this>)
 * UPDATE calls … FROM a`), its parameters from $first on: the UPDATE copies the analysis' lead score
 * and search vector onto the call itself (what the call_analyses_to_call trigger does, migration
 * 0030), so the trigger, firing after the statement, finds them equal and writes nothing — one new
 * version of the call row instead of two (the calls row has a GIN index and five others).
 */
export function deferredAnalysisInsert(first: number): string {
  const p = (i: number) => `$${first + i}`;
  return `a AS (
      INSERT INTO call_analyses (call_id, organization_id, transcript_original, language, analysis, followup_email,
        created_at, updated_at, evidence)
      VALUES (${p(0)}::uuid, ${p(1)}::uuid, ${p(2)}, ${p(3)}, ${p(4)}::jsonb, ${p(5)}::jsonb, ${p(6)}::timestamptz, ${p(6)}::timestamptz, ${p(7)}::jsonb)
      RETURNING analysis, search_vector)`;
}

/** The SET items of that UPDATE that copy the analysis onto the call (the trigger's columns). */
export const ANALYSIS_COPY_SET = 'lead_score = call_lead_score(a.analysis), search_vector = a.search_vector';

/**
 * Emits the processing run's events when the call is ready for them (force: do not wait for a pending
 * recording any more). Returns true when it emitted them now. Safe to call any number of times.
 */
export async function completeIfReady(
  tx: Queryable,
  deps: Pick<Deps, 'clock' | 'config' | 'keys'>,
  callId: string,
  opts: {
    force?: boolean;
    /**
     * The call as the caller read it FOR UPDATE in this transaction, with what it changed since
     * (the analyse stage: processing_state processed): spares reading the locked row again.
     */
    locked?: IngestCall;
    /**
     * false when the caller marks the complete stage itself in this transaction (settleCompletion
     * enqueues it as succeeded right after): spares the UPDATE of a job row that is written again.
     */
    markJobDone?: boolean;
    /** the analysis the caller stored in this transaction (storeAnalysis): spares reading it back */
    stored?: StoredAnalysis;
    /** the organization's trackers as the caller read them with the call: spares reading them here */
    trackers?: Tracker[];
    /**
     * the call is marked processed by the completion mark's UPDATE (the analyse stage's
     * storeAnalysis deferred it; `locked` says processed already): one UPDATE of the row, not two.
     * With `analysis`, that UPDATE inserts the deferred call_analyses row too (deferredAnalysisInsert).
     */
    processed?: { callerName: string | null; analysis?: DeferredAnalysisRow };
    /**
     * the caller runs the completion mark's UPDATE itself, in the statement it runs next (the
     * complete stage's enqueue: settleCompletion): when the events are emitted it is left here,
     * not run — the caller must run it in this transaction
     */
    deferMark?: { write?: AlsoWrite };
  } = {},
): Promise<boolean> {
  const call =
    opts.locked && opts.locked.id === callId
      ? opts.locked
      : await findIngestCall(tx, callId, { forUpdate: true });
  if (!call || call.erased_at || call.processing_state !== 'processed' || call.completion_emitted_at)
    return false;
  if (!opts.force && !recordingSettled(call)) return false;
  const stored =
    opts.stored ??
    (
      await tx.query<StoredAnalysis>(
        'SELECT transcript_original, analysis, followup_email FROM call_analyses WHERE call_id = $1',
        [call.id],
        { name: 'capture_stored_analysis_v1' },
      )
    ).rows[0];
  if (!stored) return false;
  const analysis = canonicalAnalysis(stored.analysis);
  const now = deps.clock.now();
  const withheld = call.trashed_at !== null || call.deletion_scheduled_at !== null;
  const recordingUrl =
    call.recording_state === 'available' && !withheld
      ? mintRecordingLink(deps, call.id, EVENT_LINK_TTL_MS).url
      : null;

  // the events of the completion, in this order, in one statement (emitEvents)
  const factKey = processingFactKey(call.id);
  const events: { eventType: string; factKey: string; data: Record<string, unknown> }[] = [];
  const emit = (eventType: string, data: Record<string, unknown>) => {
    events.push({ eventType, factKey, data });
  };

  emit('call.transcribed', callTranscribedData(call.id, stored.transcript_original, analysis));
  emit(
    'call.completed',
    callCompletedData(
      {
        id: call.id,
        direction: call.direction,
        callerPhone: call.caller_phone,
        customerPhoneE164: call.customer_phone_e164,
        customerPhoneNational: call.customer_phone_national,
        companyPhoneE164: call.company_phone_e164,
        createdAt: call.created_at,
        duration: call.duration ?? 0,
      },
      {
        appUrl: callAppUrl(deps.config.publicBaseUrl, call.id),
        recordingUrl,
        analysis,
        transcriptOriginal: stored.transcript_original,
      },
    ),
  );
  if (stored.followup_email)
    emit('call.followup_email.drafted', followupDraftedData(call.id, stored.followup_email));
  const matches = matchTrackers(
    trackerText(stored, analysis),
    opts.trackers ?? (await loadTrackers(tx, call.organization_id)),
  );
  if (matches.length) emit('call.tracker.matched', trackerMatchedData(call.id, matches));
  await emitEvents(
    tx,
    {
      organizationId: call.organization_id,
      environment: call.environment,
      resourceId: call.id,
      callId: call.id,
      createdAt: now,
    },
    events,
  );

  // The matches stay on the call for its page (capture/call-page.ts), written with the completion mark.
  if (opts.deferMark && opts.processed) {
    const { callerName, analysis } = opts.processed;
    opts.deferMark.write = {
      name: analysis ? 'completion_processed_analysis_v1' : 'completion_processed_v1',
      params: [call.id, now, JSON.stringify(matches), callerName, ...(analysis?.values ?? [])],
      sql: (f) =>
        `${analysis ? `${deferredAnalysisInsert(f + 4)}, ` : ''}call_row AS (
           UPDATE calls SET completion_emitted_at = $${f + 1}::timestamptz, tracker_matches = $${f + 2}::jsonb,
                  processing_state = 'processed', pending_transcript = NULL, pending_transcript_language = NULL,
                  pending_transcript_times = NULL, caller_name = COALESCE(caller_name, $${f + 3}::text),
                  updated_at = $${f + 1}::timestamptz${analysis ? `, ${ANALYSIS_COPY_SET}` : ''}
             ${analysis ? 'FROM a ' : ''}WHERE id = $${f}::uuid)`,
    };
  } else if (opts.deferMark) {
    opts.deferMark.write = {
      name: 'completion_emitted_v1',
      params: [call.id, now, JSON.stringify(matches)],
      sql: (f) => `call_row AS (
           UPDATE calls SET completion_emitted_at = $${f + 1}::timestamptz, tracker_matches = $${f + 2}::jsonb
            WHERE id = $${f}::uuid)`,
    };
  } else if (opts.processed?.analysis) {
    await tx.query(
      `WITH ${deferredAnalysisInsert(5)}
       UPDATE calls SET completion_emitted_at = $2, tracker_matches = $3, processing_state = 'processed',
              pending_transcript = NULL, pending_transcript_language = NULL, pending_transcript_times = NULL,
              caller_name = COALESCE(caller_name, $4), updated_at = $2, ${ANALYSIS_COPY_SET}
         FROM a WHERE id = $1`,
      [call.id, now, JSON.stringify(matches), opts.processed.callerName, ...opts.processed.analysis.values],
      { name: 'capture_completion_emitted_processed_analysis_v1' },
    );
  } else if (opts.processed) {
    await tx.query(
      `UPDATE calls SET completion_emitted_at = $2, tracker_matches = $3, processing_state = 'processed',
              pending_transcript = NULL, pending_transcript_language = NULL, pending_transcript_times = NULL,
              caller_name = COALESCE(caller_name, $4), updated_at = $2
        WHERE id = $1`,
      [call.id, now, JSON.stringify(matches), opts.processed.callerName],
      { name: 'capture_completion_emitted_processed_v1' },
    );
  } else {
    await tx.query(
      'UPDATE calls SET completion_emitted_at = $2, tracker_matches = $3 WHERE id = $1',
      [call.id, now, JSON.stringify(matches)],
      { name: 'capture_completion_emitted_v2' },
    );
  }
  // Done here (a recording settled, or the analysis stage): the complete stage has nothing left to do.
  if (opts.markJobDone !== false) await markCompletionDone(tx, call.id, now);
  return true;
}

/** Trackers match the verbatim transcript; an imported call without one is matched on its analysis text. */
function trackerText(
  stored: StoredAnalysis,
  a: { summary: string | null; additional_details: string | null },
) {
  return stored.transcript_original ?? [a.summary, a.additional_details].filter(Boolean).join('\n');
}

async function loadTrackers(tx: Queryable, organizationId: string): Promise<Tracker[]> {
  const { rows } = await tx.query<Tracker>(
    'SELECT id, name, terms FROM trackers WHERE organization_id = $1 ORDER BY created_at, id',
    [organizationId],
    { name: 'capture_trackers_v1' },
  );
  return rows;
}

/**
 * For the recordings side: call inside the transaction that stored the audio (PUT …/recording), or
 * refused it (…/recording-refused). A processed call waiting for its recording completes there.
 */
export function onRecordingStored(
  tx: Queryable,
  deps: Pick<Deps, 'clock' | 'config' | 'keys'>,
  callId: string,
) {
  return completeIfReady(tx, deps, callId);
}
