import { inScope, scopeParams } from '../db/tenant-sql.ts';
import type { Queryable } from '../db/types.ts';
import type { CallRowFacts } from '../domain/call-view.ts';
import { FAILED_OUTBOUND_STATES } from '../domain/outbound-lifecycle.ts';
import type { RecordingFacts } from '../domain/recording-availability.ts';
import type { TenantScope } from '../domain/tenant.ts';
import type { OutboundLifecycle } from '../domain/values.ts';
import { notFound } from '../errors.ts';
import { isUuid } from '../ids.ts';
import { type CallSetup, type CallSetupRow, callSetupColumns, callSetupOf } from './telephony/call-setup.ts';

/**
 * The web app's call page as a read model (/app/calls/{id}): one call of an organization with its
 * analysis and transcript, what happened to it (the outbound attempt's dated steps, the keyword
 * trackers that matched: columns of the call's row, never the webhook envelopes in `events`) and the
 * click-to-call setup of the signed-in user, the contact of the customer's number — read in ONE statement.
 * Every read takes the scope (organization and environment): erased calls and calls of other
 * organizations or of the other environment are "not found", like in the REST API.
 */

/**
 * One call of the organization with its analysis and transcript, as the call page shows it: the
 * facts every read model of a call shows (domain/call-view.ts CallRowFacts, beside the REST API's
 * CallViewRow), and what only the page shows.
 */
export interface CallPageRow extends CallRowFacts {
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
  analysis: Record<string, unknown> | null;
  transcript_original: string | null;
  /** call_analyses.evidence: per field, the words it was read from (issue 19); null when none */
  evidence: Record<string, { quote?: unknown; start?: unknown }> | null;
  /** measured by the transcribe stage on a dual-channel recording (migration 0026); null otherwise */
  talk_metrics: unknown;
  /** [start, end] seconds of each line of the transcript, when the provider gave times (migration 0026) */
  transcript_times: unknown;
}

export const CALL_NOT_FOUND = 'No call with this id exists in your organization.';

/** One dated step of an outbound call's attempt, as the page tells it. */
export type CallStep =
  | { kind: 'attempted'; at: Date; lifecycle: OutboundLifecycle }
  | { kind: 'failed'; at: Date }
  | { kind: 'repaired'; at: Date };

/** A keyword tracker that matched the call: its name, the terms found, excerpts around them. */
export interface CallTrackerMatch {
  name: string;
  matchedTerms: string[];
  excerpts: string[];
}

/** The organization's contact with the call's customer number (contacts.phone_e164), the oldest one. */
export interface CallContact {
  id: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
}

