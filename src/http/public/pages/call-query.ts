import type { Queryable } from '../../../db/types.ts';
import type { RecordingFacts } from '../../../domain/recording-availability.ts';
import type { CrmStatus, Direction, OutboundLifecycle, ReviewStatus } from '../../../domain/values.ts';
import { notFound } from '../../../errors.ts';
import { isUuid } from '../../../ids.ts';

/**
 * The reads of the call page: one call of the signed-in user's organization with its analysis and
 * transcript, and the events that tell its outbound lifecycle and tracker matches. Erased calls and
 * calls of other organizations are "not found", like in the REST API.
 */
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

export async function findCallForPage(
  q: Queryable,
  organizationId: string,
  id: string,
): Promise<CallPageRow> {
  if (!isUuid(id)) throw notFound(CALL_NOT_FOUND);
  const { rows } = await q.query<CallPageRow>(
    `SELECT c.id, c.direction, c.caller_phone, c.customer_phone_e164, c.customer_phone_national,
            c.company_phone_e164, c.caller_name, c.duration, c.crm_status, c.review_status, c.outbound_lifecycle,
            c.failure_reason, c.recording_state, c.recording_mode, c.recording_deleted_at, c.processing_state,
            c.trashed_at, c.deletion_scheduled_at, c.pending_deletion_at, c.deletion_reason, c.created_at,
            o.entitlement, u.email AS agent_email,
            ca.call_id IS NOT NULL AS has_analysis, ca.analysis, ca.transcript_original,
            ca.language AS analysis_language, ca.followup_email
       FROM calls c
       JOIN organizations o ON o.id = c.organization_id
       LEFT JOIN users u ON u.id = c.agent_user_id
       LEFT JOIN call_analyses ca ON ca.call_id = c.id AND ca.organization_id = c.organization_id
      WHERE c.id = $1::uuid AND c.organization_id = $2::uuid AND c.erased_at IS NULL`,
    [id.toLowerCase(), organizationId],
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

/** The call events the page shows (lifecycle and tracker matches), oldest first. */
export interface CallPageEvent {
  event_type: string;
  created_at: Date;
  data: Record<string, unknown>;
}

const PAGE_EVENT_TYPES = [
  'call.outbound.attempted',
  'call.failed',
  'call.outbound.lifecycle_repaired',
  'call.tracker.matched',
  'call.deletion_scheduled',
  'call.recording.ready',
];

export async function callPageEvents(
  q: Queryable,
  organizationId: string,
  callId: string,
): Promise<CallPageEvent[]> {
  const { rows } = await q.query<{ event_type: string; created_at: Date; body: string }>(
    `SELECT event_type, created_at, body FROM events
      WHERE call_id = $1::uuid AND organization_id = $2::uuid AND event_type = ANY($3::text[])
      ORDER BY created_at, id`,
    [callId, organizationId, PAGE_EVENT_TYPES],
    { name: 'pages_call_events_v1' },
  );
  const out: CallPageEvent[] = [];
  for (const r of rows) {
    try {
      const env = JSON.parse(r.body) as { data?: unknown };
      if (env.data && typeof env.data === 'object') {
        out.push({
          event_type: r.event_type,
          created_at: r.created_at,
          data: env.data as Record<string, unknown>,
        });
      }
    } catch {
      // An unreadable body shows nothing rather than failing the page.
    }
  }
  return out;
}
