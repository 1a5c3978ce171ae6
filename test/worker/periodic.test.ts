import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock, HOUR, MINUTE } from '../../src/clock.ts';
import type { Deps } from '../../src/deps.ts';
import { type PeriodicJob, startHeartbeat, startPeriodicJobs } from '../../src/periodic.ts';

/** The scheduler alone: a fake clock, a logger that records errors, jobs that count their runs. */
function setup() {
  const clock = new FakeClock();
  const errors: Array<Record<string, unknown>> = [];
  const log = { error: (o: Record<string, unknown>) => errors.push(o) } as unknown as Deps['log'];
  return { clock, errors, deps: { clock, log } };
}

const TICK_MS = 2;
/** Enough real ticks for anything due to have started. */
const ticks = () => new Promise((r) => setTimeout(r, 25 * TICK_MS));

/** A job whose runs finish only when the test says so. */
function gatedJob(periodMs: number) {
  const gates: Array<() => void> = [];
  let running = 0;
  let maxRunning = 0;
  const job: PeriodicJob = {
    name: 'gated',
    periodMs,
    run: () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      return new Promise<void>((resolve) =>
        gates.push(() => {
          running--;
          resolve();
        }),
      );
    },
  };
  return {
    job,
    runs: () => gates.length,
    maxRunning: () => maxRunning,
    finish: () => {
      for (const open of gates) open();
    },
  };
}

test('a job runs at start, not again before its period has passed on the clock, and again once it has', async () => {
  const { clock, deps } = setup();
  let runs = 0;
  const stop = startPeriodicJobs(deps, [{ name: 'count', periodMs: MINUTE, run: async () => runs++ }], {
    tickMs: TICK_MS,
  });
  try {
    await ticks();
    assert.equal(runs, 1, 'the first run starts with the scheduler');
    clock.advance(MINUTE - 1);
    await ticks();
    assert.equal(runs, 1);
    clock.advance(1);
    await ticks();
    assert.equal(runs, 2);
  } finally {
    await stop();
  }
});

test('a run in progress is never started twice, and periods missed meanwhile are not made up', async () => {
  const { clock, deps } = setup();
  const g = gatedJob(MINUTE);
  const stop = startPeriodicJobs(deps, [g.job], { tickMs: TICK_MS });
  try {
    clock.advance(10 * MINUTE);
    await ticks();
    assert.equal(g.runs(), 1, 'still the first run');
    g.finish();
    await ticks();
    assert.equal(g.runs(), 2, 'due again: one run, not ten');
    g.finish();
    await ticks();
    assert.equal(g.runs(), 2);
    assert.equal(g.maxRunning(), 1);
  } finally {
    g.finish();
    await stop();
  }
});

test('a failing job is logged with its name and runs again at its next period; the other jobs are not affected', async () => {
  const { clock, deps, errors } = setup();
  let failures = 0;
  let others = 0;
  const stop = startPeriodicJobs(
    deps,
    [
      {
        name: 'throws',
        periodMs: MINUTE,
        run: () => {
          failures++;
          if (failures === 1) throw new Error('thrown synchronously');
          return Promise.reject(new Error('rejected'));
        },
      },
      { name: 'other', periodMs: MINUTE, run: async () => others++ },
    ],
    { tickMs: TICK_MS },
  );
  try {
    await ticks();
    clock.advance(MINUTE);
    await ticks();
    assert.equal(failures, 2);
    assert.equal(others, 2);
    assert.deepEqual(errors, [
      { job: 'throws', err: 'thrown synchronously' },
      { job: 'throws', err: 'rejected' },
    ]);
  } finally {
    await stop();
  }
});

test('stop waits for the run in progress and starts no other', async () => {
  const { clock, deps } = setup();
  const g = gatedJob(MINUTE);
  const stop = startPeriodicJobs(deps, [g.job], { tickMs: TICK_MS });
  let stopped = false;
  const stopping = stop().then(() => {
    stopped = true;
  });
  await ticks();
  assert.equal(stopped, false, 'waits for the run');
  g.finish();
  await stopping;
  clock.advance(HOUR);
  await ticks();
  assert.equal(g.runs(), 1);
});

test('a clock stepped backwards makes the job due instead of silencing it until the clock catches up', async () => {
  const { clock, deps } = setup();
  let runs = 0;
  const stop = startPeriodicJobs(deps, [{ name: 'count', periodMs: MINUTE, run: async () => runs++ }], {
    tickMs: TICK_MS,
  });
  try {
    await ticks();
    clock.advance(-HOUR);
    await ticks();
    assert.equal(runs, 2);
  } finally {
    await stop();
  }
});

test('a heartbeat beats one period after its start, not at it, then every period on the clock; stop waits for a beat', async () => {
  const { clock } = setup();
  const gates: Array<() => void> = [];
  const stop = startHeartbeat(clock, {
    periodMs: 10_000,
    tickMs: TICK_MS,
    beat: () => new Promise<void>((resolve) => gates.push(resolve)),
  });
  let stopped = false;
  try {
    await ticks();
    assert.equal(gates.length, 0, 'no beat at the start: the work was just leased');
    clock.advance(9_999);
    await ticks();
    assert.equal(gates.length, 0);
    clock.advance(1);
    await ticks();
    assert.equal(gates.length, 1);
    clock.advance(60_000);
    await ticks();
    assert.equal(gates.length, 1, 'never two beats at once');
    const stopping = stop().then(() => {
      stopped = true;
    });
    await ticks();
    assert.equal(stopped, false, 'stop waits for the beat in progress');
    gates[0]();
    await stopping;
    clock.advance(60_000);
    await ticks();
    assert.equal(gates.length, 1, 'no beat after stop');
  } finally {
    for (const open of gates) open();
    await stop();
  }
});
