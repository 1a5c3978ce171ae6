/**
 * An inbound Twilio call travelling by itself from the carrier to a signed call.completed: the
 * Voice URL, the <Dial> answered with dual-channel recording, the recording callback, the download
 * from (fake) Twilio, speech-to-text and analysis by the configured providers (the openai protocol,
 * against the fake provider server), the completion events at a receiver, and the REST read — no
 * operator API call anywhere. Also the durable download job's retry: a recording Twilio still
 * answers 404 for (finalising it) is fetched again after the job's backoff, and the call completes
 * the same way.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { downloadStage } from '../../src/capture/telephony/twilio/download.ts';
import { type FakeProviders, STEREO_TRANSCRIPT, startFakeProviders } from '../helpers/fake-providers.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { AGENT_TONE_HZ, CUSTOMER_TONE_HZ, INBOUND_TONES, stereoMp3 } from '../helpers/stereo-mp3.ts';
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

/** As Twilio records an inbound <Dial>: the caller (the parent leg) on channel 0, the agent on 1. */
const AUDIO = stereoMp3({ seconds: 9, ...INBOUND_TONES });
const download = { download: downloadStage };

test('a forwarded inbound call is recorded, transcribed, analysed and completed by itself', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550999' });
  const call = await t.fake.inboundCall({
    from: '+14155550123',
    to: org.number,
    forwardedFrom: '+14155550777',
    callerName: 'JANE DOE',
    account: org.account,
  });
  const id = await callIdOf(t, call.callSid);
  // the caller says the customer's words, the agent who answers the agent's; the fake records them
  // as Twilio does (the caller's leg on the first channel)
  const dial = await call.answerDial({
    voices: { caller: CUSTOMER_TONE_HZ, answerer: AGENT_TONE_HZ },
    duration: 9,
  });
  assert.equal(dial.recordingReply?.status, 204);
  const hung = await call.hangup();
  assert.equal(hung.status, 204);
  // the download job (run by the public listener right after the callback), then every
  // processing job due now
  await deliveredEvents(t, org);
  await settleJobs(t.h.deps, { handlers: download });
  const events = await deliveredEvents(t, org);
  const mine = events.filter((e) => (e.data as { call_id: string }).call_id === id);
  assert.deepEqual(mine.map((e) => e.event_type).sort(), [
    'call.completed',
    'call.followup_email.drafted',
    'call.recording.ready',
    'call.transcribed',
  ]);
  const completed = mine.find((e) => e.event_type === 'call.completed')!.data as Record<string, unknown>;
  assert.equal(completed.transcript_original, STEREO_TRANSCRIPT);
  assert.equal(
    (completed.transcript_processed as { subject: string }).subject,
    'Leaking water heater repair',
  );
  assert.equal(fake.of('transcriptions').length, 2, 'one speech-to-text request per channel');
  assert.equal(
    t.fake.restRequests.filter((r) => r.method === 'GET' && r.path.endsWith('.mp3')).length >= 1,
    true,
  );

  const rest = await restCall(t, org, id);
  assert.equal(rest.status, 200);
  assert.equal(
    rest.body.data.transcript_processed.summary.length > 0,
    true,
    'the processed analysis, via REST',
  );
  assert.equal('transcript_original' in rest.body.data, false, 'the raw transcript is never exposed by REST');
  assert.equal(
    rest.body.data.company_phone_e164,
    '+14155550777',
    'the customer’s own number it was forwarded from',
  );
  assert.equal(rest.body.data.customer_phone_e164, '+14155550123');
  assert.equal(rest.body.data.direction, 'inbound');
  assert.equal(rest.body.data.duration > 8.9, true);
  assert.equal((await callState(t, id)).recording_state, 'available');

  // Nothing downloads the recording again later.
  const downloads = t.fake.restRequests.filter((r) => r.path.endsWith('.mp3')).length;
  t.h.clock.advance(3 * 60_000);
  await settleJobs(t.h.deps, { handlers: download });
  assert.equal(t.fake.restRequests.filter((r) => r.path.endsWith('.mp3')).length, downloads);
  const again = (await deliveredEvents(t, org)).filter((e) => (e.data as { call_id: string }).call_id === id);
  assert.equal(again.filter((e) => e.event_type === 'call.completed').length, 1, 'completed once');
});

test('a recording Twilio answers 404 for at first is fetched again by the durable download job after its backoff, and the call completes', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550998' });
  const call = await t.fake.inboundCall({ from: '+14155550124', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  // Twilio cannot deliver the recording at first (the fake answers 404 for an unknown recording
  // URL, as Twilio may while it finalises the file): a retryable failure, not a final one.
  const rec = t.fake.addRecording({
    accountSid: org.account.accountSid,
    callSid: call.callSid,
    audio: AUDIO,
  });
  const missing = rec.url.replace(rec.sid, 'RE00000000000000000000000000000000');
  await call.answerDial({ recording: AUDIO, recordingUrl: missing });
  await call.hangup();
  await settleJobs(t.h.deps, { handlers: download });
  assert.equal((await callState(t, id)).recording_state, 'pending');
  const { rows } = await t.h.db.query<{ state: string; attempts: number; last_error_kind: string }>(
    `SELECT state, attempts, last_error_kind FROM processing_jobs WHERE call_id = $1 AND stage = 'download'`,
    [id],
  );
  assert.deepEqual(rows, [{ state: 'pending', attempts: 1, last_error_kind: 'retryable' }]);
  // Twilio has the recording now (a late upload on its side): the job's retry, due after its
  // backoff, downloads it and the pipeline runs to call.completed.
  await t.h.db.query('UPDATE calls SET provider_recording_url = $2 WHERE id = $1', [id, rec.url]);
  t.h.clock.advance(3 * 60_000);
  await settleJobs(t.h.deps, { handlers: download });
  const events = (await deliveredEvents(t, org)).filter(
    (e) => (e.data as { call_id: string }).call_id === id,
  );
  assert.deepEqual(
    events
      .map((e) => e.event_type)
      .filter((x) => x !== 'call.created')
      .sort(),
    ['call.completed', 'call.followup_email.drafted', 'call.recording.ready', 'call.transcribed'],
  );
  assert.equal((await callState(t, id)).recording_state, 'available');
});
