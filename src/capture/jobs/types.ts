import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';

/**
 * The processing stages of a call, in order (docs/capture.md "Processing jobs"):
 * - download: fetch the carrier's recording into storage (its handler comes from the telephony
 *   adapter, wired by the composition root; storing the audio enqueues transcribe);
 * - transcribe: speech-to-text of the stored recording (deps.capture.transcription);
 * - analyse: the analysis and the follow-up draft (deps.capture.analysis, one provider answer), then
 *   in the same transaction the completion events when the recording is settled;
 * - complete: the completion events (call.transcribed, call.completed, the draft and tracker
 *   events) of a call whose analysis waited for its recording; tracker matching is part of it,
 *   because call.tracker.matched must go out in the same transaction as call.completed;
 * - simulate: the simulated carrier of test mode playing a test call's carrier steps, each when it
 *   falls due (waiting between them); its handler comes from telephony like download's
 *   (capture/telephony/simulated/play.ts).
 */
export const STAGES = ['download', 'transcribe', 'analyse', 'complete', 'simulate'] as const;
export type Stage = (typeof STAGES)[number];

/** Stored states; `running` is shown for a pending job under a live lease. */
export const JOB_STATES = ['pending', 'waiting', 'succeeded', 'failed', 'needs_review', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** A job as its claim hands it to a stage handler. */
export interface ClaimedJob {
  id: string;
  organizationId: string;
  callId: string;
  stage: Stage;
  /** runs started, this one included: the lease's fencing token */
  attempts: number;
  input: Record<string, unknown> | null;
}

export interface JobContext {
  deps: Deps;
  job: ClaimedJob;
  /** aborted when the lease is lost (another worker may hold the job now) or the runner stops */
  signal: AbortSignal;
}

/**
 * What a stage handler answers (a failure is thrown: a ProviderError, or any error = retryable).
 * `write` runs in the transaction that also marks the job finished, after the job's lease was
 * checked under lock: a worker whose lease expired meanwhile writes nothing.
 */
export type StageOutcome =
  | { kind: 'succeeded'; write?: (tx: Queryable) => Promise<void> }
  /** not a failure: run again at `until` (the complete stage waiting for the recording) */
  | { kind: 'waiting'; until: Date }
  /** nothing to do, ever: the call is gone (erased), or its audio must not be stored (a refused recording) */
  | { kind: 'cancelled'; reason: string }
  /** the provider's answer broke the schema: the call needs a human; final until a reprocess */
  | { kind: 'needs_review'; message: string; write?: (tx: Queryable) => Promise<void> };

export type StageHandler = (ctx: JobContext) => Promise<StageOutcome>;

/** The handlers a runner runs, by stage; a runner claims only the stages it has a handler for. */
export type StageHandlers = Partial<Record<Stage, StageHandler>>;
