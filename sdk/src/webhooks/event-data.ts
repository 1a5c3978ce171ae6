/**
 * The `data` shapes of every v1 event type, field for field as the spec lists them. Fields the spec says
 * are "present only on events emitted from …" or "may appear" are optional; receivers must tolerate
 * additional unknown keys (new optional fields may be added within v1).
 */

export type CallDirection = 'inbound' | 'outbound';
/** Final outbound states; each one triggers call.outbound.attempted. */
export type FinalOutboundLifecycle =
  | 'completed'
  | 'agent_only'
  | 'agent_no_answer'
  | 'customer_no_answer'
  | 'failed_to_initiate';
/** Outbound states that trigger call.failed. */
export type FailedOutboundLifecycle = 'agent_no_answer' | 'customer_no_answer' | 'failed_to_initiate';

/**
 * Processed call analysis (`transcript_processed` in events). Every listed field is null when the call
 * did not contain the information; the "may appear" fields can be absent; unknown extra fields may appear.
 */
export interface ProcessedAnalysis {
  caller_name: string | null;
  summary: string | null;
  /** One-line title, up to 80 characters. */
  subject: string | null;
  service_needed: string | null;
  services_match: boolean | null;
  /** 1 to 10. */
  lead_score: number | null;
  preferred_date: string | null;
  client_city: string | null;
  client_address: string | null;
  additional_details: string | null;
  caller_location?: string | null;
  client_country?: string | null;
  /** Only for outbound calls and live calls the service silently listens to. */
  counterparty_name?: string | null;
  /** Language code; the key may be absent entirely. */
  detected_language?: string;
  /** Suggested follow-ups and decisions extracted from the call. */
  proposal_items?: ProposalItem[] | null;
  [extra: string]: unknown;
}

/** A suggested follow-up or decision extracted from the call; further keys may appear. */
export interface ProposalItem {
  kind: string;
  text: string;
  [extra: string]: unknown;
}

export interface CallCompletedData {
  call_id: string;
  direction: CallDirection;
  caller_phone: string | null;
  customer_phone_e164: string | null;
  /** Present only on events emitted from 2026-09-18; absent on a replay of an older call. */
  customer_phone_national?: string | null;
  /** Same presence rule as customer_phone_national. */
  company_phone_e164?: string | null;
  /** When the call was recorded (ISO 8601); same presence rule. */
  call_created_at?: string | null;
  /** Permanent link to the call in the web app; same presence rule. */
  app_url?: string | null;
  /** Recording length in seconds. */
  duration: number;
  /** Signed for seven days; null when not yet stored at processing time. */
  recording_url: string | null;
  transcript_processed: ProcessedAnalysis;
  transcript_original: string | null;
}

export interface CallTranscribedData {
  call_id: string;
  transcript_original: string | null;
  transcript_processed: ProcessedAnalysis;
}

export interface CallOutboundAttemptedData {
  call_id: string;
  /** User who placed the call. */
  agent_user_id: string;
  /** Dialled number. */
  customer_phone: string;
  customer_phone_e164: string;
  outbound_lifecycle: FinalOutboundLifecycle;
  /** Seconds; null when failed at initiation or not yet known. */
  duration: number | null;
  /** When the event was emitted (ISO 8601). */
  attempted_at: string;
  /** True only for completed calls not in no_recording mode; call.recording.ready follows. */
  has_recording: boolean;
}

export interface CallRecordingReadyData {
  call_id: string;
  /** Signed for seven days; rarely null when the link could not be generated. */
  recording_url: string | null;
  duration: number | null;
}

export interface CallFailedData {
  call_id: string;
  outbound_lifecycle: FailedOutboundLifecycle;
  /**
   * Machine-readable code, for example customer_busy or agent_no_confirmation. The service sends:
   * agent_no_answer — agent_no_answer, agent_busy, agent_no_confirmation, agent_voicemail,
   * agent_canceled, carrier_failed, no_final_status; customer_no_answer — customer_busy,
   * customer_no_answer, customer_canceled, carrier_failed; failed_to_initiate — provider_rejected,
   * provider_auth_failed, provider_unavailable. New codes may be added within v1.
   */
  failure_reason: string | null;
}

export interface CallOutboundLifecycleRepairedData {
  call_id: string;
  previous_lifecycle: 'agent_only';
  new_lifecycle: 'completed';
  repaired_at: string;
}

export interface CallDeletionScheduledData {
  call_id: string;
  /** When the data will be permanently deleted (ISO 8601). */
  pending_deletion_at: string;
  reason: 'consent_not_asked' | 'consent_withdrawn' | 'retention_expired' | 'user_erasure';
}

export interface CallRecordingDeletedData {
  call_id: string;
  reason: string | null;
  /** The telephony provider's recording id; null when unresolved. */
  recording_sid: string | null;
  /** hard_deleted: deleted by the service; provider_404: already gone on the provider side. */
  deletion_kind: 'hard_deleted' | 'provider_404';
  deleted_at: string;
}

export interface CallFollowupEmailDraftedData {
  call_id: string;
  subject: string;
  /** Plain text without signature. */
  body: string;
  /** Detected call language, falling back to the account language. */
  language: string;
}

export interface TrackerMatch {
  tracker_id: string;
  name: string;
  matched_terms: string[];
  /** May be empty. */
  excerpts: string[];
}

export interface CallTrackerMatchedData {
  call_id: string;
  matches: TrackerMatch[];
}

/** Full contact snapshot; notes and tags are not included. */
export interface Contact {
  id: string;
  phone: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  company: string | null;
}

export interface ContactCreatedData {
  contact: Contact;
}

/** Only changed fields; absent keys were not modified. Value types of notes and tags are not specified. */
export interface ContactDiff {
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  phone?: string;
  company?: string | null;
  notes?: unknown;
  tags?: unknown;
}

export interface ContactUpdatedData {
  contact_id: string;
  diff: ContactDiff;
}

/** A synthetic call.completed payload; exclude it from business processing. */
export interface WebhookTestData extends CallCompletedData {
  _test: true;
  _message: string;
  _sent_at: string;
}
