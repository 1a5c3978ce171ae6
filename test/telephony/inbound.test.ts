import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { T0 } from '../helpers/deps.ts';
import { admin } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { mp3 } from '../helpers/mp3.ts';
import {
  callbacksOf,
  callIdOf,
  callState,
  connectOrg,
  deliveredEvents,
  PUBLIC_BASE_URL,
  restCall,
  restRecordingUrl,
  startTelephony,
  type TelephonyEnv,
} from '../helpers/telephony.ts';

/**
 * Inbound calls from the first Twilio callback (fake Twilio, signed with the official package) to
 * the signed events at a receiver and the REST read.
 */
let t: TelephonyEnv;
before(async () => {
  t = await startTelephony();
});
after(async () => {
  await t.close();
});

const XML = '<?xml version="1.0" encoding="UTF-8"?>';
const ms = (s: number) => Math.round(s * 1000) / 1000;
const urlsOf = (id: string) => `${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}`;

const NOT_READY = {
  status: 409,
  body: {
    success: false,
    error: { code: 'RECORDING_NOT_READY', message: 'The recording has not arrived yet; retry later.' },
  },
};
/** recording-url answer without meta (timestamp, request id) */
async function recordingUrlAnswer(org: Awaited<ReturnType<typeof connectOrg>>, id: string) {
  const r = await restRecordingUrl(t, org, id);
  const { meta: _meta, ...body } = r.body as { meta: unknown };
  return { status: r.status, body };
}

test('voicemail: no ring-to number; <Record>, the MP3 downloaded, call.recording.ready, REST read', async () => {
  const org = await connectOrg(t);
  const audio = mp3(7);
  const call = await t.fake.inboundCall({
    from: '+14155550123',
    to: org.number,
    callerName: 'JANE DOE',
    account: org.account,
  });
  assert.equal(call.replies[0]!.status, 200);
  const id = await callIdOf(t, call.callSid);
  const base = urlsOf(id);
  assert.equal(
    call.twiml,
    `${XML}<Response><Record action="${base}/voicemail-ended" method="POST" maxLength="300" timeout="5" playBeep="true" recordingStatusCallback="${base}/recording" recordingStatusCallbackMethod="POST" recordingStatusCallbackEvent="completed absent"/><Hangup/></Response>`,
  );
  assert.deepEqual(await recordingUrlAnswer(org, id), NOT_READY);
  const vm = await call.recordVoicemail({ recording: audio.bytes, duration: 7 });
  assert.equal(vm.actionReply.status, 200);
  assert.equal(vm.actionReply.body, `${XML}<Response><Hangup/></Response>`);
  assert.equal(vm.recordingReply.status, 204);
  assert.equal(vm.recordingReply.body, '');
  assert.equal((await call.hangup()).status, 204);

  const events = await deliveredEvents(t, org);
  assert.deepEqual(
    events.map((e) => e.event_type),
    ['call.recording.ready'],
  );
  const data = events[0]!.data as { call_id: string; recording_url: string; duration: number };
  assert.deepEqual(Object.keys(data).sort(), ['call_id', 'duration', 'recording_url']);
  assert.equal(data.call_id, id);
  assert.equal(data.duration, ms(audio.duration));
  assert.ok(
    data.recording_url.startsWith(`${PUBLIC_BASE_URL}/api/v1/calls/${id}/recording.mp3?`),
    data.recording_url,
  );

  const rest = await restCall(t, org, id);
  assert.equal(rest.status, 200);
  const c = rest.body.data;
  assert.match(c.app_url, new RegExp(`/${id}$`));
  assert.deepEqual(c, {
    call_id: id,
    direction: 'inbound',
    caller_phone: '+14155550123',
    customer_phone_e164: '+14155550123',
    customer_phone_national: '(415) 555-0123',
    company_phone_e164: org.number,
    app_url: c.app_url,
    caller_name: 'JANE DOE',
    duration: ms(audio.duration),
    crm_status: 'new',
    review_status: null,
    outbound_lifecycle: null,
    transcript_processed: null,
    created_at: T0,
  });
  assert.equal((await restRecordingUrl(t, org, id)).status, 200);

  assert.deepEqual(await callState(t, id), {
    recording_state: 'available',
    recording_sid: vm.recordingSid,
    recording_consent: null,
    voicemail: true,
    recording_channels: 1,
    provider_call_status: 'completed',
    duration: ms(audio.duration),
    has_blob: true,
    updated_at: new Date(T0),
  });
  assert.equal(t.fake.recordings.get(vm.recordingSid)!.downloads, 1);
  assert.deepEqual((await callbacksOf(t, id)).map((r) => [r.dedupe_key, r.outcome]).sort(), [
    [`recording:${vm.recordingSid}:completed`, 'applied'],
    [`status:${call.callSid}:completed`, 'applied'],
    [`voice:${call.callSid}`, 'applied'],
  ]);
});

