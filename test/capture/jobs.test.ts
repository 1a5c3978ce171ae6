/**
 * Processing as durable jobs (src/capture/jobs/): the attempt cap, reprocess, Retry-After, lease
 * expiry and fencing, two runners side by side, invalid_output. Driven by a fake clock; the
 * providers are small in-test objects behind deps.capture.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { analyzeByRules } from '../../src/capture/analyzer.ts';
import { builtInCaptureProviders } from '../../src/capture/jobs/providers.ts';
import { LEASE_MS } from '../../src/capture/jobs/runner.ts';
import { claimJobs } from '../../src/capture/jobs/sql/claim-jobs.ts';
import { LeaseLost, lockRun } from '../../src/capture/jobs/sql/finish-job.ts';
import { submitTranscript } from '../../src/capture/pipeline.ts';
import { SECOND } from '../../src/clock.ts';
import type { CaptureProviders } from '../../src/deps.ts';
import { type AnalyzerInput, ProviderError } from '../../src/domain/capture-providers.ts';
import { engine } from '../helpers/db.ts';
import { eventsOf, typesOf } from '../helpers/events.ts';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, bearer, errorBody, errorJson } from '../helpers/http.ts';
import { STALLED, settleJobs, testRunner } from '../helpers/jobs.ts';
import { waitFor } from '../helpers/wait.ts';

const MAX_ATTEMPTS = 4;
let h: Harness;
let orgId: string;
let apiKey: string;
before(async () => {
  h = await createHarness({ PROCESSING_MAX_ATTEMPTS: String(MAX_ATTEMPTS) });
  const org = await insertOrg(h.db, { country: 'US' });
  orgId = org.orgId;
  apiKey = (await insertApiKey(h.db, { orgId, userId: org.ownerId })).key;
});
afterEach(() => {
  h.deps.capture = builtInCaptureProviders();
});
after(async () => {
  await h.close();
});

const TRANSCRIPT = `Agent: Acme Plumbing, how can I help you?
Caller: Hi, my name is Jane Miller. My water heater is leaking. Can you come tomorrow morning?`;

/** With random() = 0.5 the n-th retry waits 3/4 of 15 s × 2^(n-1). */
const backoff = (n: number) => 0.75 * 15 * SECOND * 2 ** (n - 1);

function useAnalysis(analyze: (input: AnalyzerInput) => Promise<ReturnType<typeof analyzeByRules>>) {
  const capture: CaptureProviders = { transcription: null, analysis: { name: 'fake', analyze } };
  h.deps.capture = capture;
}

async function queuedCall(text = TRANSCRIPT): Promise<string> {
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  await submitTranscript(h.deps, id, { text });
  return id;
}

