import { createJobRunner, type JobRunner } from '../../src/capture/jobs/runner.ts';
import { captureStageHandlers } from '../../src/capture/jobs/stages/index.ts';
import type { StageHandlers } from '../../src/capture/jobs/types.ts';
import { carrierDownloadStage } from '../../src/capture/telephony/download-stage.ts';
import type { Deps } from '../../src/deps.ts';

/** A heartbeat tick that never comes within a test: the runner of a stalled (or partitioned) worker. */
export const STALLED = 2 ** 31 - 1;

/**
 * A runner with capture's stages (plus `handlers`), not started: tests call drain() / runOnce().
 * tickMs: how often a running job's lease heartbeat looks at the (fake) clock; STALLED never.
 */
export function testRunner(
  deps: Deps,
  opts: {
    handlers?: StageHandlers;
    owner?: string;
    random?: () => number;
    leaseMs?: number;
    tickMs?: number;
  } = {},
): JobRunner {
  return createJobRunner(deps, {
    handlers: { ...captureStageHandlers(), ...opts.handlers },
    owner: opts.owner,
    random: opts.random ?? (() => 0.5),
    leaseMs: opts.leaseMs,
    tickMs: opts.tickMs,
  });
}

/**
 * Runs every processing job due at the fake clock's now, including those the operator app started
 * right after a response (they are waited for, not run twice): returns once no job is due or running.
 */
export async function settleJobs(deps: Deps, opts: { handlers?: StageHandlers } = {}): Promise<void> {
  const runner = testRunner(deps, opts);
  const end = Date.now() + 10_000;
  for (;;) {
    await runner.drain();
    const { rows } = await deps.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM processing_jobs
        WHERE state IN ('pending', 'waiting') AND (next_attempt_at <= $1 OR lease_expires_at > $1)`,
      [deps.clock.now()],
    );
    if (Number(rows[0].n) === 0) return;
    if (Date.now() > end) throw new Error('processing jobs did not settle within 10 s');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Runs the Twilio recording downloads due at the fake clock's now — the download jobs the public
 * listener started right after a recording callback are waited for, not run twice — and returns
 * once no download job is due or running. Only the download stage: what a stored recording queues
 * next (transcribe) is left to the test, as a worker would pick it up.
 */
export async function settleDownloads(deps: Deps): Promise<void> {
  const runner = createJobRunner(deps, { handlers: { download: carrierDownloadStage }, random: () => 0.5 });
  const end = Date.now() + 10_000;
  for (;;) {
    await runner.drain();
    const { rows } = await deps.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM processing_jobs
        WHERE stage = 'download' AND state = 'pending' AND (next_attempt_at <= $1 OR lease_expires_at > $1)`,
      [deps.clock.now()],
    );
    if (Number(rows[0].n) === 0) return;
    if (Date.now() > end) throw new Error('recording downloads did not settle within 10 s');
    await new Promise((r) => setTimeout(r, 5));
  }
}
