/**
 * The NUL character (U+0000) in Twilio's callbacks (issue 15 item 3; src/http/nul-guard.ts and
 * src/http/public/telephony/twilio-auth.ts). A refusal would make Twilio play an application error
 * to a real caller, so the signature is checked over the parameters as they were sent, and then
 * the character is dropped before any handler reads them: the call goes on exactly as without it.
 *
 * Proved differentially, over every callback route of the route table (a route added later is
 * covered): two calls play the same steps, one with clean parameters, one with a NUL in every
 * parameter (CallSid, From, CallerName, CallStatus, Digits, RecordingUrl …); every answer of the
 * second is the first's (status and TwiML, the calls' own ids aside), and the stored calls are
 * the same. Callbacks are signed with the official twilio package (fake-twilio.ts) and sent over a
 * real socket.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OUTBOUND_CALLBACK_KINDS } from '../../src/capture/telephony/twilio/outbound-callbacks.ts';
import { T0 } from '../helpers/deps.ts';
import { type FakeCall, getExpectedTwilioSignature, parseTwiml, sid } from '../helpers/fake-twilio.ts';
import { settleDownloads } from '../helpers/jobs.ts';
import { mp3 } from '../helpers/mp3.ts';
import { outboundOrg, placeCall } from '../helpers/outbound.ts';
import { routesOf } from '../helpers/routes.ts';
import {
  callIdOf,
  connectOrg,
  PUBLIC_BASE_URL,
  startTelephony,
  type TelephonyEnv,
  type TelephonyOrg,
} from '../helpers/telephony.ts';

let t: TelephonyEnv;
let org: TelephonyOrg;

before(async () => {
  t = await startTelephony();
  org = await connectOrg(t, { ringTo: '+14155550150' });
});
after(() => t?.close());

/** A NUL put into a value (after its first character, so a prefix like "CA" or "+1" is split). */
const withNul = (s: string) => `${s.slice(0, 2)}\u0000${s.slice(2)}`;

const FORBIDDEN = {
  success: false,
  error: { code: 'FORBIDDEN', message: 'Missing or invalid X-Twilio-Signature, or unknown AccountSid.' },
  meta: { timestamp: T0 },
};
const withoutRequestId = (body: string) => {
  const b = JSON.parse(body) as { meta: { request_id?: string } };
  delete b.meta.request_id;
  return b;
};

/** The stored call, in the columns the callbacks write. */
async function stored(callId: string) {
  const { rows } = await t.h.db.query<Record<string, unknown>>(
    `SELECT direction, caller_phone, customer_phone, customer_phone_e164, company_phone_e164, caller_name,
            provider_call_status, recording_state, recording_consent, voicemail, recording_channels, duration,
            outbound_lifecycle, recording_sid IS NOT NULL AS has_recording_sid
       FROM calls WHERE id = $1`,
    [callId],
  );
  assert.ok(rows[0], `call ${callId}`);
  return rows[0];
}

test('a real inbound call with a NUL in CallerName and From: the same TwiML as without, stored without it', async () => {
  const clean = await t.fake.inboundCall({
    from: '+14155550142',
    to: org.number,
    callerName: 'Ada Lovelace',
    account: org.account,
  });
  const nul = await t.fake.inboundCall({
    from: withNul('+14155550142'),
    to: org.number,
    callerName: 'Ada\u0000 Lovelace',
    account: org.account,
  });
  assert.equal(clean.replies[0]!.status, 200, clean.replies[0]!.body);
  assert.equal(nul.replies[0]!.status, 200, nul.replies[0]!.body);
  assert.deepEqual(
    nul.verbs.map((v) => v.name),
    clean.verbs.map((v) => v.name),
  );
  const cleanId = await callIdOf(t, clean.callSid);
  const nulId = await callIdOf(t, nul.callSid);
  assert.equal(same(nul.replies[0]!.body, nulId, nul), same(clean.replies[0]!.body, cleanId, clean));
  // The rest of the call: the dialled agent answers, talks, hangs up (From carries the NUL throughout).
  const audio = mp3(2).bytes;
  const cleanEnd = await clean.answerDial({ recording: audio });
  const nulEnd = await nul.answerDial({ recording: audio });
  assert.equal(nulEnd.recordingReply?.status, cleanEnd.recordingReply?.status);
  assert.equal(nulEnd.actionReply.status, cleanEnd.actionReply.status);
  assert.equal(same(nulEnd.actionReply.body, nulId, nul), same(cleanEnd.actionReply.body, cleanId, clean));
  assert.equal((await nul.hangup()).status, (await clean.hangup()).status);

  await settleDownloads(t.h.deps);
  const row = await stored(nulId);
  assert.equal(row.caller_name, 'Ada Lovelace');
  assert.equal(row.customer_phone_e164, '+14155550142');
  assert.deepEqual(row, await stored(cleanId));
});

