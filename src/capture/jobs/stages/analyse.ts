import { ProviderError } from '../../../domain/capture-providers.ts';
import { findIngestCall } from '../../call-record.ts';
import { settleCompletion, storeAnalysis } from '../../pipeline.ts';
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
 * stays in the call's inbox for that.
 */
export const analyseStage: StageHandler = async ({ deps, job }) => {
  const call = await findIngestCall(deps.db, job.callId);
  if (!call || call.erased_at) return { kind: 'cancelled', reason: 'the call was erased' };
  if (call.processing_state === 'processed') return { kind: 'succeeded' };
  if (call.processing_state !== 'queued' || call.pending_transcript === null) {
    throw new ProviderError(deps.capture.analysis.name, 'fatal', 'The call has no transcript to analyse.');
  }
  const text = call.pending_transcript;
  const org = await deps.db.query<{ country: string | null }>(
    'SELECT country FROM organizations WHERE id = $1',
    [call.organization_id],
  );
  let result: Awaited<ReturnType<typeof deps.capture.analysis.analyze>>;
  try {
    result = await deps.capture.analysis.analyze({
      transcript: text,
      direction: call.direction,
      language: call.pending_transcript_language,
      organization: { name: call.org_name, language: call.org_language },
      country: org.rows[0]?.country ?? null,
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
      },
    };
  }
  return {
    kind: 'succeeded',
    write: async (tx) => {
      const fresh = await findIngestCall(tx, call.id, { forUpdate: true });
      if (
        !fresh ||
        fresh.erased_at ||
        fresh.processing_state !== 'queued' ||
        fresh.pending_transcript !== text
      )
        return;
      await storeAnalysis(tx, {
        callId: fresh.id,
        organizationId: fresh.organization_id,
        transcriptOriginal: text,
        analysis: result.analysis,
        followup: result.followup,
        now: deps.clock.now(),
      });
      await settleCompletion(tx, deps, fresh);
    },
  };
};
