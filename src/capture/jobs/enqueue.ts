import type { Queryable } from '../../db/types.ts';
import { newId } from '../../ids.ts';
import type { ClaimedJob, RunChain, Stage } from './types.ts';

/** The channel runners LISTEN on; an enqueue notifies it in its transaction (delivered at commit). */
export const JOBS_CHANNEL = 'processing_jobs';

/**
 * A write of the caller's own that rides in the enqueue's statement, as data-modifying CTEs (one
 * round trip, not two; they run whether or not the job row is written): `sql(first)` is the list of
 * CTEs (`a AS (…), b AS (…)`, names other than `job`) with their parameters numbered from $first,
 * `params` theirs; `name` tells the combined statement apart (prepared by name). Only a write
 * whose outcome the caller does not read.
 */
export interface AlsoWrite {
  name: string;
  sql: (first: number) => string;
  params: unknown[];
}

/**
 * Queues one stage of a call, in the caller's transaction (the one that makes the stage's input
 * true: a stored recording, a posted transcript), and — when it is due now — wakes the runners at
 * commit. One row per
 * (call, stage): a stage queued again while pending stays as it is; one that had finished (a
 * reprocess, a re-uploaded recording) starts afresh with its attempts reset.
 * `state: 'waiting'` + `at`: due only then (the complete stage waiting for a recording).
 * `chain`: the run that queues it offers to run it next (./runner.ts, "The chain"), or the route
 * that runs it right after its response (JobRunner.offer: the recording callback's download): a
 * stage due now that the runner takes is inserted already leased to it, as its claim would have
 * leased it (attempts 1, due again at the lease's expiry), and nobody is woken.
 * `wake: false`: the caller runs the job itself right after the commit (a route's runner.soon()):
 * no NOTIFY. Every NOTIFY serialises its transaction's commit, WAL flush included, behind the other
 * NOTIFYing commits of the server (PostgreSQL's notify lock), and the runners it woke only raced the
 * caller's claim; the job is pending and unleased, so should the caller not run it (its process
 * gone), any runner's poll finds it.
 */
export async function enqueueStage(
  tx: Queryable,
  p: {
    organizationId: string;
    callId: string;
    stage: Stage;
    now: Date;
    at?: Date;
    state?: 'pending' | 'waiting' | 'succeeded';
    input?: Record<string, unknown> | null;
    chain?: RunChain;
    wake?: boolean;
    also?: AlsoWrite;
  },
): Promise<void> {
  const state = p.state ?? 'pending';
  const at = p.at ?? p.now;
  const lease =
    state === 'pending' && at.getTime() <= p.now.getTime()
      ? (p.chain?.leaseFor(p.stage, p.callId) ?? null)
      : null;
  if (lease) {
    const job = await enqueueLeased(tx, { ...p, ...lease });
    if (job) p.chain!.leased(job);
    return;
  }
  // The NOTIFY rides in the same statement (one round trip, not two), and only for work due now that
  // the caller does not run itself: a job due later (a waiting complete stage, a retry) is found by
  // the runners' poll, and waking them for it only cost every runner a claim that found nothing.
  const notify = p.wake !== false && state !== 'succeeded' && at.getTime() <= p.now.getTime();
  await tx.query(
    `WITH ${p.also ? `${p.also.sql(10)}, ` : ''}job AS (
       INSERT INTO processing_jobs (id, organization_id, call_id, stage, state, next_attempt_at, input, created_at,
         updated_at, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, CASE WHEN $5 = 'succeeded' THEN $8::timestamptz END)
       ON CONFLICT (call_id, stage) DO UPDATE
          SET state = EXCLUDED.state, next_attempt_at = EXCLUDED.next_attempt_at, input = EXCLUDED.input,
              attempts = 0, last_error = NULL, last_error_kind = NULL, lease_owner = NULL, lease_expires_at = NULL,
              finished_at = EXCLUDED.finished_at, updated_at = EXCLUDED.updated_at
        WHERE processing_jobs.state NOT IN ('pending', 'waiting') OR EXCLUDED.state = 'succeeded'
     )
     SELECT pg_notify('${JOBS_CHANNEL}', $3::text) WHERE $9::boolean`,
    [
      newId(),
      p.organizationId,
      p.callId,
      p.stage,
      state,
      at,
      p.input ? JSON.stringify(p.input) : null,
      p.now,
      notify,
      ...(p.also?.params ?? []),
    ],
    { name: p.also ? `capture_enqueue_stage_v1_${p.also.name}` : 'capture_enqueue_stage_v1' },
  );
}