test('a NUL in CallSid: the call is answered and stored under the CallSid without it', async () => {
  const callSid = sid('CA');
  const reply = await t.fake.signedPost(
    t.fake.serviceUrl('/telephony/twilio/voice'),
    {
      AccountSid: org.account.accountSid,
      CallSid: withNul(callSid),
      From: '+14155550143',
      To: org.number,
      CallStatus: 'ringing',
      Direction: 'inbound',
      ApiVersion: '2010-04-01',
    },
    { account: org.account },
  );
  assert.equal(reply.status, 200, reply.body);
  assert.ok(parseTwiml(reply.body).length > 0, reply.body);
  const callId = await callIdOf(t, callSid);
  assert.equal((await stored(callId)).customer_phone_e164, '+14155550143');
});

test('an AccountSid with a NUL names no account: 403, like any unknown account', async () => {
  const url = t.fake.serviceUrl('/telephony/twilio/voice');
  const params = {
    AccountSid: withNul(org.account.accountSid),
    CallSid: sid('CA'),
    From: '+14155550144',
    To: org.number,
    CallStatus: 'ringing',
  };
  const reply = await t.fake.signedPost(url, params, { account: org.account });
  assert.equal(reply.status, 403, reply.body);
  assert.deepEqual(withoutRequestId(reply.body), FORBIDDEN);
});

test('the signature covers the parameters as sent: a NUL added after signing is 403, nothing stored', async () => {
  const url = t.fake.serviceUrl('/telephony/twilio/voice');
  const callSid = sid('CA');
  const signed = {
    AccountSid: org.account.accountSid,
    CallSid: callSid,
    From: '+14155550145',
    To: org.number,
    CallStatus: 'ringing',
  };
  const signature = getExpectedTwilioSignature(org.account.authToken, url, signed);
  const reply = await t.fake.signedPost(
    url,
    { ...signed, From: withNul(signed.From) },
    { account: org.account, signature },
  );
  assert.equal(reply.status, 403, reply.body);
  assert.deepEqual(withoutRequestId(reply.body), FORBIDDEN);
  const { rows } = await t.h.db.query('SELECT 1 FROM calls WHERE provider_call_sid = $1', [callSid]);
  assert.equal(rows.length, 0);
});

/**
 * A reply with this call's own ids (the call id in its URLs, the CallSid, the recording's URL)
 * written as placeholders, so two calls' replies can be compared.
 */
function same(body: string, callId: string, call: Pick<FakeCall, 'callSid'>, extra: string[] = []): string {
  let out = body.replaceAll(callId, ':call-id').replaceAll(call.callSid, ':call-sid');
  for (const s of extra) out = out.replaceAll(s, ':extra');
  return out;
}

interface Leg {
  callId: string;
  callSid: string;
  recording: { sid: string; url: string };
}

