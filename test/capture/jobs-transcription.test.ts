/**
 * The transcribe stage and the operator surface of processing jobs: PUT …/recording queues
 * transcription when a speech-to-text provider is configured (and not with `none`), the provider's
 * input, the too_large refusal, GET …/processing and POST …/reprocess validation, /metrics.
 */
import assert from 'node:assert/strict';
import { text } from 'node:stream/consumers';
import { after, afterEach, before, test } from 'node:test';
import { builtInCaptureProviders } from '../../src/capture/jobs/providers.ts';
import type {
  TranscriptionInput,
  TranscriptionProvider,
  TranscriptionResult,
} from '../../src/domain/capture-providers.ts';
import { ProviderError } from '../../src/domain/capture-providers.ts';
import { engine } from '../helpers/db.ts';
import { eventsOf, only, typesOf } from '../helpers/events.ts';
import { insertCall, insertOrg, MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, adminHeaders, errorBody, errorJson } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { mp3 } from '../helpers/mp3.ts';
import { stereoSpansMp3 } from '../helpers/stereo-mp3.ts';

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

const SPOKEN =
  'Agent: Acme Plumbing.\nCustomer: Hi, this is Tom Baker, my boiler is broken, can you come on Friday?';

interface Seen {
  input: Omit<TranscriptionInput, 'openAudio' | 'signal'>;
  audio: string;
  signal: boolean;
}

function fakeTranscription(
  opts: { maxUploadBytes?: number; answer?: (n: number) => TranscriptionResult } = {},
): { provider: TranscriptionProvider; seen: Seen[] } {
  const seen: Seen[] = [];
  const provider: TranscriptionProvider = {
    name: 'fake-stt',
    maxUploadBytes: opts.maxUploadBytes ?? 25 * 1024 * 1024,
    async transcribe(input) {
      const { openAudio, signal, ...rest } = input;
      seen.push({ input: rest, audio: await text(await openAudio()), signal: signal instanceof AbortSignal });
      return opts.answer?.(seen.length) ?? { text: SPOKEN, language: 'en', segments: [] };
    },
  };
  return { provider, seen };
}

const putAudio = (id: string, bytes: Buffer) =>
  h.operator.inject({
    method: 'PUT',
    url: `/admin/v1/calls/${id}/recording`,
    headers: { ...adminHeaders, 'content-type': 'audio/mpeg' },
    payload: bytes,
  });

const processing = async (id: string) => (await admin(h, 'GET', `/calls/${id}/processing`)).json();

test('audio stored for a call without a transcript is transcribed, analysed and completed in one processing run', async () => {
  const { provider, seen } = fakeTranscription();
  h.deps.capture = { ...builtInCaptureProviders(), transcription: provider };
  const id = await insertCall(h.db, { orgId });
  const audio = mp3(3);
  const res = await putAudio(id, audio.bytes);
  assert.equal(res.statusCode, 204, res.body);
  await settleJobs(h.deps);
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0].input, {
    byteLength: audio.bytes.length,
    contentType: 'audio/mpeg',
    channels: 2,
    direction: 'inbound',
    languageHint: 'en',
  });
  assert.equal(seen[0].audio, audio.bytes.toString());
  assert.equal(seen[0].signal, true);
  const events = await eventsOf(h.db, id);
  assert.deepEqual(typesOf(events), [
    'call.completed',
    'call.followup_email.drafted',
    'call.recording.ready',
    'call.transcribed',
  ]);
  const completed = only(events, 'call.completed').envelope.data;
  assert.equal(completed.transcript_original, SPOKEN);
  assert.equal(completed.duration, Math.round(audio.duration * 1000) / 1000);
  assert.match(String(completed.recording_url), /recording\.mp3\?token=/);
  assert.equal((completed.transcript_processed as Record<string, unknown>).caller_name, 'Tom Baker');
  const view = await processing(id);
  assert.equal(view.status, 'completed');
  assert.deepEqual(
    view.stages.map((s: Record<string, unknown>) => [s.stage, s.state, s.attempts]),
    [
      ['transcribe', 'succeeded', 1],
      ['analyse', 'succeeded', 1],
      ['complete', 'succeeded', 0],
    ],
  );
});

test('a one-channel recording is handed to the provider as one channel', async () => {
  const { provider, seen } = fakeTranscription();
  h.deps.capture = { ...builtInCaptureProviders(), transcription: provider };
  const id = await insertCall(h.db, { orgId });
  const mono = Buffer.from(mp3(2).bytes);
  // channel mode 3 (single channel) in every frame header's fourth byte
  for (let i = 0; i < mono.length; i += 417) mono[i + 3] = 0xc4;
  assert.equal((await putAudio(id, mono)).statusCode, 204);
  await settleJobs(h.deps);
  assert.equal(seen[0].input.channels, 1);
});

