import type { Queryable } from '../../db/types.ts';
import { newId } from '../../ids.ts';
import type { Stage } from './types.ts';

/** The channel runners LISTEN on; an enqueue notifies it in its transaction (delivered at commit). */
export const JOBS_CHANNEL = 'processing_jobs';

/**
 * Queues one stage of a call, in the caller's transaction (the one that makes the stage's input
 * true: a stored recording, a posted transcript), and — when it is due now — wakes the runners at
 * commit. One row per
 * (call, stage): a stage queued again while pending stays as it is; one that had finished (a
 * reprocess, a re-uploaded recording) starts afresh with its attempts reset.
 * `state: 'waiting'` + `at`: due only then (the complete stage waiting for a recording).
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
  },
): Promise<void> {
  const state = p.state ?? 'pending';
  const at = p.at ?? p.now;
  // The NOTIFY rides in the same statement (one round trip, not two), and only for work due now: a
  // job due later (a waiting complete stage, a retry) is found by the runners' poll,
  // and waking them for it only cost every runner a claim that found nothing.
  const notify = state !== 'succeeded' && at.getTime() <= p.now.getTime();
  await tx.query(
    `WITH job AS (
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
    ],
    { name: 'capture_enqueue_stage_v1' },
  );
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