export interface CallPage {
  call: CallPageRow;
  /** the contact of the customer's E.164 number, or null (no number, no contact) */
  contact: CallContact | null;
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
            ca.language AS analysis_language, ca.followup_email, ca.evidence,
            c.talk_metrics, c.transcript_times`;

const CALL_FROM = `FROM calls c
       JOIN organizations o ON o.id = c.organization_id
       LEFT JOIN users u ON u.id = c.agent_user_id
       LEFT JOIN call_analyses ca ON ca.call_id = c.id AND ca.organization_id = c.organization_id
      WHERE c.id = $1::uuid AND ${inScope('c', 2, 3)} AND c.erased_at IS NULL`;

/** The call alone (the page's actions and the erase confirmation), or a 404. */
export async function findCallForPage(q: Queryable, scope: TenantScope, id: string): Promise<CallPageRow> {
  if (!isUuid(id)) throw notFound(CALL_NOT_FOUND);
  const { rows } = await q.query<CallPageRow>(
    `SELECT ${CALL_COLUMNS}
       ${CALL_FROM}`,
    [id.toLowerCase(), ...scopeParams(scope)],
    { name: 'pages_call_v2' },
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

/** What the call's own row says happened to it, beyond the page row: the timeline's columns. */
interface TimelineRow {
  outbound_ended_at: Date | null;
  outbound_repaired_at: Date | null;
  tracker_matches: unknown;
  contact: CallContact | null;
}

/**
 * The whole call page in one round trip: the call, its timeline columns (written by the
 * statements that changed the call: capture/lifecycle.ts, capture/completion.ts) and the user's
 * click-to-call setup (capture/telephony/call-setup.ts). A 404 for an unknown, erased or other
 * organization's call.
 */
export async function readCallPage(
  q: Queryable,
  scope: TenantScope,
  id: string,
  userId: string,
): Promise<CallPage> {
  if (!isUuid(id)) throw notFound(CALL_NOT_FOUND);
  const { rows } = await q.query<CallPageRow & TimelineRow & CallSetupRow>(
    `SELECT ${CALL_COLUMNS}, c.outbound_ended_at, c.outbound_repaired_at, c.tracker_matches,
            (SELECT json_build_object('id', ct.id, 'first_name', ct.first_name, 'last_name', ct.last_name,
                                      'company', ct.company)
               FROM contacts ct
              WHERE ct.organization_id = c.organization_id AND ct.environment = c.environment
                AND ct.phone_e164 = c.customer_phone_e164
              ORDER BY ct.created_at, ct.id LIMIT 1) AS contact,
            ${callSetupColumns('$2', '$3', '$4', 'c.customer_phone_e164 IS NOT NULL')}
       ${CALL_FROM}`,
    [id.toLowerCase(), ...scopeParams(scope), userId],
    { name: 'pages_call_page_v3' },
  );
  const row = rows[0];
  if (!row) throw notFound(CALL_NOT_FOUND);
  const {
    outbound_ended_at,
    outbound_repaired_at,
    tracker_matches,
    contact,
    setup_account,
    setup_country,
    setup_numbers,
    setup_last_agent_phone,
    ...call
  } = row;
  return {
    call,
    contact: contact ?? null,
    steps: outboundSteps(call.outbound_lifecycle, outbound_ended_at, outbound_repaired_at),
    trackerMatches: trackerMatchesOf(tracker_matches),
    setup: callSetupOf(
      { setup_account, setup_country, setup_numbers, setup_last_agent_phone },
      scope.environment,
    ),
  };
}

/**
 * The outbound attempt's dated steps from the call's columns. The lifecycle table
 * (domain/outbound-lifecycle.ts) allows one move out of a final state, the repair agent_only →
 * completed, so two instants tell it all: the attempt ended (in agent_only when it was repaired
 * since, else in the current state; a failed state is also reported as failed at that instant), and
 * the repair (told before the second attempt it makes, at the same instant).
 */
export function outboundSteps(
  lifecycle: OutboundLifecycle | null,
  endedAt: Date | null,
  repairedAt: Date | null,
): CallStep[] {
  if (!endedAt || !lifecycle) return [];
  const first: OutboundLifecycle = repairedAt ? 'agent_only' : lifecycle;
  const steps: CallStep[] = [{ kind: 'attempted', at: endedAt, lifecycle: first }];
  if (FAILED_OUTBOUND_STATES.has(first)) steps.push({ kind: 'failed', at: endedAt });
  if (repairedAt) {
    steps.push({ kind: 'repaired', at: repairedAt }, { kind: 'attempted', at: repairedAt, lifecycle });
  }
  return steps;
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

/** calls.tracker_matches (jsonb, as completion stored it: [{tracker_id, name, matched_terms, excerpts}]). */
function trackerMatchesOf(v: unknown): CallTrackerMatch[] {
  const matches = Array.isArray(v) ? (v as unknown[]) : [];
  return matches
    .filter((m): m is Record<string, unknown> => m !== null && typeof m === 'object')
    .map((m) => ({
      name: String(m.name ?? 'Tracker'),
      matchedTerms: strings(m.matched_terms),
      excerpts: strings(m.excerpts),
    }));
}

/**
 * The [start, end] seconds of each transcript line (calls.transcript_times) when they fit the
 * transcript's `lines` lines; null otherwise (no times, or a transcript that is not the one timed).
 */
export function lineTimesOf(v: unknown, lines: number): [number, number][] | null {
  if (!Array.isArray(v) || v.length !== lines || lines === 0) return null;
  const ok = v.every(
    (t) =>
      Array.isArray(t) &&
      t.length === 2 &&
      typeof t[0] === 'number' &&
      typeof t[1] === 'number' &&
      Number.isFinite(t[0]) &&
      t[0] >= 0,
  );
  return ok ? (v as [number, number][]) : null;
}
