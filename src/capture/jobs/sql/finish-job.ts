import type { Queryable } from '../../../db/types.ts';
import { INGEST_CALL_COLUMNS } from '../../call-record.ts';
import type { ClaimedJob, LockedCall } from '../types.ts';

/**
 * The writes that end one run of a job, fenced by its lease: the call row is locked first (every
 * writer of a call locks it before its jobs, so a stage's commit and a recording upload cannot
 * deadlock), then the job row is checked to still be this run's — pending or waiting, leased by
 * this owner, with this run's attempt count (lockRun before a stage's own write; endRun's fence
 * when there is none).
 */

/** Thrown (and the transaction rolled back) when the run lost its lease: nothing of it is written. */
export class LeaseLost extends Error {
  constructor(job: ClaimedJob) {
    super(`processing job ${job.id} (${job.stage}) is no longer this worker's; its result is dropped`);
    this.name = 'LeaseLost';
  }
}

/**
 * The call row locked first, whole (lockRun's answer), for the statements that lock a run: `call`;
 * with its consent answer, which the download stage's write checks before it stores audio.
 */
const LOCK_CALL_CTE = `WITH call AS MATERIALIZED (
  SELECT ${INGEST_CALL_COLUMNS}, c.recording_consent, o.redaction_enabled
    FROM calls c JOIN organizations o ON o.id = c.organization_id
   WHERE c.id = $4
     FOR UPDATE OF c
)`;

/**
 * One statement, the call's lock first: the materialised CTE locks the call row when the uncorrelated
 * subquery is evaluated — in the job row's filter, before the job row that passed it is locked
 * (LockRows sits above the scan; a hash join that builds on the call reads it first anyway). A job
 * row that is not this run's returns nothing, and the run rolls back. The locked call comes back
 * whole (the columns of findIngestCall, with its organization's redaction setting): the stage's
 * write reads it instead of reading the locked row again.
 */
export const LOCK_RUN_SQL = `
${LOCK_CALL_CTE}, job AS MATERIALIZED (
  SELECT 1 FROM processing_jobs
   WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state IN ('pending', 'waiting')
     AND (SELECT count(*) FROM call) >= 0
     FOR UPDATE
)
SELECT call.*, call.id IS NOT NULL AS found FROM job LEFT JOIN call ON true`;

/** Locks the call and checks the run's lease (LeaseLost when it is gone); answers the locked call (null: no row). */
export async function lockRun(tx: Queryable, job: ClaimedJob, owner: string): Promise<LockedCall | null> {
  const r = await tx.query<{ found: boolean } & LockedCall>(
    LOCK_RUN_SQL,
    [job.id, owner, job.attempts, job.callId],
    { name: 'capture_lock_run_v4' },
  );
  const row = r.rows[0];
  if (!row) throw new LeaseLost(job);
  if (!row.found) return null;
  const { found: _, ...call } = row;
  return call;
}

/**
 * How a run ends, as one write of its job row: `finish` a final state (lease released, finished_at
 * set), `retry` due again at `at` with the error kept (the attempt counted), `wait` due again at `at`
 * without counting the attempt (the complete stage waiting for its recording).
 */
export type RunEnd =
  | {
      mode: 'finish';
      state: 'succeeded' | 'failed' | 'needs_review' | 'cancelled';
      error: string | null;
      errorKind: string | null;
    }
  | { mode: 'retry'; at: Date; error: string; errorKind: string }
  | { mode: 'wait'; at: Date };

/**
 * Shards of each outcome counter row, chosen by the connection (its backend's process id), not at
 * random: the row stays locked until the run's transaction commits — the stage's whole write and a
 * COMMIT that may queue behind other NOTIFYing commits — and two runs drawing the same one of 8
 * random shards waited on each other (bench:capture, docs/benchmarks.md 2026-11-27 10:2x). One
 * connection runs one transaction at a time, so runs on different connections take different rows
 * unless their process ids are equal modulo 64. /metrics sums the shards.
 */
const OUTCOME_SHARDS = 64;

/**
 * The end of a run, shared by endRun and lockAndEndRun: `done` ends the job row the CTE `mine`
 * selected (as finishJob / rescheduleJob / a wait write it) and `counted` counts its outcome.
 * Parameters $5–$12 as endParams lays them out.
 */
