/**
 * A silent call through the real pipeline (issue 15, item 1): an inbound call whose dual-channel
 * recording is silent on both channels goes through the Twilio recording callback, the download,
 * speech-to-text (ANALYSIS_PROVIDER / TRANSCRIPTION_PROVIDER = openai against the fake provider
 * server) and the analyse and complete stages. No channel is loud enough to be sent to
 * speech-to-text, so the transcript is "" — and the analysis model, which WOULD invent (a name, an
 * address, lead score 7, a draft), must never be asked: the events carry an all-null analysis and
 * no draft goes out.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { downloadStage } from '../../src/capture/telephony/twilio/download.ts';
import { type FakeProviders, sampleAnalysisAnswer, startFakeProviders } from '../helpers/fake-providers.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { stereoMp3 } from '../helpers/stereo-mp3.ts';
import {
  callIdOf,
  callState,
  connectOrg,
  deliveredEvents,
  restCall,
  startTelephony,
  type TelephonyEnv,
} from '../helpers/telephony.ts';

let t: TelephonyEnv;
let fake: FakeProviders;
before(async () => {
  fake = await startFakeProviders();
  // a model that makes things up whatever it is given
  fake.chat = (req) => ({
    ...sampleAnalysisAnswer(req),
    caller_name: 'Jane Miller',
    client_address: '12 Main Street',
    client_city: 'Springfield',
    lead_score: 7,
  });
  t = await startTelephony({
    TRANSCRIPTION_PROVIDER: 'openai',
    TRANSCRIPTION_BASE_URL: fake.openaiBaseUrl,
    TRANSCRIPTION_API_KEY: 'sk-test-transcription-key-0123456789',
    ANALYSIS_PROVIDER: 'openai',
    ANALYSIS_BASE_URL: fake.openaiBaseUrl,
    ANALYSIS_API_KEY: 'sk-test-analysis-key-0123456789',
  });
});
after(async () => {
  await t?.close();
  await fake?.close();
});

/** The processed analysis of a call in which nobody said anything: every field null. */
const ALL_NULL = {
  caller_name: null,
  summary: null,
  subject: null,
  service_needed: null,
  services_match: null,
  lead_score: null,
  preferred_date: null,
  client_city: null,
  client_address: null,
  additional_details: null,
  caller_location: null,
  client_country: null,
  counterparty_name: null,
  proposal_items: null,
};

test('an inbound two-sided call silent on both channels gets an all-null analysis and no draft, and no model is asked', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550999' });
  const call = await t.fake.inboundCall({ from: '+14155550123', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const dial = await call.answerDial({
    recording: stereoMp3({ seconds: 6, left: null, right: null }),
    duration: 6,
  });
  assert.equal(dial.recordingReply?.status, 204);
  assert.equal((await call.hangup()).status, 204);
  await deliveredEvents(t, org);
  await settleJobs(t.h.deps, { handlers: { download: downloadStage } });

  const state = await callState(t, id);
  assert.deepEqual([state.recording_state, state.recording_channels], ['available', 2]);
  assert.equal(fake.of('transcriptions').length, 0, 'no channel is loud enough for speech-to-text');
  assert.equal(fake.of('chat').length, 0, 'the analysis model is never asked');

  const events = (await deliveredEvents(t, org)).filter(
    (e) => (e.data as { call_id: string }).call_id === id,
  );
  assert.deepEqual(
    events.map((e) => e.event_type).sort(),
    ['call.completed', 'call.recording.ready', 'call.transcribed'],
    'no call.followup_email.drafted',
  );
  const transcribed = events.find((e) => e.event_type === 'call.transcribed')!.data;
  assert.deepEqual(transcribed, { call_id: id, transcript_original: '', transcript_processed: ALL_NULL });
  const completed = events.find((e) => e.event_type === 'call.completed')!.data as Record<string, unknown>;
  assert.equal(completed.transcript_original, '');
  assert.deepEqual(completed.transcript_processed, ALL_NULL);

  const rest = await restCall(t, org, id);
  assert.equal(rest.status, 200);
  assert.equal(rest.body.data.caller_name, null);
  assert.deepEqual(rest.body.data.transcript_processed, {
    caller_name: null,
    summary: null,
    service_needed: null,
    followup_email: null,
  });
  const { rows } = await t.h.db.query<{ followup_email: unknown; language: string | null }>(
    'SELECT followup_email, language FROM call_analyses WHERE call_id = $1',
    [id],
  );
  assert.deepEqual(rows, [{ followup_email: null, language: null }]);
});
