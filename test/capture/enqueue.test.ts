/**
 * enqueueStage (src/capture/jobs/enqueue.ts): the row, and the NOTIFY that wakes the runners — sent
 * in the same statement, and only for work due now that its caller does not run itself.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { enqueueStage, JOBS_CHANNEL } from '../../src/capture/jobs/enqueue.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

let h: Harness;
let orgId: string;
before(async () => {
  h = await createHarness();
  orgId = (await insertOrg(h.db)).orgId;
});
after(() => h.close());

test('a job due now wakes the runners at commit; one due later, already done, or run by its caller (wake: false) does not', async () => {
  const heard: string[] = [];
  const stop = await h.db.listen(JOBS_CHANNEL, (payload) => heard.push(payload));
  try {
    const now = h.clock.now();
    const later = await insertCall(h.db, { orgId });
    const done = await insertCall(h.db, { orgId });
    const due = await insertCall(h.db, { orgId });
    const ownRun = await insertCall(h.db, { orgId });
    await h.db.transaction(async (tx) => {
      // the recording callback's download: due now, run by the route itself after the commit
      await enqueueStage(tx, { organizationId: orgId, callId: ownRun, stage: 'download', now, wake: false });
      await enqueueStage(tx, {
        organizationId: orgId,
        callId: later,
        stage: 'download',
        now,
        at: new Date(now.getTime() + 120_000),
      });
      await enqueueStage(tx, {
        organizationId: orgId,
        callId: done,
        stage: 'complete',
        now,
        state: 'succeeded',
      });
    });
    // notifications arrive in commit order: once the due job's is heard, the others would have been
    await h.db.transaction((tx) =>
      enqueueStage(tx, { organizationId: orgId, callId: due, stage: 'transcribe', now }),
    );
    await waitFor(async () => heard.length > 0, "the due job's notification", 30_000);
    assert.deepEqual(heard, [due]);
    const { rows } = await h.db.query<{
      call_id: string;
      stage: string;
      state: string;
      next_attempt_at: Date;
    }>(
      'SELECT call_id, stage, state, next_attempt_at FROM processing_jobs WHERE call_id = ANY ($1::uuid[]) ORDER BY stage, next_attempt_at',
      [[later, done, due, ownRun]],
    );
    assert.deepEqual(
      rows.map((r) => [r.call_id, r.stage, r.state, new Date(r.next_attempt_at).getTime() - now.getTime()]),
      [
        [done, 'complete', 'succeeded', 0],
        [ownRun, 'download', 'pending', 0],
        [later, 'download', 'pending', 120_000],
        [due, 'transcribe', 'pending', 0],
      ],
    );
  } finally {
    await stop();
  }
});
