/** Resource types of the REST API v1 (base URL ends in /api/v1), exactly as the spec lists them. */

export type CrmStatus = 'new' | 'to_call' | 'contacted' | 'qualified';
export type ReviewStatus = 'new' | 'needs_decision' | 'needs_review' | 'handled' | 'no_action';
export type OutboundLifecycle =
  | 'ringing_agent'
  | 'agent_answered'
  | 'ringing_customer'
  | 'in_progress'
  | 'completed'
  | 'agent_no_answer'
  | 'customer_no_answer'
  | 'agent_only'
  | 'failed_to_initiate'
  | 'reconciliation_required';

/** A draft for the customer to review and send; the service never sends it. */
export interface FollowupEmail {
  subject: string;
  body: string;
  language: string;
}

/** The allowlisted analysis inside a Call: exactly these four fields. */
export interface CallAnalysis {
  caller_name: string | null;
  summary: string | null;
  service_needed: string | null;
  followup_email: FollowupEmail | null;
}

/** A call as the REST API returns it; every field is always present (nullable where stated). */
export interface Call {
  /** UUID. */
  call_id: string;
  direction: 'inbound' | 'outbound';
  /** Stored caller phone; match CRM contacts on customer_phone_e164 instead. */
  caller_phone: string;
  /** The customer on the call in both directions; null when the carrier gave no usable number. */
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
  /** The number the call came in on or went out from; null when not recorded. */
  company_phone_e164: string | null;
  /** Permanent link to the call in the web app (needs a login). */
  app_url: string | null;
  caller_name: string | null;
  /** Recording length in seconds, not total call duration. */
  duration: number | null;
  crm_status: CrmStatus;
  review_status: ReviewStatus | null;
  outbound_lifecycle: OutboundLifecycle | null;
  transcript_processed: CallAnalysis | null;
  /** ISO 8601 with Z or a numeric offset. */
  created_at: string;
}

/** Result of GET /me. */
export interface KeyIdentity {
  api_key_id: string;
  user_id: string;
  organization_id: string;
  scopes: string[];
  rate_limit_per_hour?: number;
  /** The key's data environment: `test` for a `cc_test_` key (it reads and writes test data only). */
  environment: 'live' | 'test';
}

/** Result of GET /calls/{id}/recording-url: a signed link valid for 15 minutes. */
export interface RecordingLink {
  url: string;
  expires_at: string;
}

/** Query of GET /calls; all optional. */
export interface ListCallsParams {
  /** >= 1, default 1. */
  page?: number;
  /** 1 to 100, default 20. */
  limit?: number;
  /** Earliest created_at, inclusive: YYYY-MM-DD or ISO 8601. */
  dateFrom?: string;
  /** Latest created_at, inclusive: YYYY-MM-DD or ISO 8601. */
  dateTo?: string;
  direction?: 'inbound' | 'outbound';
  /** Filters crm_status. */
  status?: CrmStatus;
  /** 3 to 40 characters; matches customer_phone_e164; spaces, hyphens, dots, parentheses and + ignored. */
  phone?: string;
}

/** One page of GET /calls. Prefer has_more over comparing counts. */
export interface CallPage {
  items: Call[];
  has_more: boolean;
  page: number;
  limit: number;
}

/** Every error code of v1. */
export type ApiErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'SUBSCRIPTION_INACTIVE'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'RECORDING_NOT_READY'
  | 'RECORDING_WITHHELD'
  | 'RECORDING_DELETED'
  | 'RECORDING_NOT_CAPTURED'
  | 'VALIDATION_ERROR'
  | 'CONTACT_EXISTS'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'DATABASE_ERROR'
  | 'MAINTENANCE';

/**
 * The body of every error answer. `error.param` and `meta.request_id` are optional additions within v1:
 * older servers omit them.
 */
export interface ApiErrorBody {
  success: false;
  error: {
    code: ApiErrorCode | (string & {});
    message: string;
    /** BAD_REQUEST, VALIDATION_ERROR, IDEMPOTENCY_KEY_REUSED: the parameter, body field or header at fault. */
    param?: string;
    /** CONTACT_EXISTS: the contact that already has the phone number. */
    contact_id?: string;
  };
  meta: {
    timestamp: string;
    /** The request id, as in the X-Request-Id response header; quote it when reporting a problem. */
    request_id?: string;
  };
}

/** A contact of the REST API (GET/POST /contacts, GET/PATCH /contacts/{id}). */
export interface ContactResource {
  contact_id: string;
  /** As given. */
  phone: string;
  /** Null when not a usable number (contacts created outside the REST API). */
  phone_e164: string | null;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  company: string | null;
  notes: string | null;
  tags: string[];
  created_at: string;
  updated_at: string;
}

/** GET /contacts' query. */
export interface ListContactsParams {
  /** >= 1, default 1. */
  page?: number;
  /** 1 to 100, default 20. */
  limit?: number;
  /** Trailing digits of phone_e164, with the rules of GET /calls' phone filter. */
  phone?: string;
  /** 1 to 100 characters searched in the names, company and e-mail. */
  q?: string;
}

/** One page of GET /contacts. */
export interface ContactPage {
  items: ContactResource[];
  has_more: boolean;
  page: number;
  limit: number;
}

/** POST /contacts' body. */
export interface CreateContactInput {
  phone: string;
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  company?: string | null;
  notes?: string | null;
  tags?: string[];
}

/** PATCH /contacts/{id}'s body: at least one field; null (or "") clears one. */
export type UpdateContactInput = Partial<CreateContactInput>;

/** POST /calls' body. */
export interface PlaceCallInput {
  customer_phone: string;
  /** Default: the key's user. */
  agent_user_id?: string;
  /** Default: the phone that agent last used. */
  agent_phone?: string;
  /** Default: the organization's service number when it has exactly one. */
  from_number?: string;
  recording_mode?: 'normal' | 'no_recording';
}

/** Body of POST /test-helpers/inbound-calls (test keys only); every field optional. */
export interface InboundTestCallInput {
  scenario?: 'conversation' | 'voicemail' | 'recording_refused' | 'anonymous';
  /** The caller's number (any spelling the REST API accepts); a documented test number by default. */
  caller_phone?: string;
  caller_name?: string;
  /** The transcript, lines `Agent: …` / `Customer: …`; the scenario's own script by default. */
  script?: string;
}

/** Options of the writes that honour Idempotency-Key (POST /contacts, POST /calls). */
export interface WriteOptions {
  /**
   * 1 to 255 printable ASCII characters (e.g. a UUID). The same key with the same body within 24 hours
   * answers the first answer again and has no second effect; with it the client also retries the write
   * after a connection failure or a retryable answer.
   */
  idempotencyKey?: string;
}
