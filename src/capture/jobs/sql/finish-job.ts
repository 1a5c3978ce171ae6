import type { Queryable } from '../../../db/types.ts';
import type { ClaimedJob } from '../types.ts';

/**
 * The writes that end one run of a job. Each runs inside the runner's transaction after
 * lockRun(): the call row is locked first (every writer of a call locks it before its jobs, so
 * a stage's commit and a recording upload cannot deadlock), then the job row is checked to still be
 * this run's — pending or waiting, leased by this owner, with this run's attempt count.
 */

/** Thrown (and the transaction rolled back) when the run lost its lease: nothing of it is written. */
export class LeaseLost extends Error {
  constructor(job: ClaimedJob) {
    super(`processing job ${job.id} (${job.stage}) is no longer this worker's; its result is dropped`);
    this.name = 'LeaseLost';
  }
}

/**
 * One statement, the call's lock first: the materialised CTE locks the call row when the uncorrelated
 * subquery is evaluated — in the filter, before the job row that passed it is locked (LockRows sits
 * above the scan). A job row that is not this run's returns nothing, and the run rolls back.
 */
export const LOCK_RUN_SQL = `
WITH call AS MATERIALIZED (SELECT 1 FROM calls WHERE id = $4 FOR UPDATE)
SELECT 1 FROM processing_jobs
 WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state IN ('pending', 'waiting')
   AND (SELECT count(*) FROM call) >= 0
   FOR UPDATE`;

export async function lockRun(tx: Queryable, job: ClaimedJob, owner: string): Promise<void> {
  const r = await tx.query(LOCK_RUN_SQL, [job.id, owner, job.attempts, job.callId], {
    name: 'capture_lock_run_v1',
  });
  if (r.rowCount === 0) throw new LeaseLost(job);
}

/** A final state (succeeded, failed, needs_review, cancelled): lease released, finished_at set. */
export async function finishJob(
  tx: Queryable,
  p: {
    id: string;
    state: 'succeeded' | 'failed' | 'needs_review' | 'cancelled';
    error: string | null;
    errorKind: string | null;
    now: Date;
  },
): Promise<void> {
  await tx.query(
    `UPDATE processing_jobs
        SET state = $2, last_error = COALESCE($3, CASE WHEN $2 = 'succeeded' THEN NULL ELSE last_error END),
            last_error_kind = COALESCE($4, CASE WHEN $2 = 'succeeded' THEN NULL ELSE last_error_kind END),
            lease_owner = NULL, lease_expires_at = NULL, finished_at = $5, updated_at = $5
      WHERE id = $1`,
    [p.id, p.state, p.error, p.errorKind, p.now],
  );
}

/**
 * Due again at `at`: a retry after a failure (error kept, the attempt counted), or a wait (the
 * complete stage waiting for its recording: not an attempt, so the count is given back).
 */
export async function rescheduleJob(
  tx: Queryable,
  p: { id: string; at: Date; now: Date } & (
    | { kind: 'retry'; error: string; errorKind: string }
    | { kind: 'wait' }
  ),
): Promise<void> {
  if (p.kind === 'retry') {
    await tx.query(
      `UPDATE processing_jobs SET state = 'pending', next_attempt_at = $2, last_error = $3, last_error_kind = $4,
              lease_owner = NULL, lease_expires_at = NULL, updated_at = $5
        WHERE id = $1`,
      [p.id, p.at, p.error, p.errorKind, p.now],
    );
  } else {
    await tx.query(
      `UPDATE processing_jobs SET state = 'waiting', next_attempt_at = $2, attempts = greatest(attempts - 1, 0),
              lease_owner = NULL, lease_expires_at = NULL, updated_at = $3
        WHERE id = $1`,
      [p.id, p.at, p.now],
    );
  }
}

/** What ended a run (the outcome label of the job metrics). */
export const JOB_OUTCOMES = ['done', 'retry', 'failed', 'needs_review', 'wait', 'cancelled'] as const;
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

/** callcap_processing_job_outcomes_total: one of eight shards, in the outcome's transaction. */
export async function countOutcome(tx: Queryable, stage: string, outcome: JobOutcome): Promise<void> {
  await tx.query(
    `INSERT INTO processing_job_outcomes (stage, outcome, shard, n) VALUES ($1, $2, floor(random() * 8)::int, 1)
     ON CONFLICT (stage, outcome, shard) DO UPDATE SET n = processing_job_outcomes.n + 1`,
    [stage, outcome],
  );
}
