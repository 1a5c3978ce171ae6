/**
 * The chain (src/capture/jobs/runner.ts): a run that queues the call's next stage, when its runner
 * has that stage's handler, inserts it already leased to the runner and runs it next — no claim, no
 * NOTIFY. The leased row is the one a claim leaves, so lease expiry recovers it from a dead runner,
 * and a run that does not end in written success hands it back. Fake clock; the transcribe stage
 * is a small in-test handler queueing a transcript the way the real one does (queueTranscript).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { enqueueStage, JOBS_CHANNEL } from '../../src/capture/jobs/enqueue.ts';
import { createJobRunner, LEASE_MS } from '../../src/capture/jobs/runner.ts';
import { analyseStage } from '../../src/capture/jobs/stages/analyse.ts';
import { captureStageHandlers } from '../../src/capture/jobs/stages/index.ts';
import type { StageHandler } from '../../src/capture/jobs/types.ts';
import { queueTranscript } from '../../src/capture/pipeline.ts';
import { eventsOf } from '../helpers/events.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { STALLED, testRunner } from '../helpers/jobs.ts';
import { waitFor } from '../helpers/wait.ts';

let h: Harness;
let orgId: string;
before(async () => {
  h = await createHarness();
  orgId = (await insertOrg(h.db, { country: 'US' })).orgId;
});
after(() => h.close());

const TRANSCRIPT = `Agent: Acme Plumbing, how can I help you?
Caller: Hi, my name is Jane Miller. My water heater is leaking. Can you come tomorrow morning?`;

/** transcribe: the transcript queued in the run's write, the runner's chain offered (as the real stage does) */
const transcribe: StageHandler = async ({ deps, job, chain }) => ({
  kind: 'succeeded',
  write: (tx) =>
    queueTranscript(
      tx,
      deps,
      { id: job.callId, organization_id: job.organizationId },
      { text: TRANSCRIPT, chain },
    ),
});

async function transcribeQueued(): Promise<string> {
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  await h.db.transaction((tx) =>
    enqueueStage(tx, { organizationId: orgId, callId: id, stage: 'transcribe', now: h.clock.now() }),
  );
  return id;
}

interface JobRow {
  stage: string;
  state: string;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  next_attempt_at: Date;
}
const jobOf = async (id: string, stage: string) =>
  (
    await h.db.query<JobRow>(
      `SELECT stage, state, attempts, lease_owner, lease_expires_at, next_attempt_at
         FROM processing_jobs WHERE call_id = $1 AND stage = $2`,
      [id, stage],
    )
  ).rows[0];
const completedCount = async (id: string) =>
  (await eventsOf(h.db, id)).filter((e) => e.event_type === 'call.completed').length;

test('a run that queues the next stage runs it itself: one claim, no NOTIFY, the row as a claim leaves it', async () => {
  const id = await transcribeQueued();
  const heard: string[] = [];
  const stop = await h.db.listen(JOBS_CHANNEL, (payload) => heard.push(payload));
  try {
    let seen: JobRow | undefined;
    const runner = testRunner(h.deps, {
      handlers: {
        transcribe,
        analyse: async (ctx) => {
          seen = await jobOf(id, 'analyse');
          return analyseStage(ctx);
        },
      },
    });
    assert.equal(await runner.runOnce(), 2, 'one claim, two runs');
    const now = h.clock.now().getTime();
    assert.ok(seen);
    assert.deepEqual(
      [seen.state, seen.attempts, seen.lease_owner, new Date(seen.lease_expires_at!).getTime() - now],
      ['pending', 1, runner.owner, LEASE_MS],
    );
    assert.equal(new Date(seen.next_attempt_at).getTime() - now, LEASE_MS, 'due again at the lease expiry');
    const done = await jobOf(id, 'analyse');
    assert.deepEqual([done.state, done.attempts, done.lease_owner], ['succeeded', 1, null]);
    assert.equal(await completedCount(id), 1);
    // notifications arrive in commit order: once this one is heard, an analyse one would have been
    await h.db.query(`SELECT pg_notify('${JOBS_CHANNEL}', 'marker')`);
    await waitFor(async () => heard.includes('marker'), 'the marker notification', 30_000);
    assert.deepEqual(heard, ['marker']);
  } finally {
    await stop();
  }
});

