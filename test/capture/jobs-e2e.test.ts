/**
 * Processing jobs end to end, with the real providers (TRANSCRIPTION_PROVIDER=openai,
 * ANALYSIS_PROVIDER=openai as the settings build them) talking HTTP to the fake provider server,
 * and the events delivered, signed, to a real receiver: a stereo recording becomes call.completed;
 * a model answer that breaks the schema never reaches the receiver; an outage retries with
 * Retry-After, fails visibly, and reprocess recovers the call.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { verifyWebhook } from '../../sdk/src/webhooks/verify.ts';
import { SECOND } from '../../src/clock.ts';
import { eventsOf, typesOf } from '../helpers/events.ts';
import { type FakeProviders, STEREO_TRANSCRIPT, startFakeProviders } from '../helpers/fake-providers.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, adminHeaders } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { INBOUND_TONES, stereoMp3 } from '../helpers/stereo-mp3.ts';
import { drain, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let fake: FakeProviders;
let rx: Receiver;
let orgId: string;
let secret: string;
before(async () => {
  fake = await startFakeProviders();
  rx = await startReceiver();
  h = await createHarness({
    TRANSCRIPTION_PROVIDER: 'openai',
    TRANSCRIPTION_BASE_URL: fake.openaiBaseUrl,
    TRANSCRIPTION_API_KEY: 'sk-test-transcription-key-0123456789',
    ANALYSIS_PROVIDER: 'openai',
    ANALYSIS_BASE_URL: fake.openaiBaseUrl,
    ANALYSIS_API_KEY: 'sk-test-analysis-key-0123456789',
    PROCESSING_MAX_ATTEMPTS: '3',
  });
  ({ orgId } = await insertOrg(h.db, { country: 'US' }));
  ({ secret } = await insertSubscription(h.deps, { orgId, url: rx.url }));
});
after(async () => {
  await h?.close();
  await rx?.close();
  await fake?.close();
});

/** insertCall's calls are inbound: the caller (customer) on channel 0, the agent on channel 1. */
const AUDIO = stereoMp3({ seconds: 9, ...INBOUND_TONES });

async function callWithAudio(): Promise<string> {
  const id = await insertCall(h.db, { orgId });
  const res = await h.operator.inject({
    method: 'PUT',
    url: `/admin/v1/calls/${id}/recording`,
    headers: { ...adminHeaders, 'content-type': 'audio/mpeg' },
    payload: AUDIO,
  });
  assert.equal(res.statusCode, 204, res.body);
  return id;
}

/** The events the receiver got for a call, each checked against its signature. */
async function received(id: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  await drain(h.deps);
  return rx.requests
    .map((r) => {
      // the SDK's verifier, an independent check of the signature
      const e = verifyWebhook(r.body, r.headers, secret, { now: () => h.clock.now().getTime() });
      return { type: e.event_type, data: e.data as Record<string, unknown> };
    })
    .filter((e) => e.data.call_id === id);
}

const processing = async (id: string) => (await admin(h, 'GET', `/calls/${id}/processing`)).json();

test('a stereo recording is transcribed and analysed by the configured providers, and call.completed reaches the receiver once', async () => {
  const id = await callWithAudio();
  await settleJobs(h.deps);
  const events = await received(id);
  assert.deepEqual(events.map((e) => e.type).sort(), [
    'call.completed',
    'call.followup_email.drafted',
    'call.recording.ready',
    'call.transcribed',
  ]);
  const completed = events.find((e) => e.type === 'call.completed')!.data;
  assert.equal(completed.transcript_original, STEREO_TRANSCRIPT);
  const tp = completed.transcript_processed as Record<string, unknown>;
  assert.equal(tp.subject, 'Leaking water heater repair');
  assert.equal(tp.lead_score, 8);
  assert.equal(fake.of('transcriptions').length, 2, 'one request per channel');
  assert.equal(fake.of('chat').length, 1);
  assert.equal((await processing(id)).status, 'completed');
});

test('a model answer that breaks the schema never reaches the receiver; reprocess with a good answer completes the call', async () => {
  const chatsBefore = fake.of('chat').length;
  // the provider's one corrective retry breaks the schema again
  fake.script('chat', { content: { subject: 'x'.repeat(200) } }, { content: { subject: 'x'.repeat(200) } });
  const id = await callWithAudio();
  await settleJobs(h.deps);
  assert.equal(fake.of('chat').length - chatsBefore, 2);
  const view = await processing(id);
  assert.equal(view.status, 'needs_review');
  const analyse = view.stages.find((s: { stage: string }) => s.stage === 'analyse');
  assert.deepEqual(
    [analyse.state, analyse.attempts, analyse.last_error_kind],
    ['needs_review', 1, 'invalid_output'],
  );
  assert.deepEqual(
    (await received(id)).map((e) => e.type),
    ['call.recording.ready'],
  );
  assert.deepEqual(typesOf(await eventsOf(h.db, id)), ['call.recording.ready']);

  const res = await admin(h, 'POST', `/calls/${id}/reprocess`);
  assert.deepEqual(res.json(), { call_id: id, requeued: ['analyse'] });
  await settleJobs(h.deps);
  const events = await received(id);
  assert.equal(events.filter((e) => e.type === 'call.completed').length, 1);
  const tp = events.find((e) => e.type === 'call.completed')!.data.transcript_processed as Record<
    string,
    unknown
  >;
  assert.equal(tp.subject, 'Leaking water heater repair');
});

test('an analysis outage is retried as Retry-After says, fails visibly after the cap, and reprocess recovers it', async () => {
  const outage = {
    status: 503,
    body: { error: { message: 'The server is overloaded.' } },
    headers: { 'retry-after': '40' },
  };
  fake.script('chat', outage, outage, outage);
  const id = await callWithAudio();
  await settleJobs(h.deps);
  let stage = (await processing(id)).stages.find((s: { stage: string }) => s.stage === 'analyse');
  assert.deepEqual([stage.state, stage.attempts, stage.last_error_kind], ['pending', 1, 'retryable']);
  assert.match(stage.last_error, /^openai: .*503.*The server is overloaded\./);
  assert.doesNotMatch(stage.last_error, /sk-test/);
  assert.equal(stage.next_attempt_at, new Date(h.clock.now().getTime() + 40 * SECOND).toISOString());
  for (let n = 2; n <= 3; n++) {
    h.clock.advance(40 * SECOND);
    await settleJobs(h.deps);
  }
  const failed = await processing(id);
  assert.equal(failed.status, 'failed');
  stage = failed.stages.find((s: { stage: string }) => s.stage === 'analyse');
  assert.deepEqual([stage.state, stage.attempts, stage.next_attempt_at], ['failed', 3, null]);
  assert.deepEqual(
    (await received(id)).map((e) => e.type),
    ['call.recording.ready'],
  );

  // the provider is back
  assert.equal((await admin(h, 'POST', `/calls/${id}/reprocess`)).statusCode, 202);
  await settleJobs(h.deps);
  assert.equal((await processing(id)).status, 'completed');
  const completed = (await received(id)).filter((e) => e.type === 'call.completed');
  assert.equal(completed.length, 1);
  assert.equal(completed[0].data.transcript_original, STEREO_TRANSCRIPT);
});