const END_JOB_CTES = `done AS (
  UPDATE processing_jobs j
     SET state = $8,
         next_attempt_at = CASE WHEN $7 = 'finish' THEN j.next_attempt_at ELSE $9 END,
         attempts = CASE WHEN $7 = 'wait' THEN greatest(j.attempts - 1, 0) ELSE j.attempts END,
         last_error = CASE $7 WHEN 'retry' THEN $10 WHEN 'wait' THEN j.last_error
                      ELSE COALESCE($10, CASE WHEN $8 = 'succeeded' THEN NULL ELSE j.last_error END) END,
         last_error_kind = CASE $7 WHEN 'retry' THEN $11 WHEN 'wait' THEN j.last_error_kind
                      ELSE COALESCE($11, CASE WHEN $8 = 'succeeded' THEN NULL ELSE j.last_error_kind END) END,
         lease_owner = NULL, lease_expires_at = NULL,
         finished_at = CASE WHEN $7 = 'finish' THEN $12 ELSE j.finished_at END,
         updated_at = $12
   WHERE j.id = (SELECT id FROM mine)
  RETURNING 1
), counted AS (
  INSERT INTO processing_job_outcomes (stage, outcome, shard, n)
  SELECT $5, $6, pg_backend_pid() % ${OUTCOME_SHARDS}, 1 WHERE EXISTS (SELECT 1 FROM done)
  ON CONFLICT (stage, outcome, shard) DO UPDATE SET n = processing_job_outcomes.n + 1
)`;

/** $1–$12 of END_RUN_SQL and LOCK_AND_END_RUN_SQL: the job, its lease, the call and how the run ended. */
function endParams(p: {
  job: ClaimedJob;
  owner: string;
  end: RunEnd;
  outcome: JobOutcome;
  now: Date;
}): unknown[] {
  const e = p.end;
  const state = e.mode === 'finish' ? e.state : e.mode === 'retry' ? 'pending' : 'waiting';
  return [
    p.job.id,
    p.owner,
    p.job.attempts,
    p.job.callId,
    p.job.stage,
    p.outcome,
    e.mode,
    state,
    e.mode === 'finish' ? null : e.at,
    e.mode === 'wait' ? null : e.error,
    e.mode === 'wait' ? null : e.errorKind,
    p.now,
  ];
}

/**
 * The end of a run in ONE statement: the job row written as finishJob / rescheduleJob write it and
 * the outcome counted (countOutcome), and — with `fence` — first the call's lock and the lease check
 * of lockRun, so a run that wrote nothing else needs no transaction at all (one round trip instead
 * of BEGIN, three statements and COMMIT). Without `fence` it runs after lockRun and the stage's write
 * in the runner's transaction: the job row is then written whatever that write did to it (the
 * complete stage's completion marks its own row done). Answers false when the fence found the job
 * no longer this run's: nothing was written.
 */
export const END_RUN_SQL = `
WITH call AS MATERIALIZED (SELECT 1 FROM calls WHERE $13::boolean AND id = $4 FOR UPDATE),
mine AS MATERIALIZED (
  SELECT id FROM processing_jobs
   WHERE id = $1
     AND (NOT $13::boolean OR (lease_owner = $2 AND attempts = $3 AND state IN ('pending', 'waiting')))
     AND (SELECT count(*) FROM call) >= 0
     FOR UPDATE
), ${END_JOB_CTES}
SELECT EXISTS (SELECT 1 FROM done) AS ended`;

export async function endRun(
  q: Queryable,
  p: { job: ClaimedJob; owner: string; fence: boolean; end: RunEnd; outcome: JobOutcome; now: Date },
): Promise<boolean> {
  const { rows } = await q.query<{ ended: boolean }>(END_RUN_SQL, [...endParams(p), p.fence], {
    name: 'capture_end_run_v2',
  });
  return rows[0]?.ended === true;
}

/** What ended a run (the outcome label of the job metrics). */
export const JOB_OUTCOMES = ['done', 'retry', 'failed', 'needs_review', 'wait', 'cancelled'] as const;
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

/**
 * lockRun and endRun in ONE statement, for a run whose outcome has a write of its own (the runner's
 * transaction: this, then the stage's write): the call row locked first, the lease checked, the job
 * row ended and the outcome counted — as endRun with its fence writes them — and the locked call
 * answered as lockRun answers it. The job row is written before the stage's write instead of after
 * it, in the same transaction: should that write fail, the rollback takes the end back too. No
 * stage's write reads its own job row (the complete stage's completion marks it done only while
 * pending or waiting: already succeeded, it is left as it is). Throws LeaseLost when the run lost
 * its lease: nothing was written.
 */
export const LOCK_AND_END_RUN_SQL = `
${LOCK_CALL_CTE}, mine AS MATERIALIZED (
  SELECT id FROM processing_jobs
   WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state IN ('pending', 'waiting')
     AND (SELECT count(*) FROM call) >= 0
     FOR UPDATE
), ${END_JOB_CTES}
SELECT call.*, call.id IS NOT NULL AS found FROM mine LEFT JOIN call ON true`;

export async function lockAndEndRun(
  tx: Queryable,
  p: { job: ClaimedJob; owner: string; end: RunEnd; outcome: JobOutcome; now: Date },
): Promise<LockedCall | null> {
  const r = await tx.query<{ found: boolean } & LockedCall>(LOCK_AND_END_RUN_SQL, endParams(p), {
    name: 'capture_lock_end_run_v3',
  });
  const row = r.rows[0];
  if (!row) throw new LeaseLost(p.job);
  if (!row.found) return null;
  const { found: _, ...call } = row;
  return call;
}
