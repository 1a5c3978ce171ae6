import { inAnyScope } from '../db/tenant-sql.ts';
import type { Queryable } from '../db/types.ts';
import type { RecordingFacts } from '../domain/recording-availability.ts';
import type { RecordingConsent } from '../domain/recording-consent.ts';
import type { Environment, TenantScope } from '../domain/tenant.ts';
import { isUuid } from '../ids.ts';

/** The columns of a call that recording reads and writes need, with its organization's entitlement. */
export interface RecordingCall {
  id: string;
  organization_id: string;
  environment: Environment;
  direction: RecordingFacts['direction'];
  recording_state: RecordingFacts['recordingState'];
  recording_mode: RecordingFacts['recordingMode'];
  /** the caller's answer to the consent announcement (domain/recording-consent.ts) */
  recording_consent: RecordingConsent;
  outbound_lifecycle: string | null;
  recording_key: string | null;
  recording_bytes: number | null;
  recording_sid: string | null;
  duration: number | null;
  recording_deleted_at: Date | null;
  trashed_at: Date | null;
  deletion_scheduled_at: Date | null;
  pending_deletion_at: Date | null;
  erased_at: Date | null;
  entitlement: 'active' | 'inactive';
  /** read by findRecordingCall (another reader of these columns may leave it out) */
  processing_state?: 'none' | 'queued' | 'processed';
}

/**
 * Loads one call by id, optionally only within a tenant scope (REST: another organization's or the
 * other environment's call is simply not found). A malformed id is "not found" without a query. forUpdate locks the call row
 * for the rest of the transaction, so concurrent uploads and deletions of one recording serialise.
 */
export async function findRecordingCall(
  q: Queryable,
  callId: string,
  opts: { scope?: TenantScope; forUpdate?: boolean } = {},
): Promise<RecordingCall | null> {
  if (!isUuid(callId)) return null;
  const { rows } = await q.query<RecordingCall>(
    `SELECT c.id, c.organization_id, c.environment, c.direction, c.recording_state, c.recording_mode, c.recording_consent,
            c.outbound_lifecycle, c.recording_key, c.recording_bytes, c.recording_sid, c.duration, c.recording_deleted_at,
            c.trashed_at, c.deletion_scheduled_at, c.pending_deletion_at, c.erased_at, o.entitlement, c.processing_state
       FROM calls c JOIN organizations o ON o.id = c.organization_id
      WHERE c.id = $1 AND ${inAnyScope('c', 2, 3)}
      ${opts.forUpdate ? 'FOR UPDATE OF c' : ''}`,
    [callId, opts.scope?.organizationId ?? null, opts.scope?.environment ?? null],
    { name: opts.forUpdate ? 'recordings_call_locked_v3' : 'recordings_call_v3' },
  );
  return rows[0] ?? null;
}

export function factsOf(
  c: Pick<
    RecordingCall,
    | 'direction'
    | 'recording_state'
    | 'recording_mode'
    | 'outbound_lifecycle'
    | 'trashed_at'
    | 'deletion_scheduled_at'
    | 'pending_deletion_at'
    | 'erased_at'
  >,
): RecordingFacts {
  return {
    direction: c.direction,
    recordingState: c.recording_state,
    recordingMode: c.recording_mode,
    outboundLifecycle: c.outbound_lifecycle,
    trashed: c.trashed_at !== null,
    deletionScheduled: c.deletion_scheduled_at !== null || c.pending_deletion_at !== null,
    erased: c.erased_at !== null,
  };
}