/**
 * enqueueStage for the runner that runs the stage next: the row as a claim leaves it (lease_owner,
 * lease_expires_at, next_attempt_at at the expiry, attempts 1), no NOTIFY. A row still pending or
 * waiting is left as it is and nothing comes back (it is any runner's, woken when it was queued).
 */
async function enqueueLeased(
  tx: Queryable,
  p: {
    organizationId: string;
    callId: string;
    stage: Stage;
    now: Date;
    input?: Record<string, unknown> | null;
    owner: string;
    leaseUntil: Date;
    also?: AlsoWrite;
  },
): Promise<ClaimedJob | null> {
  const { rows } = await tx.query<{ id: string; attempts: number; input: Record<string, unknown> | null }>(
    `${p.also ? `WITH ${p.also.sql(9)} ` : ''}INSERT INTO processing_jobs (id, organization_id, call_id, stage, state, next_attempt_at, input, created_at,
       updated_at, attempts, lease_owner, lease_expires_at)
     VALUES ($1, $2, $3, $4, 'pending', $7, $5, $6, $6, 1, $8, $7)
     ON CONFLICT (call_id, stage) DO UPDATE
        SET state = 'pending', next_attempt_at = EXCLUDED.next_attempt_at, input = EXCLUDED.input,
            attempts = 1, last_error = NULL, last_error_kind = NULL, lease_owner = EXCLUDED.lease_owner,
            lease_expires_at = EXCLUDED.lease_expires_at, finished_at = NULL, updated_at = EXCLUDED.updated_at
      WHERE processing_jobs.state NOT IN ('pending', 'waiting')
     RETURNING id, attempts, input`,
    [
      newId(),
      p.organizationId,
      p.callId,
      p.stage,
      p.input ? JSON.stringify(p.input) : null,
      p.now,
      p.leaseUntil,
      p.owner,
      ...(p.also?.params ?? []),
    ],
    { name: p.also ? `capture_enqueue_leased_v1_${p.also.name}` : 'capture_enqueue_leased_v1' },
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    organizationId: p.organizationId,
    callId: p.callId,
    stage: p.stage,
    attempts: r.attempts,
    input: r.input,
  };
}

/**
 * The completion step finished elsewhere (a recording arrived, was refused or deleted, and the
 * events went out in that transaction): the call's waiting complete stage is done. Called by
 * src/capture/completion.ts inside the transaction that emitted the events.
 */
export async function markCompletionDone(tx: Queryable, callId: string, now: Date): Promise<void> {
  await tx.query(
    `UPDATE processing_jobs SET state = 'succeeded', lease_owner = NULL, lease_expires_at = NULL, last_error = NULL,
            last_error_kind = NULL, finished_at = $2, updated_at = $2
      WHERE call_id = $1 AND stage = 'complete' AND state IN ('pending', 'waiting', 'failed')`,
    [callId, now],
  );
}

/** An erased call is gone: its unfinished jobs are cancelled and their errors and inputs blanked. */
export async function cancelCallJobs(tx: Queryable, callId: string, now: Date): Promise<void> {
  await tx.query(
    `UPDATE processing_jobs
        SET state = CASE WHEN state IN ('succeeded') THEN state ELSE 'cancelled' END,
            last_error = NULL, input = NULL, lease_owner = NULL, lease_expires_at = NULL,
            finished_at = COALESCE(finished_at, $2), updated_at = $2
      WHERE call_id = $1`,
    [callId, now],
  );
}