test('with TRANSCRIPTION_PROVIDER none, stored audio waits for a posted transcript as before', async () => {
  const id = await insertCall(h.db, { orgId });
  assert.equal((await putAudio(id, mp3(1).bytes)).statusCode, 204);
  await settleJobs(h.deps);
  assert.deepEqual(await processing(id), {
    call_id: id,
    status: 'awaiting_transcript',
    completed_at: null,
    stages: [],
  });
  assert.deepEqual(typesOf(await eventsOf(h.db, id)), ['call.recording.ready']);
  assert.equal((await admin(h, 'POST', `/calls/${id}/transcript`, { text: SPOKEN })).statusCode, 202);
  await settleJobs(h.deps);
  assert.equal((await processing(id)).status, 'completed');
});

test('audio larger than the provider accepts fails the transcribe stage at once with a clear error', async () => {
  const { provider, seen } = fakeTranscription({ maxUploadBytes: 1000 });
  h.deps.capture = { ...builtInCaptureProviders(), transcription: provider };
  const id = await insertCall(h.db, { orgId });
  const audio = mp3(1);
  assert.equal((await putAudio(id, audio.bytes)).statusCode, 204);
  await settleJobs(h.deps);
  assert.equal(seen.length, 0, 'never sent');
  const view = await processing(id);
  assert.equal(view.status, 'failed');
  assert.deepEqual(
    [view.stages[0].stage, view.stages[0].state, view.stages[0].attempts, view.stages[0].last_error_kind],
    ['transcribe', 'failed', 1, 'too_large'],
  );
  assert.equal(
    view.stages[0].last_error,
    `fake-stt: The recording is ${audio.bytes.length} bytes; fake-stt accepts at most 1000 bytes per upload (docs/capture.md).`,
  );
});

test('a transcription outage fails after its attempts; reprocess with the provider back transcribes it', async () => {
  let down = true;
  const { provider, seen } = fakeTranscription({
    answer: () => {
      if (down) throw new ProviderError('fake-stt', 'fatal', 'HTTP 400: unsupported audio');
      return { text: SPOKEN, language: 'en', segments: [] };
    },
  });
  h.deps.capture = { ...builtInCaptureProviders(), transcription: provider };
  const id = await insertCall(h.db, { orgId });
  await putAudio(id, mp3(1).bytes);
  await settleJobs(h.deps);
  assert.equal((await processing(id)).status, 'failed');
  down = false;
  const res = await admin(h, 'POST', `/calls/${id}/reprocess`, {});
  assert.equal(res.statusCode, 202);
  assert.deepEqual(res.json(), { call_id: id, requeued: ['transcribe'] });
  await settleJobs(h.deps);
  assert.equal(seen.length, 2);
  assert.equal((await processing(id)).status, 'completed');
  assert.equal((await eventsOf(h.db, id)).filter((e) => e.event_type === 'call.completed').length, 1);
});

test('GET …/processing and POST …/reprocess: 404 for unknown ids, 400 for bad bodies, 401 without the token', async () => {
  const ts = h.clock.now().toISOString();
  for (const target of [MISSING, 'not-a-uuid']) {
    for (const [method, url] of [
      ['GET', `/calls/${target}/processing`],
      ['POST', `/calls/${target}/reprocess`],
    ] as const) {
      const res = await admin(h, method, url);
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(
        errorJson(res),
        errorBody('NOT_FOUND', 'No call with this id exists (or it was erased).', ts),
      );
    }
  }
  const id = await insertCall(h.db, { orgId });
  const bad = await admin(h, 'POST', `/calls/${id}/reprocess`, { stages: 'some' });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().error.code, 'BAD_REQUEST');
  assert.match(bad.json().error.message, /Field "stages": must be "failed" \(the default\) or "all"/);
  const extra = await admin(h, 'POST', `/calls/${id}/reprocess`, { stage: 'all' });
  assert.equal(extra.statusCode, 400);
  assert.match(extra.json().error.message, /Unknown field "stage"/);
  const none = await admin(h, 'POST', `/calls/${id}/reprocess`, { stages: 'all' });
  assert.equal(none.statusCode, 409);
  assert.deepEqual(
    errorJson(none),
    errorBody(
      'CONFLICT',
      'Nothing to reprocess: this call has no finished processing stage (its stages are queued or running, or it has none).',
      ts,
    ),
  );
  const anon = await h.operator.inject({ method: 'GET', url: `/admin/v1/calls/${id}/processing` });
  assert.equal(anon.statusCode, 401);
});

