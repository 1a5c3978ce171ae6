import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import { AppError, notFound } from '../../errors.ts';
import { CALL_NOT_FOUND, findIngestCall, lockLiveCall } from '../call-record.ts';
import { JOBS_CHANNEL } from './enqueue.ts';
import { STAGES, type Stage } from './types.ts';

/**
 * What the operator API shows of a call's processing (GET /admin/v1/calls/{id}/processing) and the
 * re-run (POST …/reprocess, `callcap calls reprocess <id>`). docs/capture.md "Processing jobs".
 */

export type StageStateView =
  | 'pending'
  | 'running'
  | 'waiting'
  | 'succeeded'
  | 'failed'
  | 'needs_review'
  | 'cancelled';

export interface StageView {
  stage: Stage;
  state: StageStateView;
  /** runs started; a reprocess starts again from 0 */
  attempts: number;
  max_attempts: number;
  /** the last failure (the provider's message, credentials scrubbed), or null */
  last_error: string | null;
  /** retryable, fatal, too_large, answer_too_large or invalid_output; null without an error */
  last_error_kind: string | null;
  /** when a pending or waiting stage runs next (ISO 8601); null while running or when final */
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/**
 * The call's processing at a glance, in precedence order: failed (a stage gave up: reprocess it),
 * needs_review (the analysis broke the schema), completed (call.completed was emitted), processing
 * (a stage is pending or running), waiting_for_recording (analysed; call.completed waits for the
 * audio), awaiting_transcript (nothing queued: no transcript posted and no transcription configured).
 */
export type ProcessingStatus =
  | 'failed'
  | 'needs_review'
  | 'completed'
  | 'processing'
  | 'waiting_for_recording'
  | 'awaiting_transcript';

export interface CallProcessing {
  call_id: string;
  status: ProcessingStatus;
  completed_at: string | null;
  stages: StageView[];
}

interface JobRow {
  stage: Stage;
  state: Exclude<StageStateView, 'running'>;
  attempts: number;
  last_error: string | null;
  last_error_kind: string | null;
  next_attempt_at: Date;
  lease_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export async function callProcessing(deps: Deps, callId: string): Promise<CallProcessing> {
  const call = await findIngestCall(deps.db, callId);
  if (!call || call.erased_at) throw notFound(CALL_NOT_FOUND);
  const { rows } = await deps.db.query<JobRow>(
    `SELECT stage, state, attempts, last_error, last_error_kind, next_attempt_at, lease_expires_at, created_at,
            updated_at, finished_at
       FROM processing_jobs WHERE call_id = $1`,
    [call.id],
  );
  const now = deps.clock.now().getTime();
  const stages = rows
    .sort((a, b) => STAGES.indexOf(a.stage) - STAGES.indexOf(b.stage))
    .map((r): StageView => {
      const running =
        r.state === 'pending' && r.lease_expires_at !== null && new Date(r.lease_expires_at).getTime() > now;
      const state: StageStateView = running ? 'running' : r.state;
      return {
        stage: r.stage,
        state,
        attempts: r.attempts,
        max_attempts: deps.config.PROCESSING_MAX_ATTEMPTS,
        last_error: r.last_error,
        last_error_kind: r.last_error_kind,
        next_attempt_at: state === 'pending' || state === 'waiting' ? iso(r.next_attempt_at) : null,
        created_at: iso(r.created_at)!,
        updated_at: iso(r.updated_at)!,
        finished_at: iso(r.finished_at),
      };
    });
  const has = (s: StageStateView) => stages.some((v) => v.state === s);
  const status: ProcessingStatus = has('failed')
    ? 'failed'
    : has('needs_review')
      ? 'needs_review'
      : call.completion_emitted_at
        ? 'completed'
        : has('pending') || has('running')
          ? 'processing'
          : has('waiting')
            ? 'waiting_for_recording'
            : 'awaiting_transcript';
  return { call_id: call.id, status, completed_at: iso(call.completion_emitted_at), stages };
}

/**
 * Re-queues a call's stages: those that failed or need review (`which: 'failed'`, the default), or
 * every stage that is not pending or running (`'all'`). Each starts afresh: attempts 0, error
 * cleared, due now. A stage whose result is already stored changes nothing when it runs again, and
 * events keep their ids: a reprocess never sends call.completed twice. 409 CONFLICT when there is
 * nothing to re-queue.
 */
export async function reprocessCall(
  deps: Deps,
  callId: string,
  which: 'failed' | 'all' = 'failed',
): Promise<{ call_id: string; requeued: Stage[] }> {
  return deps.db.transaction(async (tx) => {
    const call = await lockLiveCall(tx, callId);
    const now = deps.clock.now();
    const { rows } = await tx.query<{ stage: Stage }>(
      `UPDATE processing_jobs
          SET state = 'pending', attempts = 0, next_attempt_at = $3, last_error = NULL, last_error_kind = NULL,
              lease_owner = NULL, lease_expires_at = NULL, finished_at = NULL, updated_at = $3
        WHERE call_id = $1
          AND CASE WHEN $2 = 'all' THEN state NOT IN ('pending', 'waiting')
                   ELSE state IN ('failed', 'needs_review') END
        RETURNING stage`,
      [call.id, which, now],
    );
    if (rows.length === 0) {
      throw new AppError(
        'CONFLICT',
        which === 'all'
          ? 'Nothing to reprocess: this call has no finished processing stage (its stages are queued or running, or it has none).'
          : 'Nothing to reprocess: no processing stage of this call failed. Send {"stages": "all"} to run its finished stages again.',
      );
    }
    await notify(tx, call.id);
    const requeued = rows.map((r) => r.stage).sort((a, b) => STAGES.indexOf(a) - STAGES.indexOf(b));
    return { call_id: call.id, requeued };
  });
}

const notify = (tx: Queryable, callId: string) =>
  tx.query(`SELECT pg_notify('${JOBS_CHANNEL}', $1)`, [callId]);