test('forwarded call with consent accepted (silence): <Gather> announcement, then <Dial> dual-channel; company_phone = ForwardedFrom', async () => {
  const org = await connectOrg(t, {
    ringTo: '+14155550999',
    consent: {
      enabled: true,
      text: 'Dieses Gespräch wird aufgezeichnet. Drücken Sie eine Taste, um abzulehnen.',
      language: 'de-DE',
    },
  });
  const audio = mp3(12);
  const call = await t.fake.inboundCall({
    from: '+4930123456789',
    to: org.number,
    forwardedFrom: '+14155550777',
    account: org.account,
  });
  const id = await callIdOf(t, call.callSid);
  const base = urlsOf(id);
  assert.equal(
    call.twiml,
    `${XML}<Response><Gather action="${base}/consent" method="POST" input="dtmf" numDigits="1" timeout="4"><Say language="de-DE">Dieses Gespräch wird aufgezeichnet. Drücken Sie eine Taste, um abzulehnen.</Say></Gather><Redirect method="POST">${base}/consent</Redirect></Response>`,
  );
  const accepted = await call.gatherTimeout();
  assert.equal(accepted.status, 200);
  assert.equal(
    call.twiml,
    `${XML}<Response><Dial action="${base}/dial-ended" method="POST" timeout="25" record="record-from-answer-dual" recordingStatusCallback="${base}/recording" recordingStatusCallbackMethod="POST" recordingStatusCallbackEvent="completed absent"><Number>+14155550999</Number></Dial></Response>`,
  );
  const dial = await call.answerDial({ recording: audio.bytes, duration: 12 });
  assert.equal(dial.recordingReply!.status, 204);
  assert.equal(dial.actionReply.body, `${XML}<Response><Hangup/></Response>`);
  assert.equal((await call.hangup()).status, 204);

  const events = await deliveredEvents(t, org);
  assert.deepEqual(
    events.map((e) => [e.event_type, (e.data as { call_id: string }).call_id]),
    [['call.recording.ready', id]],
  );
  assert.equal((events[0]!.data as { duration: number }).duration, ms(audio.duration));
  const c = (await restCall(t, org, id)).body.data;
  assert.equal(c.caller_phone, '+4930123456789');
  assert.equal(c.customer_phone_e164, '+4930123456789');
  assert.equal(c.company_phone_e164, '+14155550777');
  assert.equal(c.caller_name, null);
  const s = await callState(t, id);
  assert.equal(s.recording_consent, 'accepted');
  assert.equal(s.voicemail, false);
  assert.equal(s.recording_channels, 2);
  assert.equal(s.recording_sid, dial.recordingSid);
});