const processing = async (id: string) => {
  const res = await admin(h, 'GET', `/calls/${id}/processing`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};
const at = (ms = 0) => new Date(h.clock.now().getTime() + ms).toISOString();
const completedCount = async (id: string) =>
  (await eventsOf(h.db, id)).filter((e) => e.event_type === 'call.completed').length;

test('an analyzer that always throws fails the call after PROCESSING_MAX_ATTEMPTS runs, shown by GET …/processing', async () => {
  let runs = 0;
  useAnalysis(async () => {
    runs++;
    throw new Error('connect ECONNREFUSED 127.0.0.1:9');
  });
  const id = await queuedCall();
  const runner = testRunner(h.deps);
  const created = at();
  for (let n = 1; n < MAX_ATTEMPTS; n++) {
    assert.equal(await runner.drain(), 1, `run ${n}`);
    assert.deepEqual(await processing(id), {
      call_id: id,
      status: 'processing',
      completed_at: null,
      stages: [
        {
          stage: 'analyse',
          state: 'pending',
          attempts: n,
          max_attempts: MAX_ATTEMPTS,
          last_error: 'connect ECONNREFUSED 127.0.0.1:9',
          last_error_kind: 'retryable',
          next_attempt_at: at(backoff(n)),
          created_at: created,
          updated_at: at(),
          finished_at: null,
        },
      ],
    });
    h.clock.advance(backoff(n) - 1);
    assert.equal(await runner.drain(), 0, 'not before its backoff');
    h.clock.advance(1);
  }
  assert.equal(await runner.drain(), 1, `run ${MAX_ATTEMPTS}`);
  assert.deepEqual(await processing(id), {
    call_id: id,
    status: 'failed',
    completed_at: null,
    stages: [
      {
        stage: 'analyse',
        state: 'failed',
        attempts: MAX_ATTEMPTS,
        max_attempts: MAX_ATTEMPTS,
        last_error: 'connect ECONNREFUSED 127.0.0.1:9',
        last_error_kind: 'retryable',
        next_attempt_at: null,
        created_at: created,
        updated_at: at(),
        finished_at: at(),
      },
    ],
  });
  // and that is the end of it: no retry forever
  h.clock.advance(24 * 3600 * SECOND);
  assert.equal(await runner.drain(), 0);
  assert.equal(runs, MAX_ATTEMPTS);
  assert.deepEqual(await eventsOf(h.db, id), []);

  // reprocess with a working analyzer: recovered, call.completed once
  h.deps.capture = builtInCaptureProviders();
  const res = await admin(h, 'POST', `/calls/${id}/reprocess`);
  assert.equal(res.statusCode, 202, res.body);
  assert.deepEqual(res.json(), { call_id: id, requeued: ['analyse'] });
  await settleJobs(h.deps);
  assert.deepEqual(typesOf(await eventsOf(h.db, id)), [
    'call.completed',
    'call.followup_email.drafted',
    'call.transcribed',
  ]);
  const after = await processing(id);
  assert.equal(after.status, 'completed');
  assert.equal(after.completed_at, at());
  assert.deepEqual(
    after.stages.map((s: Record<string, unknown>) => [s.stage, s.state, s.attempts, s.last_error]),
    [
      ['analyse', 'succeeded', 1, null],
      ['complete', 'succeeded', 0, null],
    ],
  );

  // nothing failed any more: 409; every stage again: runs, and sends nothing twice
  const again = await admin(h, 'POST', `/calls/${id}/reprocess`);
  assert.equal(again.statusCode, 409);
  assert.deepEqual(
    errorJson(again),
    errorBody(
      'CONFLICT',
      'Nothing to reprocess: no processing stage of this call failed. Send {"stages": "all"} to run its finished stages again.',
      at(),
    ),
  );
  const all = await admin(h, 'POST', `/calls/${id}/reprocess`, { stages: 'all' });
  assert.equal(all.statusCode, 202, all.body);
  assert.deepEqual(all.json(), { call_id: id, requeued: ['analyse', 'complete'] });
  await settleJobs(h.deps);
  assert.equal(await completedCount(id), 1);
  assert.equal((await eventsOf(h.db, id)).length, 3);
  assert.equal((await processing(id)).status, 'completed');
});

test('a provider outage with Retry-After is retried no sooner than the provider asked', async () => {
  let runs = 0;
  useAnalysis(async (input) => {
    runs++;
    if (runs === 1)
      throw new ProviderError('fake', 'retryable', 'HTTP 429 Too Many Requests', {
        status: 429,
        retryAfterMs: 90 * SECOND,
      });
    return analyzeByRules(input);
  });
  const id = await queuedCall();
  const runner = testRunner(h.deps);
  assert.equal(await runner.drain(), 1);
  const stage = (await processing(id)).stages[0];
  assert.equal(stage.state, 'pending');
  assert.equal(stage.last_error, 'fake: HTTP 429 Too Many Requests');
  assert.equal(stage.next_attempt_at, at(90 * SECOND), 'Retry-After beats the 11.25 s backoff');
  h.clock.advance(90 * SECOND - 1);
  assert.equal(await runner.drain(), 0);
  h.clock.advance(1);
  assert.equal(await runner.drain(), 1);
  assert.equal(runs, 2);
  assert.equal(await completedCount(id), 1);
  const done = await processing(id);
  assert.equal(done.status, 'completed');
  assert.equal(done.stages[0].last_error, null, 'a success clears the error');
});

test('a fatal provider error fails the stage at once, with the provider message kept and credentials scrubbed', async () => {
  let runs = 0;
  useAnalysis(async () => {
    runs++;
    throw new ProviderError(
      'openai',
      'fatal',
      'HTTP 401: Incorrect API key provided: sk-proj-abcdefghijklmnop1234 (sent as Authorization: Bearer sk-proj-abcdefghijklmnop1234)',
      { status: 401 },
    );
  });
  const id = await queuedCall();
  assert.equal(await testRunner(h.deps).drain(), 1);
  const view = await processing(id);
  assert.equal(runs, 1);
  assert.equal(view.status, 'failed');
  assert.deepEqual(
    [
      view.stages[0].state,
      view.stages[0].attempts,
      view.stages[0].last_error_kind,
      view.stages[0].last_error,
    ],
    [
      'failed',
      1,
      'fatal',
      'openai: HTTP 401: Incorrect API key provided: [redacted] (sent as Authorization: Bearer [redacted])',
    ],
  );
});

test('an analysis that broke the schema puts the call in review: no analysis stored and no event at all until a reprocess', async () => {
  useAnalysis(async () => {
    throw new ProviderError(
      'openai',
      'invalid_output',
      'the answer broke the schema twice: subject: must be at most 80 characters',
    );
  });
  const id = await queuedCall();
  assert.equal(await testRunner(h.deps).drain(), 1);
  const view = await processing(id);
  assert.equal(view.status, 'needs_review');
  assert.deepEqual(
    [
      view.stages[0].state,
      view.stages[0].attempts,
      view.stages[0].last_error_kind,
      view.stages[0].last_error,
    ],
    [
      'needs_review',
      1,
      'invalid_output',
      'openai: the answer broke the schema twice: subject: must be at most 80 characters',
    ],
  );
  assert.equal((await h.db.query('SELECT 1 FROM call_analyses WHERE call_id = $1', [id])).rowCount, 0);
  // events are what every webhook is sent from: none for this call
  assert.deepEqual(await eventsOf(h.db, id), []);
  const rest = await h.app.inject({ method: 'GET', url: `/api/v1/calls/${id}`, headers: bearer(apiKey) });
  assert.equal(rest.statusCode, 200, rest.body);
  assert.equal(rest.json().data.review_status, 'needs_review');
  assert.equal(rest.json().data.transcript_processed, null);

  h.deps.capture = builtInCaptureProviders();
  const res = await admin(h, 'POST', `/calls/${id}/reprocess`);
  assert.deepEqual(res.json(), { call_id: id, requeued: ['analyse'] });
  await settleJobs(h.deps);
  assert.equal(await completedCount(id), 1);
  assert.equal((await processing(id)).status, 'completed');
  const reviewed = await h.app.inject({ method: 'GET', url: `/api/v1/calls/${id}`, headers: bearer(apiKey) });
  assert.equal(reviewed.json().data.review_status, 'needs_review', 'left for a person to clear');
  assert.equal(reviewed.json().data.transcript_processed.caller_name, 'Jane Miller');
});

test('a job whose worker died is claimed again when its lease expires; the late worker writes nothing', async () => {
  const id = await queuedCall();
  const now = h.clock.now();
  const [dead] = await claimJobs(h.db, {
    now,
    limit: 1,
    owner: 'dead-worker',
    leaseUntil: new Date(now.getTime() + LEASE_MS),
    stages: ['analyse'],
    callId: id,
  });
  assert.equal(dead.attempts, 1);
  const held = (await processing(id)).stages[0];
  assert.deepEqual([held.state, held.attempts, held.next_attempt_at], ['running', 1, null]);
  const runner = testRunner(h.deps);
  assert.equal(await runner.drain(), 0, 'held under its lease');
  h.clock.advance(LEASE_MS);
  assert.equal(await runner.drain(), 1);
  assert.equal(await completedCount(id), 1);
  const done = (await processing(id)).stages[0];
  assert.deepEqual([done.state, done.attempts], ['succeeded', 2]);
  await assert.rejects(
    h.db.transaction((tx) => lockRun(tx, dead, 'dead-worker')),
    (err) => err instanceof LeaseLost,
  );
});

test('a run that outlived its lease while another runner finished the job drops its result', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let runs = 0;
  useAnalysis(async (input) => {
    runs++;
    if (runs === 1) await gate;
    return analyzeByRules(input);
  });
  const id = await queuedCall();
  // its heartbeat stalled (a worker cut off from the database): the lease runs out while it runs
  const slow = testRunner(h.deps, { owner: 'slow', tickMs: STALLED });
  const slowRun = slow.runCall(id);
  await waitFor(async () => runs === 1, 'the slow run to start');
  h.clock.advance(LEASE_MS);
  assert.equal(await testRunner(h.deps, { owner: 'fast' }).drain(), 1);
  assert.equal(await completedCount(id), 1);
  release();
  assert.equal(await slowRun, 1);
  assert.equal(runs, 2);
  assert.equal(await completedCount(id), 1);
  assert.equal((await h.db.query('SELECT 1 FROM call_analyses WHERE call_id = $1', [id])).rowCount, 1);
  const stage = (await processing(id)).stages[0];
  assert.deepEqual([stage.state, stage.attempts], ['succeeded', 2]);
});

