import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { T0 } from '../helpers/deps.ts';
import { getExpectedTwilioSignature, sid, validateRequest } from '../helpers/fake-twilio.ts';
import { mp3 } from '../helpers/mp3.ts';
import { startReceiver } from '../helpers/receiver.ts';
import {
  callbacksOf,
  callIdOf,
  callState,
  connectOrg,
  deliveredEvents,
  PUBLIC_BASE_URL,
  restRecordingUrl,
  startTelephony,
  type TelephonyEnv,
} from '../helpers/telephony.ts';

/**
 * Callback security and at-most-once: unsigned, tampered and unknown-account callbacks answer 403
 * and change nothing (the official twilio package's validateRequest agrees they are invalid);
 * duplicate and out-of-order callbacks change nothing twice; a RecordingUrl off the Twilio origin
 * is never fetched.
 */
let t: TelephonyEnv;
before(async () => {
  t = await startTelephony();
});
after(async () => {
  await t.close();
});

const FORBIDDEN = {
  success: false,
  error: { code: 'FORBIDDEN', message: 'Missing or invalid X-Twilio-Signature, or unknown AccountSid.' },
  meta: { timestamp: T0 },
};
const withoutRequestId = (body: string) => {
  const b = JSON.parse(body) as { meta: { request_id?: string } };
  assert.equal(typeof b.meta.request_id, 'string');
  delete b.meta.request_id;
  return b;
};

async function snapshot() {
  const q = async (sql: string) => (await t.h.db.query<{ n: number }>(sql)).rows[0]!.n;
  return {
    calls: await q('SELECT count(*)::int AS n FROM calls'),
    callbacks: await q('SELECT count(*)::int AS n FROM telephony_callbacks'),
    events: await q('SELECT count(*)::int AS n FROM events'),
    updated: await q(`SELECT count(*)::int AS n FROM calls WHERE updated_at <> '${T0}'`),
  };
}

test('unsigned, tampered, wrongly keyed, re-targeted and unknown-account callbacks answer 403 and change nothing', async () => {
  const org = await connectOrg(t);
  const url = `${PUBLIC_BASE_URL}/telephony/twilio/voice`;
  const params = {
    AccountSid: org.account.accountSid,
    CallSid: sid('CA'),
    From: '+14155550142',
    To: org.number,
    CallStatus: 'ringing',
    Direction: 'inbound',
  };
  const good = getExpectedTwilioSignature(org.account.authToken, url, params);
  assert.equal(validateRequest(org.account.authToken, good, url, params), true);
  const before = await snapshot();

  const tampered = { ...params, From: '+14155550143' };
  assert.equal(validateRequest(org.account.authToken, good, url, tampered), false);
  const statusUrl = `${PUBLIC_BASE_URL}/telephony/twilio/status`;
  assert.equal(validateRequest(org.account.authToken, good, statusUrl, params), false);
  const wrongKey = getExpectedTwilioSignature('not-the-token-0123456789abcdef', url, params);
  assert.equal(validateRequest(org.account.authToken, wrongKey, url, params), false);
  const stranger = t.fake.addAccount();
  const unknown = { ...params, AccountSid: stranger.accountSid };
  const unknownSig = getExpectedTwilioSignature(stranger.authToken, url, unknown);
  assert.equal(validateRequest(stranger.authToken, unknownSig, url, unknown), true);
  const noAccount = { ...params } as Record<string, string>;
  delete noAccount.AccountSid;

  const attempts: [string, string, Record<string, string>, string | null][] = [
    ['unsigned', url, params, null],
    ['empty signature', url, params, ''],
    ['tampered parameter', url, tampered, good],
    ['signed for another URL', statusUrl, params, good],
    ['wrong key', url, params, wrongKey],
    ['account not connected', url, unknown, unknownSig],
    ['no AccountSid', url, noAccount, getExpectedTwilioSignature(org.account.authToken, url, noAccount)],
    ['garbage signature', url, params, 'x'.repeat(28)],
  ];
  for (const [what, target, p, signature] of attempts) {
    const res = await t.fake.signedPost(target, p, { account: org.account, signature });
    assert.equal(res.status, 403, what);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', what);
    assert.deepEqual(withoutRequestId(res.body), FORBIDDEN, what);
  }
  // A signed request for a call URL with a forged id: 403 too (the id is part of the signed URL).
  const callUrl = `${PUBLIC_BASE_URL}/telephony/twilio/calls/00000000-0000-4000-8000-000000000000/recording`;
  const rec = { AccountSid: org.account.accountSid, CallSid: params.CallSid, RecordingStatus: 'completed' };
  const res = await t.fake.signedPost(callUrl, rec, {
    signature: getExpectedTwilioSignature(org.account.authToken, url, rec),
  });
  assert.equal(res.status, 403);
  assert.deepEqual(await snapshot(), before);

  // The same request correctly signed goes through.
  const ok = await t.fake.signedPost(url, params, { account: org.account });
  assert.equal(ok.status, 200);
  assert.equal((await snapshot()).calls, before.calls + 1);
});