/** The parameters Twilio may send to any callback, for this leg; `nul` puts a NUL into every one but AccountSid. */
function paramsFor(leg: Leg, accountSid: string, nul: boolean): Record<string, string> {
  const p: Record<string, string> = {
    CallSid: leg.callSid,
    From: '+14155550142',
    To: org.number,
    CallerName: 'Ada Lovelace',
    Direction: 'inbound',
    ApiVersion: '2010-04-01',
    CallStatus: 'in-progress',
    CallDuration: '12',
    Digits: '1',
    DialCallSid: `${leg.callSid.slice(0, 30)}d`,
    DialCallStatus: 'completed',
    DialCallDuration: '10',
    RecordingSid: leg.recording.sid,
    RecordingUrl: leg.recording.url,
    RecordingStatus: 'completed',
    RecordingDuration: '10',
    RecordingChannels: '2',
    RecordingSource: 'DialVerb',
    SequenceNumber: '0',
  };
  if (nul) for (const k of Object.keys(p)) p[k] = withNul(p[k]!);
  return { AccountSid: accountSid, ...p };
}

test('every callback route: a signed callback with a NUL in every parameter answers as the same callback without', async () => {
  const callbackRoutes = routesOf(t.h.app).filter((r) => r.url.startsWith('/telephony/'));
  assert.ok(callbackRoutes.length >= 7, callbackRoutes.map((r) => r.url).join(' '));

  // Two inbound calls (clean, nul) and two outbound calls, each with a recording on the fake.
  const audio = mp3(2).bytes;
  const inbound = async (): Promise<Leg> => {
    const call = await t.fake.inboundCall({ from: '+14155550142', to: org.number, account: org.account });
    const recording = t.fake.addRecording({
      accountSid: org.account.accountSid,
      callSid: call.callSid,
      audio,
    });
    return { callId: await callIdOf(t, call.callSid), callSid: call.callSid, recording };
  };
  const out = await outboundOrg(t);
  const outbound = async (): Promise<Leg> => {
    const { res, callId, leg } = await placeCall(t, out);
    assert.equal(res.statusCode, 201, res.body);
    assert.ok(leg);
    const recording = t.fake.addRecording({
      accountSid: out.account.accountSid,
      callSid: leg.callSid,
      audio,
    });
    return { callId, callSid: leg.callSid, recording };
  };
  const pairs = {
    inbound: { clean: await inbound(), nul: await inbound(), accountSid: org.account.accountSid },
    outbound: { clean: await outbound(), nul: await outbound(), accountSid: out.account.accountSid },
  };

  const steps: { path: (callId: string) => string; pair: 'inbound' | 'outbound' }[] = [];
  for (const r of callbackRoutes) {
    if (r.url.includes(':kind')) {
      for (const kind of OUTBOUND_CALLBACK_KINDS) {
        steps.push({ pair: 'outbound', path: (id) => r.url.replace(':id', id).replace(':kind', kind) });
      }
    } else {
      steps.push({ pair: 'inbound', path: (id) => r.url.replace(':id', id) });
    }
  }

  const answers: string[] = [];
  for (const step of steps) {
    const pair = pairs[step.pair];
    const account = step.pair === 'inbound' ? org.account : out.account;
    const send = (leg: Leg, nul: boolean) =>
      t.fake.signedPost(`${PUBLIC_BASE_URL}${step.path(leg.callId)}`, paramsFor(leg, pair.accountSid, nul), {
        account,
      });
    const clean = await send(pair.clean, false);
    const nul = await send(pair.nul, true);
    const what = step.path(':id');
    assert.ok(nul.status < 500, `${what}: ${nul.status} ${nul.body}`);
    assert.equal(nul.status, clean.status, `${what}: ${nul.body} / ${clean.body}`);
    const text = (r: typeof nul, leg: Leg) =>
      same(r.body, leg.callId, leg, [leg.recording.url, leg.recording.sid, `${leg.callSid.slice(0, 30)}d`]);
    assert.equal(text(nul, pair.nul), text(clean, pair.clean), what);
    if ((nul.headers['content-type'] ?? '').includes('xml')) parseTwiml(nul.body);
    answers.push(`${what} ${nul.status}`);
  }
  console.log(`callbacks with a NUL in every parameter, answered as without: ${answers.join(', ')}`);

  await settleDownloads(t.h.deps);
  for (const pair of Object.values(pairs)) {
    assert.deepEqual(await stored(pair.nul.callId), await stored(pair.clean.callId));
  }
});
