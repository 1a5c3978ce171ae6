/**
 * Provider answers are read up to PROVIDER_MAX_ANSWER_BYTES (src/capture/providers/http.ts), through
 * the real pipeline: a speech-to-text or analysis server that answers 200 and never stops writing
 * fails its stage at once with answer_too_large; the connection is closed at the limit (the server
 * counts what it wrote) and the process's memory does not follow the answer.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { builtInCaptureProviders } from '../../src/capture/jobs/providers.ts';
import {
  analysisProviderFromConfig,
  transcriptionProviderFromConfig,
} from '../../src/capture/providers/index.ts';
import { loadConfig } from '../../src/config.ts';
import { startEndlessAnswer } from '../helpers/endless-answer.ts';
import { eventsOf, typesOf } from '../helpers/events.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, adminHeaders } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { monoMp3 } from '../helpers/stereo-mp3.ts';

const MiB = 1024 * 1024;
const LIMIT = MiB;
/** Socket buffers (Linux default maxima: 4 MiB sent, 32 MiB received) and a read in flight. */
const SOCKET_SLACK = 48 * MiB;

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

const settings = (base: string) =>
  loadConfig({
    TRANSCRIPTION_PROVIDER: 'openai',
    TRANSCRIPTION_BASE_URL: base,
    TRANSCRIPTION_TIMEOUT_MS: '120000',
    ANALYSIS_PROVIDER: 'openai',
    ANALYSIS_BASE_URL: base,
    ANALYSIS_TIMEOUT_MS: '120000',
    PROVIDER_MAX_ANSWER_BYTES: String(LIMIT),
  });

const processing = async (id: string) => (await admin(h, 'GET', `/calls/${id}/processing`)).json();
const mb = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;
/** Peak resident memory of this process so far (bytes). */
const peakRss = () => process.resourceUsage().maxRSS * 1024;

test('a speech-to-text server answering an endless 200 fails the transcribe stage at once; memory stays bounded', async () => {
  const offered = 1024 * MiB;
  const srv = await startEndlessAnswer({ offerBytes: offered });
  try {
    h.deps.capture = {
      ...builtInCaptureProviders(),
      transcription: transcriptionProviderFromConfig(settings(srv.url), h.clock),
    };
    const id = await insertCall(h.db, { orgId });
    const rssBefore = process.memoryUsage().rss;
    const peakBefore = peakRss();
    const put = await h.operator.inject({
      method: 'PUT',
      url: `/admin/v1/calls/${id}/recording`,
      headers: { ...adminHeaders, 'content-type': 'audio/mpeg' },
      payload: monoMp3({ seconds: 1 }),
    });
    assert.equal(put.statusCode, 204, put.body);
    await settleJobs(h.deps);
    const [written] = await srv.closed(1);
    const rssAfter = process.memoryUsage().rss;
    const peakGrowth = peakRss() - peakBefore;
    console.log(
      `server offered ${mb(offered)}, wrote ${written} bytes before the client closed; ` +
        `RSS ${mb(rssBefore)} -> ${mb(rssAfter)}, peak grew by ${mb(peakGrowth)}`,
    );

    const view = await processing(id);
    assert.equal(view.status, 'failed');
    assert.deepEqual(
      view.stages.map((s: Record<string, unknown>) => [s.stage, s.state, s.attempts, s.last_error_kind]),
      [['transcribe', 'failed', 1, 'answer_too_large']],
    );
    assert.equal(
      view.stages[0].last_error,
      'openai: openai answered 200 with a body over 1048576 bytes, the most this service reads (PROVIDER_MAX_ANSWER_BYTES); the answer was dropped',
    );
    assert.equal(srv.requests.length, 1, 'asked once: not retried');
    assert.ok(written <= LIMIT + SOCKET_SLACK, `the server wrote ${written} bytes`);
    // Buffering the answer would take at least the gigabyte offered.
    assert.ok(peakGrowth < 256 * MiB, `peak RSS grew by ${mb(peakGrowth)}`);
    assert.deepEqual(typesOf(await eventsOf(h.db, id)), ['call.recording.ready']);
  } finally {
    await srv.close();
  }
});

test('an analysis server answering an endless 200 fails the analyse stage at once; no analysis, no completion', async () => {
  const srv = await startEndlessAnswer({ offerBytes: 256 * MiB });
  try {
    h.deps.capture = {
      transcription: null,
      analysis: analysisProviderFromConfig(settings(srv.url), h.clock),
    };
    const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
    const res = await admin(h, 'POST', `/calls/${id}/transcript`, {
      text: 'Agent: Acme Plumbing.\nCustomer: Hi, my boiler is broken.',
    });
    assert.equal(res.statusCode, 202, res.body);
    await settleJobs(h.deps);
    const [written] = await srv.closed(1);
    const view = await processing(id);
    assert.deepEqual(
      view.stages.map((s: Record<string, unknown>) => [s.stage, s.state, s.attempts, s.last_error_kind]),
      [['analyse', 'failed', 1, 'answer_too_large']],
    );
    assert.equal(srv.requests.length, 1);
    assert.ok(written <= LIMIT + SOCKET_SLACK, `the server wrote ${written} bytes`);
    assert.equal((await h.db.query('SELECT 1 FROM call_analyses WHERE call_id = $1', [id])).rowCount, 0);
    assert.deepEqual(typesOf(await eventsOf(h.db, id)), []);
  } finally {
    await srv.close();
  }
});