test('/metrics counts processing jobs by stage and state, and their runs by outcome', async () => {
  const res = await h.operator.inject({ method: 'GET', url: '/metrics', headers: adminHeaders });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const lines = res.body.split('\n');
  const value = (series: string) => {
    const line = lines.find((l) => l.startsWith(`${series} `));
    assert.ok(line, `${series} is exported`);
    return Number(line.slice(series.length + 1));
  };
  const db = async (sql: string) => Number((await h.db.query<{ n: number }>(sql)).rows[0].n);
  assert.ok(lines.includes('# TYPE callcap_processing_jobs gauge'));
  assert.ok(lines.includes('# TYPE callcap_processing_job_outcomes_total counter'));
  // what the earlier tests of this file left: one too_large transcription failed for good …
  assert.equal(value('callcap_processing_jobs{stage="transcribe",state="failed"}'), 1);
  assert.equal(
    value('callcap_processing_jobs{stage="analyse",state="succeeded"}'),
    await db(
      `SELECT count(*)::int AS n FROM processing_jobs WHERE stage = 'analyse' AND state = 'succeeded'`,
    ),
  );
  assert.equal(value('callcap_processing_jobs{stage="download",state="pending"}'), 0);
  // … and the runs: two transcribe failures (too_large, the outage), one success after the reprocess
  assert.equal(value('callcap_processing_job_outcomes_total{stage="transcribe",outcome="failed"}'), 2);
  assert.equal(value('callcap_processing_job_outcomes_total{stage="transcribe",outcome="done"}'), 3);
  assert.equal(value('callcap_processing_job_outcomes_total{stage="analyse",outcome="retry"}'), 0);
  if (engine === 'pglite') {
    // one connection (PGlite has one): its runs count into its own shard of each counter, not into
    // one drawn at random, so that runs on other connections never wait on its row
    const { rows } = await h.db.query<{ shard: number; n: number; mine: number }>(
      `SELECT shard, n, pg_backend_pid() % 64 AS mine FROM processing_job_outcomes
        WHERE stage = 'transcribe' AND outcome = 'done'`,
    );
    assert.deepEqual(rows, [{ shard: rows[0]?.mine, n: 3, mine: rows[0]?.mine }]);
  }
  // the webhook metrics are still there, and this process's own run counter
  assert.ok(lines.includes('# TYPE callcap_webhook_deliveries gauge'));
  assert.ok(value('callcap_processing_job_runs_total{stage="transcribe",outcome="failed"}') >= 2);
});

// after the /metrics test, which counts the transcribe runs of the tests before it
test("a dual-channel recording: its talk metrics and the transcript lines' times are stored with the transcript", async () => {
  // inbound: the customer on channel 0 (1–5 s), the agent on channel 1 (6–8 s)
  const audio = stereoSpansMp3({ seconds: 10, left: [[1, 5]], right: [[6, 8]] });
  const { provider } = fakeTranscription({
    answer: () => ({
      text: 'Customer: Hi, my boiler is broken.\nAgent: We can come on Friday.',
      language: 'en',
      segments: [
        { speaker: 'customer', start: 1, end: 3, text: 'Hi,' },
        { speaker: 'customer', start: 3.2, end: 5, text: 'my boiler is broken.' },
        { speaker: 'agent', start: 6, end: 8, text: 'We can come on Friday.' },
      ],
    }),
  });
  h.deps.capture = { ...builtInCaptureProviders(), transcription: provider };
  const id = await insertCall(h.db, { orgId });
  assert.equal((await putAudio(id, audio)).statusCode, 204);
  await settleJobs(h.deps);
  const { rows } = await h.db.query<{ talk_metrics: Record<string, unknown>; transcript_times: unknown }>(
    'SELECT talk_metrics, transcript_times FROM calls WHERE id = $1',
    [id],
  );
  assert.deepEqual(rows[0].transcript_times, [
    [1, 5],
    [6, 8],
  ]);
  const m = rows[0].talk_metrics;
  assert.equal(m.frame_seconds, 0.02);
  assert.ok(Math.abs(Number(m.customer_seconds) - 4) <= 0.041, String(m.customer_seconds));
  assert.ok(Math.abs(Number(m.agent_seconds) - 2) <= 0.041, String(m.agent_seconds));
  assert.equal((m.longest_monologue as Record<string, unknown>).speaker, 'customer');
});

test('talk metrics come from the activity the transcription measured while decoding, when it hands it on', async () => {
  // the provider says the agent's channel (1, inbound) spoke for its first 1.5 s and the customer never:
  // the stage takes that as it is instead of decoding the recording again
  const audio = stereoSpansMp3({ seconds: 10, left: [[1, 5]], right: [[6, 8]] });
  const frames = 500; // 10 s of 20 ms frames
  const { provider } = fakeTranscription({
    answer: () => ({
      text: 'Agent: Hello.',
      language: 'en',
      segments: [{ speaker: 'agent', start: 0, end: 1.5, text: 'Hello.' }],
      channelActivity: {
        frameSeconds: 0.02,
        channels: [Array(frames).fill(false), Array.from({ length: frames }, (_, i) => i < 75)],
      },
    }),
  });
  h.deps.capture = { ...builtInCaptureProviders(), transcription: provider };
  const id = await insertCall(h.db, { orgId });
  assert.equal((await putAudio(id, audio)).statusCode, 204);
  await settleJobs(h.deps);
  const { rows } = await h.db.query<{ talk_metrics: Record<string, unknown> }>(
    'SELECT talk_metrics FROM calls WHERE id = $1',
    [id],
  );
  const m = rows[0].talk_metrics;
  assert.equal(m.customer_seconds, 0);
  assert.equal(m.agent_seconds, 1.5);
});
