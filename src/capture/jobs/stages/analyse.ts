import type { Deps } from '../../../deps.ts';
import {
  type AnalysisProvider,
  type AnalyzerResult,
  ProviderError,
} from '../../../domain/capture-providers.ts';
import { ruleBasedAnalyzer, silentCallResult } from '../../analyzer.ts';
import { findIngestCallWithTimes, type IngestCall } from '../../call-record.ts';
import { settleCompletion, storeAnalysis } from '../../pipeline.ts';
import { nothingSaid } from '../../transcript-text.ts';
import { timedEvidence } from '../../transcript-times.ts';
import type { StageHandler } from '../types.ts';

/**
 * The analyse stage: the queued transcript through deps.capture.analysis (the analysis and the
 * follow-up draft come in one answer). The provider runs outside any transaction; its result is
 * stored, and the completion events emitted when the recording has settled, in the run's
 * transaction under the call's lock, only if the transcript is still the one analysed.
 *
 * An answer that broke the schema (ProviderError invalid_output, after the provider's own retry)
 * puts the call in review: review_status needs_review, no analysis stored, and no completion events
 * — call.transcribed and call.completed carry a processed analysis, and none was produced, so
 * nothing goes out until a reprocess (with a fixed model or prompt) analyses it. The transcript
 * stays in the call's inbox for that. It is logged at warn, as the runner logs a stage that gives up.
 *
 * A transcript in which nobody said anything (empty, whitespace, speaker labels alone: a call whose
 * channels were all silent) is analysed by no provider: its analysis is all null and it has no
 * draft (silentCallResult) — a model handed silence invents a caller. A value the model put in a
 * field the call forbids was dropped by the provider (droppedFields): logged here at warn, by name.
 * Each field's evidence gets its time (`start`, seconds from the recording start) from the times the
 * transcribe stage kept beside the transcript (calls.pending_transcript_times).
 */
/**
 * The analysis provider of a call: a test-mode call (the simulated carrier's, or any test call) is analysed by the
 * built-in rules, so that it reaches no provider, unless the operator opted in with
 * TEST_MODE_ANALYSIS=provider (spec/api-v1-additions.md "Test mode").
 */
function analysisOf(deps: Deps, call: Pick<IngestCall, 'environment'>): AnalysisProvider {
  if (call.environment === 'test' && deps.config.TEST_MODE_ANALYSIS !== 'provider') {
    return RULES;
  }
  return deps.capture.analysis;
}

const RULES: AnalysisProvider = { name: 'rules', ...ruleBasedAnalyzer() };

export const analyseStage: StageHandler = async ({ deps, job }) => {
  const call = await findIngestCallWithTimes(deps.db, job.callId);
  if (!call || call.erased_at) return { kind: 'cancelled', reason: 'the call was erased' };
  if (call.processing_state === 'processed') return { kind: 'succeeded' };
  if (call.processing_state !== 'queued' || call.pending_transcript === null) {
    throw new ProviderError(deps.capture.analysis.name, 'fatal', 'The call has no transcript to analyse.');
  }
  const text = call.pending_transcript;
  const provider = analysisOf(deps, call);
  let result: AnalyzerResult;
  if (nothingSaid(text)) result = silentCallResult();
  else {
    try {
      result = await provider.analyze({
        transcript: text,
        direction: call.direction,
        language: call.pending_transcript_language,
        organization: { name: call.org_name, language: call.org_language },
        country: call.org_country,
        voicemail: call.voicemail,
        startedAt: call.created_at,
      });
    } catch (err) {
      if (!(err instanceof ProviderError) || err.kind !== 'invalid_output') throw err;
      return {
        kind: 'needs_review',
        message: `${err.provider}: ${err.message}`,
        write: async (tx) => {
          await tx.query(
            `UPDATE calls SET review_status = 'needs_review', updated_at = $2
              WHERE id = $1 AND processing_state = 'queued' AND erased_at IS NULL`,
            [call.id, deps.clock.now()],
          );
          // under the job's lease (checked before this write): the run that really gave up logs it
          deps.log.warn(
            {
              callId: call.id,
              stage: job.stage,
              attempts: job.attempts,
              kind: err.kind,
              provider: err.provider,
            },
            'processing stage needs_review; GET /admin/v1/calls/{id}/processing shows why, POST …/reprocess runs it again',
          );
        },
      };
    }
    if (result.droppedFields?.length) {
      // the field names only: the values (a name, a draft) may be personal
      deps.log.warn(
        { callId: call.id, stage: job.stage, provider: provider.name, fields: result.droppedFields },
        'analysis answer had a value in a field this call allows only null; dropped, the rest kept',
      );
    }
  }
  // where each field was said, from the transcript's times (../../transcript-times.ts), when it has them
  const evidence = timedEvidence(text, call.pending_transcript_times, result.evidence);
  return {
    kind: 'succeeded',
    write: async (tx, locked) => {
      // the call as the runner's lock read it (lockRun), in this transaction: no second read
      const fresh = locked;
      if (
        !fresh ||
        fresh.erased_at ||
        fresh.processing_state !== 'queued' ||
        fresh.pending_transcript !== text
      )
        return;
      const stored = await storeAnalysis(tx, {
        callId: fresh.id,
        organizationId: fresh.organization_id,
        transcriptOriginal: text,
        analysis: result.analysis,
        followup: result.followup,
        evidence,
        now: deps.clock.now(),
        voicemail: fresh.voicemail,
        // read with the lock (the runner's lockRun), in this transaction
        redaction: fresh.redaction_enabled,
        // marked processed by the completion's UPDATE below (settleCompletion), one write of the row
        deferProcessed: true,
      });
      // the analysis just stored and the trackers read with the call: the completion reads neither
      await settleCompletion(tx, deps, fresh, {
        stored,
        trackers: call.org_trackers,
        // the call_analyses row storeAnalysis deferred: inserted by that UPDATE (one write of the call row)
        processed: {
          callerName: (stored.analysis.caller_name as string | null | undefined) ?? null,
          analysis: stored.deferred,
        },
      });
    },
  };
};
