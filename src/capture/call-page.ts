import type { Queryable } from '../db/types.ts';
import type { RecordingFacts } from '../domain/recording-availability.ts';
import type { TenantScope } from '../domain/tenant.ts';
import type { CrmStatus, Direction, OutboundLifecycle, ReviewStatus } from '../domain/values.ts';
import { notFound } from '../errors.ts';
import { isUuid } from '../ids.ts';
import { type CallSetup, type CallSetupRow, callSetupColumns, callSetupOf } from './telephony/call-setup.ts';

/**
 * The web app's call page as a read model (/app/calls/{id}): one call of an organization with its
 * analysis and transcript, what happened to it (the outbound attempt's dated steps, the keyword
 * trackers that matched) and the click-to-call setup of the signed-in user — read in ONE statement.
 * Every read takes the organization: erased calls and calls of other organizations are "not found",
 * like in the REST API.
 */

/** One call of the organization with its analysis and transcript, as the call page shows it. */
export interface CallPageRow {
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
  failure_reason: string | null;
  recording_state: RecordingFacts['recordingState'];
  recording_mode: RecordingFacts['recordingMode'];
  recording_deleted_at: Date | null;
  /** what redaction did to the recording (migration 0018): silenced, no_word_times, or null */
  audio_redaction: 'silenced' | 'no_word_times' | null;
  processing_state: 'none' | 'queued' | 'processed';
  trashed_at: Date | null;
  deletion_scheduled_at: Date | null;
  pending_deletion_at: Date | null;
  deletion_reason: string | null;
  created_at: Date;
  entitlement: string;
  agent_email: string | null;
  has_analysis: boolean;
  analysis: Record<string, unknown> | null;
  transcript_original: string | null;
  analysis_language: string | null;
  followup_email: unknown;
}

export const CALL_NOT_FOUND = 'No call with this id exists in your organization.';

/** One dated step of an outbound call's attempt, as the page tells it. */
export type CallStep =
  | { kind: 'attempted'; at: Date; lifecycle: string | null }
  | { kind: 'failed'; at: Date }
  | { kind: 'repaired'; at: Date };

/** A keyword tracker that matched the call: its name, the terms found, excerpts around them. */
export interface CallTrackerMatch {
  name: string;
  matchedTerms: string[];
  excerpts: string[];
}

export interface CallPage {
  call: CallPageRow;
  /** the outbound attempt's dated steps, oldest first */
  steps: CallStep[];
  trackerMatches: CallTrackerMatch[];
  /** the click-to-call setup of the organization for the user reading the page */
  setup: CallSetup;
}

const CALL_COLUMNS = `c.id, c.direction, c.caller_phone, c.customer_phone_e164, c.customer_phone_national,
            c.company_phone_e164, c.caller_name, c.duration, c.crm_status, c.review_status, c.outbound_lifecycle,
            c.failure_reason, c.recording_state, c.recording_mode, c.recording_deleted_at, c.audio_redaction, c.processing_state,
            c.trashed_at, c.deletion_scheduled_at, c.pending_deletion_at, c.deletion_reason, c.created_at,
            o.entitlement, u.email AS agent_email,
            ca.call_id IS NOT NULL AS has_analysis, ca.analysis, ca.transcript_original,
            ca.language AS analysis_language, ca.followup_email`;

const CALL_FROM = `FROM calls c
       JOIN organizations o ON o.id = c.organization_id
       LEFT JOIN users u ON u.id = c.agent_user_id
       LEFT JOIN call_analyses ca ON ca.call_id = c.id AND ca.organization_id = c.organization_id
      WHERE c.id = $1::uuid AND c.organization_id = $2::uuid AND c.erased_at IS NULL`;

/** The call alone (the page's actions and the erase confirmation), or a 404. */
export async function findCallForPage(q: Queryable, scope: TenantScope, id: string): Promise<CallPageRow> {
  if (!isUuid(id)) throw notFound(CALL_NOT_FOUND);
  const { rows } = await q.query<CallPageRow>(
    `SELECT ${CALL_COLUMNS}
       ${CALL_FROM}`,
    [id.toLowerCase(), scope.organizationId],
    { name: 'pages_call_v1' },
  );
  const row = rows[0];
  if (!row) throw notFound(CALL_NOT_FOUND);
  return row;
}

