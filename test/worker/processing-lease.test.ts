/**
 * The processing lease through the real worker wiring (startWorkers) and a fake clock: a running
 * stage renews its 30 s lease by a heartbeat due on the clock, so a stage that takes longer than
 * any lease is never run twice; a job whose worker stopped renewing (its process is gone) is
 * claimed again 30 s after its last renewal. The heartbeat looks at the clock every few real
 * milliseconds here (tickMs), so no test waits real seconds. The kill -9 of a real worker process
 * is test/faults/processing-crash.fault.ts.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { analyzeByRules } from '../../src/capture/analyzer.ts';
import { builtInCaptureProviders } from '../../src/capture/jobs/providers.ts';
import { submitTranscript } from '../../src/capture/pipeline.ts';
import { SECOND } from '../../src/clock.ts';
import { startWorkers } from '../../src/worker.ts';
import { engine } from '../helpers/db.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { STALLED, testRunner } from '../helpers/jobs.ts';
import { waitFor } from '../helpers/wait.ts';

const TICK_MS = 5;
/** The worker polls for due jobs this often (real ms). */
const POLL_MS = 20;

let h: Harness;
let orgId: string;
before(async () => {
  h = await createHarness();
  ({ orgId } = await insertOrg(h.db, { country: 'US' }));
});
afterEach(() => {
  h.deps.capture = builtInCaptureProviders();
});
after(async () => {
  await h.close();
});

/** An analysis whose runs wait until the test opens their gate; counts the runs started. */
function gatedAnalysis() {
  const gates: (() => void)[] = [];
  h.deps.capture = {
    transcription: null,
    analysis: {
      name: 'gated',
      analyze: async (input) => {
        await new Promise<void>((r) => gates.push(r));
        return analyzeByRules(input);
      },
    },
  };
  return {
    runs: () => gates.length,
    open: () => {
      for (const g of gates) g();
    },
  };
}

async function queuedCall(): Promise<string> {
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  await submitTranscript(h.deps, id, {
    text: 'Agent: Acme Plumbing.\nCustomer: Hi, my boiler is broken, can you come on Friday?',
  });
  return id;
}

async function job(callId: string) {
  const { rows } = await h.db.query<{
    state: string;
    attempts: number;
    lease_owner: string | null;
    lease_expires_at: Date | null;
  }>(
    `SELECT state, attempts, lease_owner, lease_expires_at FROM processing_jobs
      WHERE call_id = $1 AND stage = 'analyse'`,
    [callId],
  );
  assert.equal(rows.length, 1);
  return rows[0];
}

const processed = async (callId: string) =>
  (await h.db.query<{ s: string }>('SELECT processing_state AS s FROM calls WHERE id = $1', [callId])).rows[0]
    .s === 'processed';

test(`on ${engine}, a stage that runs past the old five-minute lease keeps its job: its heartbeat renews the lease, no other worker claims it`, async () => {
  const analysis = gatedAnalysis();
  const id = await queuedCall();
  const stop = await startWorkers(h.deps, { tickMs: TICK_MS, jobsPollIntervalMs: POLL_MS });
  const other = testRunner(h.deps, { owner: 'other-worker' });
  try {
    await waitFor(async () => analysis.runs() === 1, 'the stage to start');
    const owner = (await job(id)).lease_owner;
    assert.ok(owner);
    // Six minutes in steps of 10 s: each step the heartbeat renews the lease to now + 30 s, so at
    // no moment of the clock is the lease expired, and neither the started worker's poll nor
    // another runner can take the job.
    for (let step = 1; step <= 36; step++) {
      h.clock.advance(10 * SECOND);
      const renewedTo = h.clock.now().getTime() + 30 * SECOND;
      await waitFor(
        async () => (await job(id)).lease_expires_at?.getTime() === renewedTo,
        `the lease renewed at ${step * 10} s`,
      );
      assert.equal(await other.drain(), 0, `claimed by another runner at ${step * 10} s`);
    }
    const held = await job(id);
    assert.deepEqual([held.state, held.attempts, held.lease_owner], ['pending', 1, owner]);
    assert.equal(analysis.runs(), 1, 'one run, past the old five-minute lease');

    analysis.open();
    await waitFor(() => processed(id), 'the call processed');
    const done = await job(id);
    assert.deepEqual([done.state, done.attempts, done.lease_owner], ['succeeded', 1, null]);
    assert.equal(analysis.runs(), 1);
  } finally {
    analysis.open();
    await stop();
  }
});

test(`on ${engine}, a job whose worker stopped renewing its lease (the process is gone) runs again 30 s later, through the worker's poll`, async () => {
  const analysis = gatedAnalysis();
  const id = await queuedCall();
  // The doomed worker claims the job as every runner does, then goes silent: its stage never ends
  // and its heartbeat never beats, as after a kill -9.
  const doomed = testRunner(h.deps, { owner: 'doomed-worker', tickMs: STALLED });
  const doomedRun = doomed.runCall(id);
  let stop: (() => Promise<void>) | undefined;
  try {
    await waitFor(async () => analysis.runs() === 1, 'the doomed stage to start');
    const claimedAt = h.clock.now().getTime();
    assert.equal((await job(id)).lease_expires_at?.getTime(), claimedAt + 30 * SECOND);

    stop = await startWorkers(h.deps, { tickMs: TICK_MS, jobsPollIntervalMs: POLL_MS });
    h.clock.advance(30 * SECOND - 1);
    // A few polls of the worker: the lease has not run out on the clock, so none may claim it.
    await new Promise((r) => setTimeout(r, 5 * POLL_MS));
    assert.equal(analysis.runs(), 1, 'not taken before its lease runs out');
    assert.equal((await job(id)).lease_owner, 'doomed-worker');

    h.clock.advance(1);
    await waitFor(async () => analysis.runs() === 2, 'the worker to take the job over');
    analysis.open();
    await waitFor(() => processed(id), 'the call processed');
    const done = await job(id);
    assert.deepEqual([done.state, done.attempts, done.lease_owner], ['succeeded', 2, null]);
  } finally {
    analysis.open();
    await stop?.();
    await doomedRun;
  }
  // the doomed run woke up to find its lease gone: it wrote nothing
  const done = await job(id);
  assert.deepEqual([done.state, done.attempts], ['succeeded', 2]);
});
