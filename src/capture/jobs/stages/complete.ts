import { findIngestCall } from '../../call-record.ts';
import { completeIfReady, RECORDING_WAIT_MS, recordingSettled } from '../../completion.ts';
import type { StageHandler } from '../types.ts';

/**
 * The complete stage: only for a call whose analysis was stored while its recording was still
 * pending (otherwise the analyse stage completed it in its own transaction). It waits, not counting
 * attempts, until the recording settles — a recording stored, refused or deleted completes the call
 * in that transaction and marks this stage done — or until RECORDING_WAIT_MS after the analysis;
 * then it emits the completion events without the recording (duration 0, recording_url null).
 */
export const completeStage: StageHandler = async ({ deps, job }) => {
  const call = await findIngestCall(deps.db, job.callId);
  if (!call || call.erased_at) return { kind: 'cancelled', reason: 'the call was erased' };
  if (call.completion_emitted_at) return { kind: 'succeeded' };
  const { rows } = await deps.db.query<{ created_at: Date }>(
    'SELECT created_at FROM call_analyses WHERE call_id = $1',
    [call.id],
  );
  if (call.processing_state !== 'processed' || !rows[0]) {
    throw new Error('The call has no stored analysis to complete; reprocess its analyse stage.');
  }
  const deadline = new Date(new Date(rows[0].created_at).getTime() + RECORDING_WAIT_MS);
  const overdue = deps.clock.now().getTime() >= deadline.getTime();
  if (!overdue && !recordingSettled(call)) return { kind: 'waiting', until: deadline };
  return {
    kind: 'succeeded',
    write: async (tx, locked) => {
      // the call as the runner's lock read it (lockRun): completeIfReady need not read it again
      await completeIfReady(tx, deps, call.id, { force: overdue, locked: locked ?? undefined });
    },
  };
};