test('refused recording: a key during the announcement; <Dial> without recording, recording-url 409 (never 410), no events', async () => {
  const org = await connectOrg(t, {
    ringTo: '+14155550998',
    consent: { enabled: true, text: 'This call is recorded. Press any key to refuse.' },
  });
  const call = await t.fake.inboundCall({ from: '+14155550124', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const base = urlsOf(id);
  assert.match(call.twiml, /<Say language="en">This call is recorded\. Press any key to refuse\.<\/Say>/);
  const refused = await call.pressDigits('9');
  assert.equal(refused.status, 200);
  assert.equal(
    call.twiml,
    `${XML}<Response><Dial action="${base}/dial-ended" method="POST" timeout="25"><Number>+14155550998</Number></Dial></Response>`,
  );
  await call.answerDial();
  await call.hangup();
  assert.deepEqual(await deliveredEvents(t, org), []);
  assert.deepEqual(await recordingUrlAnswer(org, id), NOT_READY);
  const s = await callState(t, id);
  assert.equal(s.recording_state, 'refused');
  assert.equal(s.recording_consent, 'refused');
  // Pressing again (Twilio retrying the action) changes nothing and answers the same TwiML.
  const before = await callbacksOf(t, id);
  const again = await t.fake.signedPost(
    `${base}/consent`,
    call.base({ CallStatus: 'in-progress', Digits: '9' }),
    { account: org.account },
  );
  assert.equal(again.body, refused.body);
  assert.deepEqual(await callbacksOf(t, id), before);
});

test('refused recording without a ring-to number: the caller is not recorded and the call ends', async () => {
  const org = await connectOrg(t, {
    consent: { enabled: true, text: 'We record calls. Press a key to refuse.' },
  });
  const call = await t.fake.inboundCall({ from: '+14155550125', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  await call.pressDigits('1');
  assert.equal(call.twiml, `${XML}<Response><Hangup/></Response>`);
  await call.hangup(3);
  assert.deepEqual(await recordingUrlAnswer(org, id), NOT_READY);
  assert.equal((await callState(t, id)).recording_state, 'refused');
});

test('a caller who hangs up during the announcement: the recording is refused (409), not left pending', async () => {
  const org = await connectOrg(t, {
    ringTo: '+14155550997',
    consent: { enabled: true, text: 'Recorded call.' },
  });
  const call = await t.fake.inboundCall({ from: '+14155550126', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  await call.hangup(2);
  const s = await callState(t, id);
  assert.equal(s.recording_state, 'refused');
  assert.equal(s.recording_consent, 'announced');
  assert.deepEqual(await recordingUrlAnswer(org, id), NOT_READY);
});

test('anonymous and withheld caller ids: caller_phone as sent, customer_phone_e164 null', async () => {
  const org = await connectOrg(t);
  for (const from of ['anonymous', '+266696687', 'Restricted', '', 'UNKNOWN', '+7378742833']) {
    const call = await t.fake.inboundCall({ from, to: org.number, account: org.account });
    assert.equal(call.replies[0]!.status, 200, from);
    const id = await callIdOf(t, call.callSid);
    const c = (await restCall(t, org, id)).body.data;
    assert.equal(c.caller_phone, from, from);
    assert.equal(c.customer_phone_e164, null, from);
    assert.equal(c.customer_phone_national, null, from);
    assert.equal(c.company_phone_e164, org.number, from);
  }
});

test('a <Dial> nobody answers falls back to voicemail (one-sided, mono)', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550996' });
  const audio = mp3(4);
  const call = await t.fake.inboundCall({ from: '+14155550127', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const base = urlsOf(id);
  const unanswered = await call.dialUnanswered('busy');
  assert.equal(
    unanswered.body,
    `${XML}<Response><Record action="${base}/voicemail-ended" method="POST" maxLength="300" timeout="5" playBeep="true" recordingStatusCallback="${base}/recording" recordingStatusCallbackMethod="POST" recordingStatusCallbackEvent="completed absent"/><Hangup/></Response>`,
  );
  await call.recordVoicemail({ recording: audio.bytes, duration: 4 });
  await call.hangup();
  const events = await deliveredEvents(t, org);
  assert.deepEqual(
    events.map((e) => e.event_type),
    ['call.recording.ready'],
  );
  const s = await callState(t, id);
  assert.equal(s.voicemail, true);
  assert.equal(s.recording_channels, 1);
  assert.equal(s.recording_state, 'available');
});

test('recording mode no_recording: <Dial> without recording; recording-url 410 RECORDING_NOT_CAPTURED', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550995', recordingMode: 'no_recording' });
  const call = await t.fake.inboundCall({ from: '+14155550128', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  assert.equal(
    call.twiml,
    `${XML}<Response><Dial action="${urlsOf(id)}/dial-ended" method="POST" timeout="25"><Number>+14155550995</Number></Dial></Response>`,
  );
  assert.equal((await restRecordingUrl(t, org, id)).body.error.code, 'RECORDING_NOT_CAPTURED');
});

test('a call to a number the account does not own: "not in service", no call stored', async () => {
  const org = await connectOrg(t);
  const before = (await t.h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM calls')).rows[0]!.n;
  const call = await t.fake.inboundCall({ from: '+14155550129', to: '+14155550100', account: org.account });
  assert.equal(call.twiml, `${XML}<Response><Say>This number is not in service.</Say><Hangup/></Response>`);
  const after = (await t.h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM calls')).rows[0]!.n;
  assert.equal(after, before);
});

const TWO_SIDED = `Agent: Acme Plumbing, how can I help you?
Caller: Hi, my name is Jane Miller. I need a plumber to fix my water heater. It's urgent.
Agent: Where are you?
Caller: 42 Oak Street, Springfield. Tomorrow morning would be great.`;

/** Posts the transcript as a transcription adapter does and runs the queued analysis. */
async function transcribe(id: string) {
  const res = await admin(t.h, 'POST', `/calls/${id}/transcript`, { text: TWO_SIDED, language: 'en' });
  assert.equal(res.statusCode, 202, res.body);
  await settleJobs(t.h.deps);
}

test('to call.completed: a two-sided (dialled) call gets a follow-up draft, a voicemail never does', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550993' });
  const dialled = await t.fake.inboundCall({ from: '+14155550130', to: org.number, account: org.account });
  const dialledId = await callIdOf(t, dialled.callSid);
  await dialled.answerDial({ recording: mp3(3).bytes });
  await dialled.hangup();
  await transcribe(dialledId);

  const vmOrg = await connectOrg(t);
  const vm = await t.fake.inboundCall({ from: '+14155550131', to: vmOrg.number, account: vmOrg.account });
  const vmId = await callIdOf(t, vm.callSid);
  await vm.recordVoicemail({ recording: mp3(3).bytes });
  await vm.hangup();
  await transcribe(vmId);

  const dialledEvents = await deliveredEvents(t, org);
  assert.deepEqual(dialledEvents.map((e) => e.event_type).sort(), [
    'call.completed',
    'call.followup_email.drafted',
    'call.recording.ready',
    'call.transcribed',
  ]);
  const completed = dialledEvents.find((e) => e.event_type === 'call.completed')!.data as Record<
    string,
    unknown
  >;
  assert.equal(completed.call_id, dialledId);
  assert.equal(completed.company_phone_e164, org.number);
  assert.equal(completed.customer_phone_e164, '+14155550130');
  const draft = (await restCall(t, org, dialledId)).body.data.transcript_processed.followup_email;
  assert.equal(draft.language, 'en');

  const vmEvents = await deliveredEvents(t, vmOrg);
  assert.deepEqual(vmEvents.map((e) => e.event_type).sort(), [
    'call.completed',
    'call.recording.ready',
    'call.transcribed',
  ]);
  const vmCall = (await restCall(t, vmOrg, vmId)).body.data;
  assert.equal(vmCall.transcript_processed.followup_email, null);
  assert.equal(vmCall.transcript_processed.caller_name, 'Jane Miller');
});