test(`on ${engine}, two runners draining at once never run one job twice`, async () => {
  const N = 12;
  const seen = new Map<string, number>();
  useAnalysis(async (input) => {
    seen.set(input.transcript, (seen.get(input.transcript) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, 5));
    return analyzeByRules(input);
  });
  const ids: string[] = [];
  for (let i = 0; i < N; i++) ids.push(await queuedCall(`Caller: job number ${i}, my sink is blocked.`));

  // the claim itself: two at once get disjoint rows
  const now = h.clock.now();
  const claim = (owner: string) =>
    claimJobs(h.db, {
      now,
      limit: N,
      owner,
      leaseUntil: new Date(now.getTime() + 1000),
      stages: ['analyse'],
    });
  const [x, y] = await Promise.all([claim('x'), claim('y')]);
  const claimed = [...x, ...y].map((j) => j.callId).sort();
  assert.deepEqual(claimed, [...ids].sort(), 'every job claimed once, by one of the two');
  h.clock.advance(1000);

  const a = testRunner(h.deps, { owner: 'a' });
  const b = testRunner(h.deps, { owner: 'b' });
  const [ra, rb] = await Promise.all([a.drain(), b.drain()]);
  assert.equal(ra + rb, N);
  assert.equal(seen.size, N);
  for (const [text, n] of seen) assert.equal(n, 1, text);
  for (const id of ids) assert.equal(await completedCount(id), 1);
});

test('an erased call stops its processing: jobs cancelled, their errors blanked, GET …/processing answers 404', async () => {
  useAnalysis(async () => {
    throw new ProviderError(
      'fake',
      'fatal',
      'HTTP 400: the transcript mentions Jane Miller at 42 Oak Street',
    );
  });
  const id = await queuedCall();
  await testRunner(h.deps).drain();
  assert.equal((await processing(id)).status, 'failed');
  assert.equal((await admin(h, 'POST', `/calls/${id}/erase`)).statusCode, 204);
  const row = (
    await h.db.query<{ state: string; last_error: string | null }>(
      'SELECT state, last_error FROM processing_jobs WHERE call_id = $1',
      [id],
    )
  ).rows;
  assert.deepEqual(row, [{ state: 'cancelled', last_error: null }]);
  for (const [method, url] of [
    ['GET', `/calls/${id}/processing`],
    ['POST', `/calls/${id}/reprocess`],
  ] as const) {
    const res = await admin(h, method, url);
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(
      errorJson(res),
      errorBody('NOT_FOUND', 'No call with this id exists (or it was erased).', at()),
    );
  }
});
