import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { eraseCall } from './deletion.ts';
import { deleteRecording } from './recording-lifecycle.ts';

/** How many calls one sweep handles per rule; the next sweep continues where this one stopped. */
const SWEEP_BATCH = 200;

export interface RetentionResult {
  erased: number;
  recordingsDeleted: number;
}

/**
 * The retention sweep (worker role), two rules:
 * 1. A call whose scheduled deletion is due (`pending_deletion_at` passed, announced earlier by
 *    call.deletion_scheduled) is erased: every read answers 404 from then on.
 * 2. An organization with `retention_days` keeps audio that long: older recordings are deleted
 *    (call.recording.deleted, reason retention_expired; recording-url answers 410 RECORDING_DELETED).
 *    The call's metadata and analysis stay.
 * Each call is handled in its own transaction by the same functions the operator API uses, so a
 * failure on one call never blocks the others. Several workers may sweep at once: a call erased by
 * another one between the read and the lock is skipped, not reported as a failure.
 */
export async function runRetentionSweep(deps: Deps): Promise<RetentionResult> {
  const now = deps.clock.now();
  const result: RetentionResult = { erased: 0, recordingsDeleted: 0 };

  const due = await deps.db.query<{ id: string }>(
    `SELECT id FROM calls WHERE pending_deletion_at <= $1 AND erased_at IS NULL
      ORDER BY pending_deletion_at LIMIT $2`,
    [now, SWEEP_BATCH],
  );
  for (const { id } of due.rows) {
    if (await attempt(deps, id, 'erase', () => eraseCall(deps, id))) result.erased++;
  }

  const orgs = await deps.db.query<{ id: string; retention_days: number }>(
    'SELECT id, retention_days FROM organizations WHERE retention_days IS NOT NULL',
  );
  for (const org of orgs.rows) {
    const cutoff = new Date(now.getTime() - org.retention_days * 24 * 3600 * 1000);
    const old = await deps.db.query<{ id: string }>(
      `SELECT id FROM calls
        WHERE organization_id = $1 AND erased_at IS NULL AND recording_state = 'available' AND created_at < $2
        ORDER BY created_at LIMIT $3`,
      [org.id, cutoff, SWEEP_BATCH],
    );
    for (const { id } of old.rows) {
      const ok = await attempt(deps, id, 'retention', () =>
        deleteRecording(deps, id, { deletionKind: 'hard_deleted', reason: 'retention_expired' }),
      );
      if (ok) result.recordingsDeleted++;
    }
  }
  return result;
}

async function attempt(deps: Deps, callId: string, what: string, fn: () => Promise<void>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (err) {
    // Erased meanwhile: another worker's sweep (every worker runs it) or an operator got there first.
    if (err instanceof AppError && err.code === 'NOT_FOUND') return false;
    deps.log.error({ callId, sweep: what, err: (err as Error).message }, 'retention sweep failed for a call');
    return false;
  }
}
