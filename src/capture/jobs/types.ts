import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import type { RecordingConsent } from '../../domain/recording-consent.ts';
import type { IngestCall } from '../call-record.ts';

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
  /**
   * The runner's offer to run the call's next stage itself, right after this run (./runner.ts,
   * "The chain"): handed to enqueueStage by the stage that queues it. Absent: the next stage is
   * queued for any runner (a NOTIFY at commit).
   */
  chain?: RunChain;
}

/**
 * A run's offer to continue with the call's next stage: a stage this runner has a handler for,
 * queued due now by this run, is inserted already leased to this runner (no claim, no NOTIFY) and
 * run by it once this run's outcome is written. The job row, its attempts and its lease are those a
 * claim would have written, so a runner that dies before it runs the job leaves it to lease expiry
 * like any claimed job.
 */
export interface RunChain {
  /** the lease to insert `stage` of `callId` under, or null when this runner will not run it next */
  leaseFor(stage: Stage, callId: string): { owner: string; leaseUntil: Date } | null;
  /** the enqueue inserted the job leased: it runs next (or is handed back, if this run does not commit) */
  leased(job: ClaimedJob): void;
}

/**
 * What a stage handler answers (a failure is thrown: a ProviderError, or any error = retryable).
 * `write` runs in the transaction that also marks the job finished, after the job's lease was
 * checked under lock: a worker whose lease expired meanwhile writes nothing.
 */
export type StageOutcome =
  | {
      kind: 'succeeded';
      write?: StageWrite;
      /**
       * Runs once the run's outcome was written, or not (`committed` false: the lease was lost, the
       * write failed or cancelled the run, and nothing of it committed) — before the runner goes on
       * to its chain. What must follow the commit (a replaced blob deleted, the carrier's copy) or
       * undo what came before it (the blob written for a write that did not commit). An error is
       * logged, never the run's.
       */
      after?: (committed: boolean) => Promise<void>;
    }
  /** not a failure: run again at `until` (the complete stage waiting for the recording) */
  | { kind: 'waiting'; until: Date }
  /** nothing to do, ever: the call is gone (erased), or its audio must not be stored (a refused recording) */
  | { kind: 'cancelled'; reason: string }
  /** the provider's answer broke the schema: the call needs a human; final until a reprocess */
  | { kind: 'needs_review'; message: string; write?: StageWrite };

/**
 * Thrown by a stage's write when what it was to store may no longer be stored (the call, locked,
 * refuses it now: erased, its recording refused or final): the run's transaction rolls back and the
 * job ends `cancelled` with the reason, as when the handler answers { kind: 'cancelled' }.
 */
export class RunCancelled extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.name = 'RunCancelled';
    this.reason = reason;
  }
}

/**
 * The call row as the run's lock read it (./sql/finish-job.ts lockRun), the same statement that
 * checked the lease: the call as findIngestCall reads it (locked), with its organization's
 * redaction setting — what a stage's write needs to know of what may have changed since its
 * handler read the call. null: the call row is gone.
 */
export type LockedCall = IngestCall & {
  /** the caller's answer to the consent announcement (domain/recording-consent.ts) */
  recording_consent: RecordingConsent;
  /** the organization's redaction setting (src/capture/redaction), read in the same statement */
  redaction_enabled: boolean;
};

/** A stage's own write, in the run's transaction after its lock (`call`: the locked row's state). */
export type StageWrite = (tx: Queryable, call: LockedCall | null) => Promise<void>;

export type StageHandler = (ctx: JobContext) => Promise<StageOutcome>;

/** The handlers a runner runs, by stage; a runner claims only the stages it has a handler for. */
export type StageHandlers = Partial<Record<Stage, StageHandler>>;
