import type { Queryable } from '../../../db/types.ts';
import type { LeaseClaim } from '../../../queue.ts';
import type { ClaimedJob, Stage } from '../types.ts';

/**
 * The claim: one statement, like the webhook deliveries' (src/webhooks/delivery/sql/claim-deliveries.ts).
 * Due jobs of the stages this runner has handlers for, oldest due first, skipping rows another
 * runner is claiming right now (FOR UPDATE SKIP LOCKED), are leased: lease_owner/lease_expires_at,
 * attempts + 1 (the run's fencing token: every write of the run checks it), and next_attempt_at
 * moved to the lease expiry, so a dead worker's job is due again exactly when its lease runs out.
 * $6 limits the claim to one call (the API process running what it just enqueued).
 */
export const CLAIM_JOBS_SQL = `
WITH due AS (
  SELECT j.id
    FROM processing_jobs j
   WHERE j.state IN ('pending', 'waiting')
     AND j.next_attempt_at <= $1
     AND (j.lease_expires_at IS NULL OR j.lease_expires_at <= $1)
     AND j.stage = ANY ($5::text[])
     AND ($6::uuid IS NULL OR j.call_id = $6::uuid)
   ORDER BY j.next_attempt_at
   LIMIT $2
   FOR UPDATE SKIP LOCKED
)
UPDATE processing_jobs j
   SET lease_owner = $3, lease_expires_at = $4, next_attempt_at = $4, attempts = j.attempts + 1, updated_at = $1
  FROM due
 WHERE j.id = due.id
RETURNING j.id, j.organization_id, j.call_id, j.stage, j.attempts, j.input`;

interface Row {
  id: string;
  organization_id: string;
  call_id: string;
  stage: Stage;
  attempts: number;
  input: Record<string, unknown> | null;
}

export async function claimJobs(
  db: Queryable,
  p: LeaseClaim & {
    stages: readonly Stage[];
    callId?: string | null;
  },
): Promise<ClaimedJob[]> {
  if (p.limit <= 0 || p.stages.length === 0) return [];
  const { rows } = await db.query<Row>(CLAIM_JOBS_SQL, [
    p.now,
    p.limit,
    p.owner,
    p.leaseUntil,
    p.stages,
    p.callId ?? null,
  ]);
  return rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    callId: r.call_id,
    stage: r.stage,
    attempts: r.attempts,
    input: r.input,
  }));
}

/** Keeps a running job's lease alive; false when it is no longer this run's (expired and re-claimed, or finished elsewhere). */
export async function extendLease(
  db: Queryable,
  p: { id: string; owner: string; attempts: number; leaseUntil: Date; now: Date },
): Promise<boolean> {
  const r = await db.query(
    `UPDATE processing_jobs SET lease_expires_at = $4, next_attempt_at = $4, updated_at = $5
      WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state IN ('pending', 'waiting')`,
    [p.id, p.owner, p.attempts, p.leaseUntil, p.now],
  );
  return r.rowCount > 0;
}

/** A run interrupted by a stopping runner: the job is due again at once and the run is not counted. */
export async function releaseJob(
  db: Queryable,
  p: { job: ClaimedJob; owner: string; now: Date },
): Promise<void> {
  await db.query(
    `UPDATE processing_jobs SET lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = $4,
            attempts = greatest(attempts - 1, 0), updated_at = $4
      WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state IN ('pending', 'waiting')`,
    [p.job.id, p.owner, p.job.attempts, p.now],
  );
}
