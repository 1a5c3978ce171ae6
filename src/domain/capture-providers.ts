import type { Readable } from 'node:stream';
import type { FollowupDraft, ProcessedAnalysis } from './analysis.ts';

/**
 * The processing providers' contracts (speech-to-text and analysis). The durable job runner
 * (src/capture/jobs/) only knows these interfaces; src/capture/providers/ implements them and picks
 * one by settings (TRANSCRIPTION_PROVIDER, ANALYSIS_PROVIDER). A provider knows no database and no
 * HTTP route: it gets audio or text, and answers a result or throws a ProviderError.
 *
 * They live in domain/ (pure types and one error class) so that Deps can name them: deps.ts is
 * imported by every folder, and a type from capture/ there would make every folder reach capture/.
 * src/capture/providers/types.ts re-exports them.
 */

/**
 * Who spoke a segment. Which channel of a dual-channel recording is whose depends on the call's
 * direction: src/domain/recording-channels.ts.
 */
export type Speaker = 'agent' | 'customer' | 'unknown';

export interface TranscriptSegment {
  speaker: Speaker;
  /** seconds from the start of the recording */
  start: number;
  end: number;
  text: string;
  /**
   * The segment's words with their times, when the provider gave them (OpenAI-compatible
   * `timestamp_granularities[]=word`, Deepgram's `words`): what redaction needs to silence the
   * redacted words in the recording (docs/capture.md "Redaction").
   */
  words?: TranscriptWord[];
}

export interface TranscriptWord {
  text: string;
  /** seconds from the start of the recording */
  start: number;
  end: number;
}

export interface TranscriptionInput {
  /** Opens the stored audio afresh (each attempt reads it again; never buffered whole by the caller). */
  openAudio: () => Promise<Readable>;
  byteLength: number;
  contentType: string;
  /**
   * 2 for a dual-channel recording (the parent leg on channel 0, the child on channel 1; who they
   * are follows from `direction`, src/domain/recording-channels.ts), else 1
   */
  channels: 1 | 2;
  direction: 'inbound' | 'outbound';
  /** ISO 639-1 hint (the organization's language), when any */
  languageHint?: string | null;
  signal?: AbortSignal;
}

export interface TranscriptionResult {
  /** speaker-labelled text, one `Agent: …` / `Customer: …` line per turn (docs/capture.md) */
  text: string;
  /** ISO 639-1 as the provider detected it, or null */
  language: string | null;
  segments: TranscriptSegment[];
  /**
   * The talk metrics' voice activity of the recording as given, when the provider decoded it
   * anyway (the openai protocol's dual-channel split measures it on the way: decode once).
   */
  channelActivity?: ChannelActivity;
}

/** Voice activity of a dual-channel recording: per channel (0, 1), one flag per frame. */
export interface ChannelActivity {
  frameSeconds: number;
  channels: [boolean[], boolean[]];
}

export interface TranscriptionProvider {
  readonly name: string;
  /** the largest upload the provider accepts, in bytes (documented in docs/capture.md) */
  readonly maxUploadBytes: number;
  transcribe(input: TranscriptionInput): Promise<TranscriptionResult>;
  /**
   * Called once when a worker starts (src/worker.ts): makes ready ahead what the first transcription
   * would otherwise make on its way (the openai protocol's audio thread, split-thread.ts). Optional.
   */
  warmUp?(): void;
}

/**
 * What the analysis gets: the transcript and what is known of the call. Structurally the same as
 * src/capture/analyzer.ts's AnalyzerInput / AnalyzerResult (the rule-based analyzer fits as is).
 */
export interface AnalyzerInput {
  transcript: string;
  direction: 'inbound' | 'outbound';
  /** language reported with the transcript (by the speech-to-text provider), if any */
  language?: string | null;
  organization: { name: string; language: string };
  /** ISO 3166-1 alpha-2 country of the call's numbers (the organization's), when known; optional */
  country?: string | null;
  /**
   * The call is known to be a voicemail (telephony: <Record>, the caller alone): one-sided whatever
   * its text looks like, so no draft is offered. Optional (false).
   */
  voicemail?: boolean;
  /**
   * When the call started (calls.created_at): the reference a relative date said in the call
   * ("tomorrow", "el lunes", "übermorgen") is resolved against, forward. Optional: without it a
   * date is kept as said.
   */
  startedAt?: Date | null;
}

/** The analysis fields that keep the words they were read from (AnalyzerResult.evidence). */
export type EvidenceField =
  | 'caller_name'
  | 'service_needed'
  | 'preferred_date'
  | 'client_city'
  | 'client_address';

/** Where a field's value was said: the words as transcribed, the turn, the time when known. */
export interface FieldEvidence {
  quote: string;
  /** the 0-based turn (line) of the transcript */
  turn: number;
  /** seconds from the start of the recording, when the transcript segment had a time; else null */
  start: number | null;
}

export interface AnalyzerResult {
  analysis: ProcessedAnalysis;
  /**
   * Per extracted field, the words it was read from (the rules analyser gives it; a model provider
   * may not). Stored in call_analyses.evidence; never sent in transcript_processed. Optional.
   */
  evidence?: Partial<Record<EvidenceField, FieldEvidence>>;
  /** null for voicemail, one-sided calls, or when no draft could be composed */
  followup: FollowupDraft | null;
  /**
   * Fields of the provider's answer that held a value where this call allows only null
   * (caller_name on an outbound call, counterparty_name on an inbound one, followup_email when no
   * draft is allowed): the values were dropped, the rest kept. Names only, never the values; the
   * analyse stage logs them at warn. Absent or empty when nothing was dropped.
   */
  droppedFields?: string[];
}

/** The analysis contract is the pipeline's Analyzer (src/capture/analyzer.ts) with a name. */
export interface AnalysisProvider {
  readonly name: string;
  analyze(input: AnalyzerInput): Promise<AnalyzerResult>;
}

/**
 * How a provider call failed, for the job runner:
 * - `retryable`: time-out, connection error, 429, 5xx — retried with backoff, `retryAfterMs` honoured;
 * - `fatal`: any other 4xx, an answer that cannot be parsed — the job fails, `message` kept for the operator;
 * - `too_large`: the audio exceeds the provider's limit — the job fails at once with a clear error;
 * - `answer_too_large`: the provider's answer passed PROVIDER_MAX_ANSWER_BYTES — it was not read
 *   further, and the job fails at once (the same input would most likely be answered the same way,
 *   and a transcription is billed per run);
 * - `invalid_output`: an analysis that broke the schema after its one retry — the call is marked
 *   needs_review and its analysis stays null.
 */
export type ProviderErrorKind = 'retryable' | 'fatal' | 'too_large' | 'answer_too_large' | 'invalid_output';

export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly provider: string;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(
    provider: string,
    kind: ProviderErrorKind,
    message: string,
    opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ProviderError';
    this.provider = provider;
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}