test('a runner that dies holding the next stage leaves it to lease expiry; its late result is dropped', async () => {
  const id = await transcribeQueued();
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let started = false;
  // its heartbeat stalled: a worker cut off after it leased the analysis to itself
  const doomed = testRunner(h.deps, {
    owner: 'doomed',
    tickMs: STALLED,
    handlers: {
      transcribe,
      analyse: async () => {
        started = true;
        await gate;
        throw new Error('cut off');
      },
    },
  });
  const doomedRun = doomed.runOnce();
  await waitFor(async () => started, 'the chained analysis to start');
  const other = testRunner(h.deps, { owner: 'other' });
  assert.equal(await other.drain(), 0, 'held under its lease');
  h.clock.advance(LEASE_MS);
  assert.equal(await other.drain(), 1);
  assert.equal(await completedCount(id), 1);
  const done = await jobOf(id, 'analyse');
  assert.deepEqual([done.state, done.attempts], ['succeeded', 2]);
  release();
  assert.equal(await doomedRun, 2);
  const after = await jobOf(id, 'analyse');
  assert.deepEqual([after.state, after.attempts], ['succeeded', 2], 'the late failure wrote nothing');
});

test('a run that fails after its next stage was queued hands that stage back, due at once for any runner', async () => {
  const id = await transcribeQueued();
  // the download stage's shape: the next stage queued in a transaction of its own, then a failure
  const failing: StageHandler = async ({ deps, job, chain }) => {
    await deps.db.transaction((tx) =>
      queueTranscript(
        tx,
        deps,
        { id: job.callId, organization_id: job.organizationId },
        { text: TRANSCRIPT, chain },
      ),
    );
    throw new Error('failed after the commit');
  };
  let analysed = 0;
  const runner = testRunner(h.deps, {
    handlers: {
      transcribe: failing,
      analyse: async () => {
        analysed++;
        return { kind: 'succeeded' };
      },
    },
  });
  assert.equal(await runner.runOnce(), 1);
  assert.equal(analysed, 0, 'not run by the failed run');
  const back = await jobOf(id, 'analyse');
  assert.deepEqual(
    [
      back.state,
      back.attempts,
      back.lease_owner,
      back.lease_expires_at,
      new Date(back.next_attempt_at).getTime(),
    ],
    ['pending', 0, null, null, h.clock.now().getTime()],
  );
  assert.equal((await jobOf(id, 'transcribe')).state, 'pending', 'retried later');
  assert.equal(await testRunner(h.deps).drain(), 1);
  assert.equal(await completedCount(id), 1);
});

test('a runner claiming downloads only runs the stages after one as its chain, and claims none of them', async () => {
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  // the download stage's shape: the recording stored and the transcription queued in its own transaction
  const download: StageHandler = async ({ deps, job, chain }) => {
    await deps.db.transaction((tx) =>
      enqueueStage(tx, {
        organizationId: job.organizationId,
        callId: job.callId,
        stage: 'transcribe',
        now: deps.clock.now(),
        chain,
      }),
    );
    return { kind: 'succeeded' };
  };
  const listener = createJobRunner(h.deps, {
    handlers: { ...captureStageHandlers(), transcribe, download },
    claimStages: ['download'],
    random: () => 0.5,
  });
  await h.db.transaction((tx) =>
    enqueueStage(tx, { organizationId: orgId, callId: id, stage: 'download', now: h.clock.now() }),
  );
  assert.equal(await listener.runCall(id), 3, 'download, transcribe, analyse');
  assert.equal(await completedCount(id), 1);
  for (const stage of ['download', 'transcribe', 'analyse']) {
    const job = await jobOf(id, stage);
    assert.deepEqual([job.stage, job.state, job.attempts], [stage, 'succeeded', 1]);
  }
  // a transcription queued for any runner is not the listener's to claim
  const other = await transcribeQueued();
  assert.equal(await listener.drain(), 0);
  assert.equal((await jobOf(other, 'transcribe')).state, 'pending');
  assert.equal(await testRunner(h.deps, { handlers: { transcribe } }).drain(), 2);
});