test('the auth token is stored encrypted and never echoed', async () => {
  const org = await connectOrg(t);
  const { rows } = await t.h.db.query<{ auth_token_ciphertext: string }>(
    'SELECT auth_token_ciphertext FROM telephony_accounts WHERE organization_id = $1',
    [org.orgId],
  );
  assert.match(rows[0]!.auth_token_ciphertext, /^v1\./);
  assert.ok(!rows[0]!.auth_token_ciphertext.includes(org.account.authToken));
});

test('duplicate callbacks change nothing twice: one call, one download, one event', async () => {
  const org = await connectOrg(t);
  const audio = mp3(5);
  const call = await t.fake.inboundCall({ from: '+14155550150', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  // Twilio retries the Voice URL: the same TwiML, still one call.
  const again = await call.request(
    `${PUBLIC_BASE_URL}/telephony/twilio/voice`,
    call.base({ CallStatus: 'ringing' }),
  );
  assert.equal(again.body, call.replies[0]!.body);
  assert.equal(
    (
      await t.h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM calls WHERE provider_call_sid = $1', [
        call.callSid,
      ])
    ).rows[0]!.n,
    1,
  );
  const vm = await call.recordVoicemail({ recording: audio.bytes, duration: 5 });
  await deliveredEvents(t, org);
  const recordingUrl = `${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording`;
  const completed = {
    RecordingSid: vm.recordingSid,
    RecordingUrl: vm.recordingUrl,
    RecordingStatus: 'completed',
    RecordingDuration: '5',
    RecordingChannels: '1',
  };
  assert.equal((await call.recordingCallback(recordingUrl, completed)).status, 204);
  await call.hangup();
  assert.equal((await call.hangup()).status, 204);
  const state = await callState(t, id);
  const callbacks = await callbacksOf(t, id);
  const events = await deliveredEvents(t, org);
  assert.deepEqual(
    events.map((e) => e.event_type),
    ['call.recording.ready'],
  );
  assert.equal(t.fake.recordings.get(vm.recordingSid)!.downloads, 1);
  assert.deepEqual(callbacks.map((c) => [c.dedupe_key, c.outcome]).sort(), [
    [`recording:${vm.recordingSid}:completed`, 'applied'],
    [`status:${call.callSid}:completed`, 'applied'],
    [`voice:${call.callSid}`, 'applied'],
  ]);
  // Once more, everything: nothing changes.
  await call.recordingCallback(recordingUrl, completed);
  await call.hangup();
  assert.deepEqual(await callState(t, id), state);
  assert.deepEqual(await callbacksOf(t, id), callbacks);
  assert.equal(t.fake.recordings.get(vm.recordingSid)!.downloads, 1);
});

