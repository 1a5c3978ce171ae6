/**
 * A stored call → the public Call object (spec "Resources and their fields" → Call). Pure: the
 * query that loads CallViewRow lives in src/capture/call-list.ts. Every field is
 * always present, null where the spec allows it.
 */
import type { CrmStatus, Direction, OutboundLifecycle, ReviewStatus } from './values.ts';

/**
 * The columns of a call every read model of it shows (the REST API's CallViewRow below, the web app's
 * call page row in capture/call-page.ts): calls LEFT JOIN call_analyses, declared once.
 */
export interface CallRowFacts {
  id: string;
  direction: Direction;
  caller_phone: string;
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
  company_phone_e164: string | null;
  caller_name: string | null;
  duration: number | null;
  crm_status: CrmStatus;
  review_status: ReviewStatus | null;
  outbound_lifecycle: OutboundLifecycle | null;
  /** true when a call_analyses row exists */
  has_analysis: boolean;
  /** call_analyses.followup_email (jsonb) */
  followup_email: unknown;
  /** call_analyses.language: fallback when a stored draft lacks its language */
  analysis_language: string | null;
}

/** One row of calls LEFT JOIN call_analyses, with only the allowlisted analysis keys extracted. */
export interface CallViewRow extends CallRowFacts {
  /** ISO 8601 in UTC with milliseconds (2026-06-15T08:30:00.000Z): the query formats it */
  created_at: string;
  /** analysis->'caller_name', ->'summary', ->'service_needed' (jsonb values, any JSON type) */
  tp_caller_name: unknown;
  tp_summary: unknown;
  tp_service_needed: unknown;
}

export interface FollowupEmail {
  subject: string;
  body: string;
  language: string;
}

/** Exactly the four allowlisted keys; the raw transcript and audio are never exposed. */
export interface TranscriptProcessed {
  caller_name: string | null;
  summary: string | null;
  service_needed: string | null;
  followup_email: FollowupEmail | null;
}

export interface CallView {
  call_id: string;
  direction: Direction;
  caller_phone: string;
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
  company_phone_e164: string | null;
  app_url: string;
  caller_name: string | null;
  duration: number | null;
  crm_status: CrmStatus;
  review_status: ReviewStatus | null;
  outbound_lifecycle: OutboundLifecycle | null;
  transcript_processed: TranscriptProcessed | null;
  created_at: string;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The follow-up draft as the spec shows it: {subject, body, language}, nothing else (its internal
 * source stays private). A draft missing its subject or body is shown as null; a missing language
 * falls back to the analysed call's language.
 */
export function followupEmailView(stored: unknown, analysisLanguage: string | null): FollowupEmail | null {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return null;
  const o = stored as Record<string, unknown>;
  const subject = str(o.subject);
  const body = str(o.body);
  const language = str(o.language) ?? analysisLanguage;
  if (subject === null || body === null || language === null) return null;
  return { subject, body, language };
}

/** Permanent link to the call in the web app (opening it requires a login). */
export const callAppUrl = (publicBaseUrl: string, callId: string): string =>
  `${publicBaseUrl}/app/calls/${callId}`;

export function toCallView(row: CallViewRow, publicBaseUrl: string): CallView {
  return {
    call_id: row.id,
    direction: row.direction,
    caller_phone: row.caller_phone,
    customer_phone_e164: row.customer_phone_e164,
    customer_phone_national: row.customer_phone_national,
    company_phone_e164: row.company_phone_e164,
    app_url: callAppUrl(publicBaseUrl, row.id),
    caller_name: row.caller_name,
    duration: row.duration === null ? null : Number(row.duration),
    crm_status: row.crm_status,
    review_status: row.review_status,
    outbound_lifecycle: row.outbound_lifecycle,
    transcript_processed: row.has_analysis
      ? {
          caller_name: str(row.tp_caller_name),
          summary: str(row.tp_summary),
          service_needed: str(row.tp_service_needed),
          followup_email: followupEmailView(row.followup_email, row.analysis_language),
        }
      : null,
    created_at: row.created_at,
  };
}
