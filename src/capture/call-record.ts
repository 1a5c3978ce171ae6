import { rowInScope } from '../db/tenant-sql.ts';
import type { Queryable } from '../db/types.ts';
import type { Environment, Scope } from '../domain/tenant.ts';
import { notFound } from '../errors.ts';
import { isUuid } from '../ids.ts';
import type { Tracker } from './trackers.ts';
import type { TranscriptTimes } from './transcript-times.ts';

/** The columns of a call that ingestion reads, with its organization's name, language and country. */
export interface IngestCall {
  id: string;
  organization_id: string;
  environment: Environment;
  direction: 'inbound' | 'outbound';
  caller_phone: string;
  customer_phone: string | null;
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
  company_phone_e164: string | null;
  caller_name: string | null;
  agent_user_id: string | null;
  outbound_lifecycle: string | null;
  recording_mode: 'normal' | 'no_recording';
  recording_state: 'pending' | 'available' | 'refused' | 'not_captured' | 'deleted';
  recording_key: string | null;
  recording_sid: string | null;
  duration: number | null;
  processing_state: 'none' | 'queued' | 'processed';
  pending_transcript: string | null;
  pending_transcript_language: string | null;
  completion_emitted_at: Date | null;
  trashed_at: Date | null;
  deletion_scheduled_at: Date | null;
  pending_deletion_at: Date | null;
  deletion_reason: string | null;
  erased_at: Date | null;
  created_at: Date;
  /** a voicemail (the caller alone, <Record>): one-sided, never a follow-up draft */
  voicemail: boolean;
  /** the carrier that played the call: 'twilio', 'simulated' (test mode), null (operator ingestion) */
  telephony_provider: string | null;
  org_name: string;
  org_language: string;
  org_country: string | null;
}

export const CALL_NOT_FOUND = 'No call with this id exists (or it was erased).';

/**
 * Loads one call by id; a malformed id is "not found" without a query. forUpdate locks the call row
 * for the rest of the transaction, so concurrent ingestion steps on one call serialise.
 */
export async function findIngestCall(
  q: Queryable,
  callId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<IngestCall | null> {
  if (!isUuid(callId)) return null;
  const { rows } = await q.query<IngestCall>(
    `${INGEST_CALL_SQL}
      ${opts.forUpdate ? 'FOR UPDATE OF c' : ''}`,
    [callId],
    // every processing stage reads it: planned once per connection
    { name: opts.forUpdate ? 'capture_ingest_call_locked_v2' : 'capture_ingest_call_v2' },
  );
  return rows[0] ?? null;
}

/**
 * findIngestCall (unlocked) with the times of its queued transcript (calls.pending_transcript_times,
 * ../transcript-times.ts) and its organization's trackers (as completion.ts reads them): the analyse
 * stage's one read of the call. The trackers are those of the moment the analysis starts (a tracker
 * added or removed while the provider answers applies from the next call).
 */
export async function findIngestCallWithTimes(
  q: Queryable,
  callId: string,
): Promise<
  (IngestCall & { pending_transcript_times: TranscriptTimes | null; org_trackers: Tracker[] }) | null
> {
  if (!isUuid(callId)) return null;
  const { rows } = await q.query<
    IngestCall & { pending_transcript_times: TranscriptTimes | null; org_trackers: Tracker[] }
  >(
    INGEST_CALL_SQL.replace(
      'SELECT c.id,',
      `SELECT c.pending_transcript_times,
              (SELECT coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'terms', t.terms)
                                        ORDER BY t.created_at, t.id), '[]'::json)
                 FROM trackers t WHERE t.organization_id = c.organization_id) AS org_trackers,
              c.id,`,
    ),
    [callId],
    { name: 'capture_ingest_call_times_v2' },
  );
  return rows[0] ?? null;
}

/** The IngestCall columns, of `calls c JOIN organizations o` (the job runner's lock reads them too). */
export const INGEST_CALL_COLUMNS = `c.id, c.organization_id, c.environment, c.direction, c.caller_phone, c.customer_phone, c.customer_phone_e164,
            c.customer_phone_national, c.company_phone_e164, c.caller_name, c.agent_user_id, c.outbound_lifecycle,
            c.recording_mode, c.recording_state, c.recording_key, c.recording_sid, c.duration, c.processing_state,
            c.pending_transcript, c.pending_transcript_language, c.completion_emitted_at, c.trashed_at,
            c.deletion_scheduled_at, c.pending_deletion_at, c.deletion_reason, c.erased_at, c.created_at,
            c.voicemail, c.telephony_provider, o.name AS org_name, o.language AS org_language, o.country AS org_country`;

const INGEST_CALL_SQL = `SELECT ${INGEST_CALL_COLUMNS}
       FROM calls c JOIN organizations o ON o.id = c.organization_id
      WHERE c.id = $1`;

/**
 * The call, locked, or 404 NOT_FOUND when it does not exist or was erased (erased calls are gone).
 * For the capture pipeline's own steps, which hold a call id from the call's own job or callback;
 * a command on behalf of a tenant or the operator uses lockCallInScope.
 */
export async function lockLiveCall(tx: Queryable, callId: string): Promise<IngestCall> {
  const call = await findIngestCall(tx, callId, { forUpdate: true });
  if (!call || call.erased_at) throw notFound(CALL_NOT_FOUND);
  return call;
}

/**
 * The call, locked, when it is live and within the scope; otherwise 404 NOT_FOUND — another
 * organization's or the other environment's call answers exactly as a call that does not exist. The one door of the call
 * commands (trash, deletion, erasure, statuses): whatever id a route passes, the scope decides.
 */
export function lockCallInScope(tx: Queryable, scope: Scope, callId: string): Promise<IngestCall> {
  return findCallInScope(tx, scope, callId, { forUpdate: true });
}

/** As lockCallInScope, without the lock (a check before work outside the transaction). */
export async function findCallInScope(
  q: Queryable,
  scope: Scope,
  callId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<IngestCall> {
  const call = await findIngestCall(q, callId, opts);
  if (!call || call.erased_at || !rowInScope(call, scope)) throw notFound(CALL_NOT_FOUND);
  return call;
}

/** The organization's owner (else its oldest user): the agent of an outbound call reported without one. */
export async function organizationOwner(q: Queryable, organizationId: string): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM users WHERE organization_id = $1 ORDER BY (role = 'owner') DESC, created_at, id LIMIT 1`,
    [organizationId],
  );
  return rows[0]?.id ?? null;
}