test('out-of-order callbacks are recorded as ignored and not applied', async () => {
  const org = await connectOrg(t);
  const audio = mp3(3);
  const call = await t.fake.inboundCall({ from: '+14155550151', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const vm = await call.recordVoicemail({ recording: audio.bytes, duration: 3 });
  await call.hangup();
  await deliveredEvents(t, org);
  // A late "in-progress" and "ringing" after "completed"; an "absent" after the audio is stored.
  assert.equal((await call.status('in-progress')).status, 204);
  assert.equal((await call.status('ringing')).status, 204);
  const absent = await call.recordingCallback(`${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording`, {
    RecordingSid: vm.recordingSid,
    RecordingStatus: 'absent',
  });
  assert.equal(absent.status, 204);
  const s = await callState(t, id);
  assert.equal(s.provider_call_status, 'completed');
  assert.equal(s.recording_state, 'available');
  assert.deepEqual((await callbacksOf(t, id)).map((c) => [c.dedupe_key, c.outcome, c.detail]).sort(), [
    [`recording:${vm.recordingSid}:absent`, 'ignored', 'the recording is already available'],
    [`recording:${vm.recordingSid}:completed`, 'applied', null],
    [`status:${call.callSid}:completed`, 'applied', null],
    [`status:${call.callSid}:in-progress`, 'ignored', 'after completed'],
    [`status:${call.callSid}:ringing`, 'ignored', 'after completed'],
    [`voice:${call.callSid}`, 'applied', null],
  ]);
  assert.deepEqual(
    (await deliveredEvents(t, org)).map((e) => e.event_type),
    ['call.recording.ready'],
  );
});

test('absent / failed recording: the recording is refused (409), and a later real recording still arrives', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550994' });
  const call = await t.fake.inboundCall({ from: '+14155550152', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const url = `${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording`;
  await call.recordingCallback(url, { RecordingSid: sid('RE'), RecordingStatus: 'absent' });
  assert.equal((await callState(t, id)).recording_state, 'refused');
  const r = await restRecordingUrl(t, org, id);
  assert.equal(r.status, 409);
  assert.equal(r.body.error.code, 'RECORDING_NOT_READY');
  // The caller got voicemail after all: its recording is stored.
  await call.dialUnanswered('no-answer');
  await call.recordVoicemail({ recording: mp3(2).bytes, duration: 2 });
  await deliveredEvents(t, org);
  assert.equal((await callState(t, id)).recording_state, 'available');
});

test('a RecordingUrl on another origin is never fetched: logged, the recording counts as refused', async () => {
  const org = await connectOrg(t);
  const evil = await startReceiver();
  const restBefore = t.fake.restRequests.length;
  try {
    const call = await t.fake.inboundCall({ from: '+14155550153', to: org.number, account: org.account });
    const id = await callIdOf(t, call.callSid);
    for (const recordingUrl of [
      `${evil.url.replace('/hooks', '')}/2010-04-01/Accounts/${org.account.accountSid}/Recordings/RE1`,
      `${t.fake.url.replace('http://', 'https://')}/2010-04-01/Accounts/${org.account.accountSid}/Recordings/RE2`,
      `${t.fake.url.replace('127.0.0.1', `user:pw@127.0.0.1`)}/2010-04-01/Accounts/x/Recordings/RE3`,
    ]) {
      const res = await call.recordingCallback(`${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording`, {
        RecordingSid: sid('RE'),
        RecordingUrl: recordingUrl,
        RecordingStatus: 'completed',
        RecordingChannels: '1',
      });
      assert.equal(res.status, 204);
    }
    await deliveredEvents(t, org);
    assert.equal(evil.requests.length, 0);
    assert.equal(t.fake.restRequests.length, restBefore);
    const s = await callState(t, id);
    assert.equal(s.recording_state, 'refused');
    assert.equal(s.recording_sid, null);
    const r = await restRecordingUrl(t, org, id);
    assert.equal(r.status, 409);
    assert.deepEqual(
      (await callbacksOf(t, id)).filter((c) => c.kind === 'recording').map((c) => [c.outcome, c.detail]),
      Array(3).fill(['ignored', 'RecordingUrl is not on the configured Twilio origin; not fetched']),
    );
  } finally {
    await evil.close();
  }
});

test("a signed callback about another organization's call answers 404 and changes nothing", async () => {
  const a = await connectOrg(t);
  const b = await connectOrg(t);
  const call = await t.fake.inboundCall({ from: '+14155550154', to: b.number, account: b.account });
  const id = await callIdOf(t, call.callSid);
  const before = await snapshot();
  const res = await t.fake.signedPost(
    `${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording`,
    {
      AccountSid: a.account.accountSid,
      CallSid: call.callSid,
      RecordingSid: sid('RE'),
      RecordingStatus: 'absent',
    },
    { account: a.account },
  );
  assert.equal(res.status, 404);
  assert.equal(JSON.parse(res.body).error.code, 'NOT_FOUND');
  // and a status callback for B's call signed by A is ignored
  await t.fake.signedPost(
    `${PUBLIC_BASE_URL}/telephony/twilio/status`,
    { AccountSid: a.account.accountSid, CallSid: call.callSid, CallStatus: 'completed' },
    { account: a.account },
  );
  assert.deepEqual(await snapshot(), before);
});

test('a signed-looking request that is not a Twilio form (JSON, oversize) answers 403 before its body is read', async () => {
  const org = await connectOrg(t);
  const before = await snapshot();
  const url = `${t.fake.serviceOrigin}/telephony/twilio/voice`;
  const params = {
    AccountSid: org.account.accountSid,
    CallSid: sid('CA'),
    To: org.number,
    From: '+14155550155',
  };
  const signature = getExpectedTwilioSignature(
    org.account.authToken,
    `${PUBLIC_BASE_URL}/telephony/twilio/voice`,
    params,
  );
  const json = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-twilio-signature': signature },
    body: JSON.stringify(params),
  });
  assert.equal(json.status, 403);
  assert.deepEqual(withoutRequestId(await json.text()), FORBIDDEN);
  const big = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body: `${new URLSearchParams(params).toString()}&Pad=${'x'.repeat(70_000)}`,
  });
  assert.equal(big.status, 403);
  assert.deepEqual(withoutRequestId(await big.text()), FORBIDDEN);
  assert.deepEqual(await snapshot(), before);
});

test('an unknown path under /telephony/twilio: unsigned 403, signed 404', async () => {
  const org = await connectOrg(t);
  const unsigned = await t.fake.signedPost(
    `${PUBLIC_BASE_URL}/telephony/twilio/nothing-here`,
    {},
    { signature: null },
  );
  assert.equal(unsigned.status, 403);
  const signed = await t.fake.signedPost(
    `${PUBLIC_BASE_URL}/telephony/twilio/nothing-here`,
    { AccountSid: org.account.accountSid },
    { account: org.account },
  );
  assert.equal(signed.status, 404);
  assert.equal(JSON.parse(signed.body).error.code, 'NOT_FOUND');
  const malformed = await fetch(`${t.fake.serviceOrigin}/telephony/twilio/calls/%/consent`, {
    method: 'POST',
  });
  assert.equal(malformed.status, 403);
  assert.deepEqual(withoutRequestId(await malformed.text()), FORBIDDEN);
});