/** The facts recording-availability.ts decides on, from a page row. */
export const recordingFactsOf = (c: CallPageRow): RecordingFacts => ({
  direction: c.direction,
  recordingState: c.recording_state,
  recordingMode: c.recording_mode,
  outboundLifecycle: c.outbound_lifecycle,
  trashed: c.trashed_at !== null,
  deletionScheduled: c.deletion_scheduled_at !== null || c.pending_deletion_at !== null,
  erased: false,
});

/** The facts the page tells (each from the event that made it true, in the transaction that did). */
const STEP_EVENTS = ['call.outbound.attempted', 'call.failed', 'call.outbound.lifecycle_repaired'];
const PAGE_EVENT_TYPES = [...STEP_EVENTS, 'call.tracker.matched'];

interface EventRow {
  event_type: string;
  created_at: string | Date;
  body: string;
}

/**
 * The whole call page in one round trip: the call, its events of PAGE_EVENT_TYPES (oldest first; a
 * repair before the attempt it emits in the same instant, which the event ids would not order)
 * and the user's click-to-call setup (capture/telephony/call-setup.ts). A 404 for an unknown,
 * erased or other organization's call.
 */
export async function readCallPage(
  q: Queryable,
  scope: TenantScope,
  id: string,
  userId: string,
): Promise<CallPage> {
  if (!isUuid(id)) throw notFound(CALL_NOT_FOUND);
  const { rows } = await q.query<CallPageRow & CallSetupRow & { page_events: EventRow[] | null }>(
    `SELECT ${CALL_COLUMNS},
            (SELECT json_agg(json_build_object('event_type', e.event_type, 'created_at', e.created_at, 'body', e.body)
                             ORDER BY e.created_at, e.event_type <> 'call.outbound.lifecycle_repaired', e.id)
               FROM events e
              WHERE e.call_id = c.id AND e.organization_id = c.organization_id
                AND e.event_type = ANY($4::text[])) AS page_events,
            ${callSetupColumns('$2', '$3', 'c.customer_phone_e164 IS NOT NULL')}
       ${CALL_FROM}`,
    [id.toLowerCase(), scope.organizationId, userId, PAGE_EVENT_TYPES],
    { name: 'pages_call_page_v1' },
  );
  const row = rows[0];
  if (!row) throw notFound(CALL_NOT_FOUND);
  const { page_events, setup_account, setup_country, setup_numbers, setup_last_agent_phone, ...call } = row;
  const events = (page_events ?? []).flatMap((e) => {
    const data = eventData(e.body);
    return data ? [{ type: e.event_type, at: new Date(e.created_at), data }] : [];
  });
  return {
    call,
    steps: events.filter((e) => STEP_EVENTS.includes(e.type)).map(stepOf),
    trackerMatches: events.filter((e) => e.type === 'call.tracker.matched').flatMap((e) => matchesOf(e.data)),
    setup: callSetupOf({ setup_account, setup_country, setup_numbers, setup_last_agent_phone }),
  };
}

/**
 * The data of a stored event (the outbox keeps the exact bytes it signs: the envelope
 * {id, type, created_at, data}); what the page needs of it is read here, next to the builders
 * (webhooks/outbox/event-data/), so the page itself never sees the webhook payload's shape. An
 * unreadable body shows nothing rather than failing the page.
 */
function eventData(body: string): Record<string, unknown> | null {
  try {
    const env = JSON.parse(body) as { data?: unknown };
    return env.data && typeof env.data === 'object' ? (env.data as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function stepOf(e: { type: string; at: Date; data: Record<string, unknown> }): CallStep {
  if (e.type === 'call.outbound.lifecycle_repaired') return { kind: 'repaired', at: e.at };
  if (e.type === 'call.failed') return { kind: 'failed', at: e.at };
  const lifecycle = e.data.outbound_lifecycle;
  return { kind: 'attempted', at: e.at, lifecycle: typeof lifecycle === 'string' ? lifecycle : null };
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

function matchesOf(data: Record<string, unknown>): CallTrackerMatch[] {
  const matches = Array.isArray(data.matches) ? (data.matches as Record<string, unknown>[]) : [];
  return matches
    .filter((m) => m && typeof m === 'object')
    .map((m) => ({
      name: String(m.name ?? 'Tracker'),
      matchedTerms: strings(m.matched_terms),
      excerpts: strings(m.excerpts),
    }));
}
