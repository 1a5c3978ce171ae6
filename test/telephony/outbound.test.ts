/**
 * Outbound click-to-call end to end (issue 8): POST /admin/v1/organizations/{org}/outbound-calls →
 * the fake Twilio rings the agent → signed callbacks over a real socket drive outbound_lifecycle →
 * signed events at a receiver (verified with the SDK) and the REST read. Each call ends in one of
 * completed, agent_no_answer (no key press), customer_no_answer (busy), failed_to_initiate, and
 * agent_only repaired by a late callback.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { reconcileOutboundCalls } from '../../src/capture/telephony/twilio/outbound.ts';
import {
  AGENT_NO_KEY,
  AGENT_PROMPT,
  CONFIRM_TIMEOUT_SECONDS,
  CUSTOMER_RING_SECONDS,
} from '../../src/capture/telephony/twilio/outbound-twiml.ts';
import { startWorkers } from '../../src/worker.ts';
import { T0 } from '../helpers/deps.ts';
import { getExpectedTwilioSignature, validateRequest } from '../helpers/fake-twilio.ts';
import { errorBody, errorJson } from '../helpers/http.ts';
import { settleDownloads } from '../helpers/jobs.ts';
import { mp3 } from '../helpers/mp3.ts';
import {
  AGENT_PHONE,
  CUSTOMER_E164,
  CUSTOMER_PHONE,
  callbacksOf,
  callRow,
  eventsAtReceiver,
  type OutboundEnv,
  type OutboundOrg,
  outboundOrg,
  PUBLIC_BASE_URL,
  placeCall,
  recordingUrl,
  restCall,
  startOutbound,
} from '../helpers/outbound.ts';
import { waitFor } from '../helpers/wait.ts';

let t: OutboundEnv;
let org: OutboundOrg;
before(async () => {
  t = await startOutbound();
  org = await outboundOrg(t);
});
after(async () => {
  await t?.close();
});

const XML = '<?xml version="1.0" encoding="UTF-8"?>';
const EMPTY = `${XML}<Response/>`;
const HANGUP = `${XML}<Response><Hangup/></Response>`;
const urlOf = (id: string, kind: string) =>
  `${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/outbound/${kind}`;

const xmlReply = (body: string) => ({ status: 200, type: 'text/xml; charset=utf-8', body });
const replyOf = (r: { status: number; headers: Record<string, string>; body: string }) => ({
  status: r.status,
  type: r.headers['content-type'],
  body: r.body,
});

const attempted = (
  id: string,
  state: string,
  o: { duration?: number | null; hasRecording?: boolean } = {},
) => ({
  call_id: id,
  agent_user_id: org.ownerId,
  customer_phone: CUSTOMER_PHONE,
  customer_phone_e164: CUSTOMER_E164,
  outbound_lifecycle: state,
  duration: o.duration ?? null,
  attempted_at: T0,
  has_recording: o.hasRecording ?? false,
});

/** The Call object of the REST read for an outbound call of this file. */
const restView = (id: string, lifecycle: string, duration: number | null = null) => ({
  call_id: id,
  direction: 'outbound',
  caller_phone: org.number,
  customer_phone_e164: CUSTOMER_E164,
  customer_phone_national: '(415) 555-2671',
  company_phone_e164: org.number,
  app_url: `${PUBLIC_BASE_URL}/app/calls/${id}`,
  caller_name: null,
  duration,
  crm_status: 'new',
  review_status: null,
  outbound_lifecycle: lifecycle,
  transcript_processed: null,
  created_at: T0,
});

/** The signed events of a call at the receiver, as {type, data}, in arrival order. */
async function received(id: string) {
  return (await eventsAtReceiver(t, org, id)).map((e) => ({ type: e.event_type, data: e.data }));
}

test('completed: agent rings, answers, presses a key; the customer answers; the recording follows', async () => {
  const { res, callId: id, leg } = await placeCall(t, org);
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual(res.json(), { call_id: id, outbound_lifecycle: 'ringing_agent', failure_reason: null });
  assert.ok(leg);
  // What the service asked Twilio: ring the agent from the service number, our URLs for both.
  assert.deepEqual(leg.created.params, {
    To: AGENT_PHONE,
    From: org.number,
    Url: urlOf(id, 'answer'),
    Method: 'POST',
    StatusCallback: urlOf(id, 'agent-status'),
    StatusCallbackMethod: 'POST',
    StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
    Timeout: '30',
  });
  assert.equal(leg.created.accountSid, org.account.accountSid);
  assert.equal((await callRow(t, id)).provider_call_sid, leg.callSid);

  assert.deepEqual(replyOf(await leg.agentStatus('initiated')), xmlReply(EMPTY));
  assert.deepEqual(replyOf(await leg.agentStatus('ringing')), xmlReply(EMPTY));
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'ringing_agent');

  const gather =
    `${XML}<Response><Gather input="dtmf" numDigits="1" timeout="${CONFIRM_TIMEOUT_SECONDS}" action="${urlOf(id, 'confirm')}" method="POST" actionOnEmptyResult="true">` +
    `<Say>${AGENT_PROMPT}</Say></Gather><Say>${AGENT_NO_KEY}</Say><Hangup/></Response>`;
  assert.deepEqual(replyOf(await leg.answer()), xmlReply(gather));
  assert.deepEqual(replyOf(await leg.agentStatus('in-progress')), xmlReply(EMPTY));
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'agent_answered');

  const dial =
    `${XML}<Response><Dial callerId="${org.number}" timeout="${CUSTOMER_RING_SECONDS}" action="${urlOf(id, 'dial-ended')}" method="POST" record="record-from-answer-dual" recordingStatusCallback="${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording" recordingStatusCallbackMethod="POST" recordingStatusCallbackEvent="completed absent">` +
    `<Number statusCallback="${urlOf(id, 'customer-status')}" statusCallbackMethod="POST" statusCallbackEvent="initiated ringing answered completed">${CUSTOMER_E164}</Number></Dial></Response>`;
  assert.deepEqual(replyOf(await leg.pressDigits('1')), xmlReply(dial));
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'ringing_customer');

  await leg.customerStatus('initiated');
  await leg.customerStatus('ringing');
  assert.deepEqual(replyOf(await leg.customerStatus('in-progress')), xmlReply(EMPTY));
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'in_progress');
  assert.deepEqual(await received(id), [], 'nothing final yet');

  await leg.customerStatus('completed', { CallDuration: '42' });
  assert.deepEqual(replyOf(await leg.dialEnded('completed', 42)), xmlReply(HANGUP));
  await leg.agentStatus('completed', { CallDuration: '55' });
  const audio = mp3(42);
  const rec = await leg.recording({ audio: audio.bytes, duration: 42 });
  assert.equal(rec.reply.status, 204);
  await settleDownloads(t.h.deps);

  assert.deepEqual(await callRow(t, id), {
    outbound_lifecycle: 'completed',
    failure_reason: null,
    recording_state: 'available',
    provider_call_sid: leg.callSid,
    provider_customer_call_sid: leg.customerSid,
  });
  const events = await received(id);
  assert.deepEqual(events.map((e) => e.type).sort(), ['call.outbound.attempted', 'call.recording.ready']);
  assert.deepEqual(
    events.find((e) => e.type === 'call.outbound.attempted')!.data,
    attempted(id, 'completed', { hasRecording: true }),
  );
  const ready = events.find((e) => e.type === 'call.recording.ready')!.data as Record<string, unknown>;
  assert.deepEqual(Object.keys(ready).sort(), ['call_id', 'duration', 'recording_url']);
  assert.equal(ready.call_id, id);
  assert.equal(ready.duration, (await restCall(t, org, id)).json().data.duration);
  assert.match(
    String(ready.recording_url),
    new RegExp(`^${PUBLIC_BASE_URL}/api/v1/calls/${id}/recording\\.mp3\\?token=`),
  );

  const rest = await restCall(t, org, id);
  assert.equal(rest.statusCode, 200);
  assert.deepEqual(rest.json().data, restView(id, 'completed', ready.duration as number));
  assert.equal((await recordingUrl(t, org, id)).statusCode, 200);
});

test('agent_no_answer: the agent picks up but presses no key', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  await leg.agentStatus('initiated');
  await leg.agentStatus('ringing');
  await leg.answer();
  await leg.agentStatus('in-progress');
  assert.deepEqual(
    replyOf(await leg.noKey()),
    xmlReply(`${XML}<Response><Say>${AGENT_NO_KEY}</Say><Hangup/></Response>`),
  );
  await leg.agentStatus('completed', { CallDuration: '12' });

  assert.deepEqual(await callRow(t, id), {
    outbound_lifecycle: 'agent_no_answer',
    failure_reason: 'agent_no_confirmation',
    recording_state: 'not_captured',
    provider_call_sid: leg.callSid,
    provider_customer_call_sid: null,
  });
  const events = await received(id);
  assert.deepEqual(events, [
    { type: 'call.outbound.attempted', data: attempted(id, 'agent_no_answer') },
    {
      type: 'call.failed',
      data: { call_id: id, outbound_lifecycle: 'agent_no_answer', failure_reason: 'agent_no_confirmation' },
    },
  ]);
  const rest = await restCall(t, org, id);
  assert.deepEqual(rest.json().data, restView(id, 'agent_no_answer'));
  const rec = await recordingUrl(t, org, id);
  assert.equal(rec.statusCode, 410);
  assert.equal(rec.json().error.code, 'RECORDING_NOT_CAPTURED');
});

test('customer_no_answer: the customer line is busy', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  await leg.agentStatus('ringing');
  await leg.answer();
  await leg.pressDigits('5');
  await leg.customerStatus('initiated');
  await leg.customerStatus('ringing');
  assert.deepEqual(replyOf(await leg.customerStatus('busy')), xmlReply(EMPTY));
  assert.deepEqual(replyOf(await leg.dialEnded('busy')), xmlReply(HANGUP));
  await leg.agentStatus('completed', { CallDuration: '20' });
  // Twilio reports the recording of a dial nobody answered as absent.
  assert.equal((await leg.recording({ status: 'absent' })).reply.status, 204);

  assert.deepEqual(await callRow(t, id), {
    outbound_lifecycle: 'customer_no_answer',
    failure_reason: 'customer_busy',
    recording_state: 'not_captured',
    provider_call_sid: leg.callSid,
    provider_customer_call_sid: leg.customerSid,
  });
  assert.deepEqual(await received(id), [
    { type: 'call.outbound.attempted', data: attempted(id, 'customer_no_answer') },
    {
      type: 'call.failed',
      data: { call_id: id, outbound_lifecycle: 'customer_no_answer', failure_reason: 'customer_busy' },
    },
  ]);
  assert.deepEqual((await restCall(t, org, id)).json().data, restView(id, 'customer_no_answer'));
  const rec = await recordingUrl(t, org, id);
  assert.equal(rec.statusCode, 410);
  assert.equal(rec.json().error.code, 'RECORDING_NOT_CAPTURED');
});

test('failed_to_initiate: Twilio refuses the REST call; the call exists, failed, and nothing rings', async () => {
  t.fake.failNextCreateCall(400, 21211, "The 'To' number +14155550142 is not a valid phone number.");
  const { res, callId: id, leg } = await placeCall(t, org);
  assert.equal(leg, null);
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual(res.json(), {
    call_id: id,
    outbound_lifecycle: 'failed_to_initiate',
    failure_reason: 'provider_rejected',
  });
  assert.deepEqual(await callRow(t, id), {
    outbound_lifecycle: 'failed_to_initiate',
    failure_reason: 'provider_rejected',
    recording_state: 'not_captured',
    provider_call_sid: null,
    provider_customer_call_sid: null,
  });
  assert.deepEqual(await received(id), [
    { type: 'call.outbound.attempted', data: attempted(id, 'failed_to_initiate') },
    {
      type: 'call.failed',
      data: { call_id: id, outbound_lifecycle: 'failed_to_initiate', failure_reason: 'provider_rejected' },
    },
  ]);
  assert.deepEqual((await restCall(t, org, id)).json().data, restView(id, 'failed_to_initiate'));
  assert.equal((await recordingUrl(t, org, id)).json().error.code, 'RECORDING_NOT_CAPTURED');
});

test('failed_to_initiate reasons: 401 is provider_auth_failed, 503 is provider_unavailable', async () => {
  t.fake.failNextCreateCall(401, 20003, 'Authenticate');
  const a = await placeCall(t, org);
  assert.deepEqual(a.res.json(), {
    call_id: a.callId,
    outbound_lifecycle: 'failed_to_initiate',
    failure_reason: 'provider_auth_failed',
  });
  t.fake.failNextCreateCall(503, 20500, 'Service unavailable');
  const b = await placeCall(t, org);
  assert.deepEqual(b.res.json(), {
    call_id: b.callId,
    outbound_lifecycle: 'failed_to_initiate',
    failure_reason: 'provider_unavailable',
  });
});

test('agent_only: the agent leg ends without the customer leg’s word; a late callback repairs it', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  await leg.agentStatus('ringing');
  await leg.answer();
  await leg.pressDigits('1');
  await leg.customerStatus('ringing');
  // The agent leg is over; neither the dial's end nor the customer leg's final status arrived.
  await leg.agentStatus('completed', { CallDuration: '61' });
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'reconciliation_required');
  assert.deepEqual(await received(id), []);

  // Within the grace period the periodic check leaves it alone.
  t.h.clock.advance(9 * 60_000);
  await reconcileOutboundCalls(t.h.deps);
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'reconciliation_required');
  t.h.clock.advance(60_000 + 1);
  const settledAt = t.h.clock.now().toISOString();
  assert.deepEqual(await reconcileOutboundCalls(t.h.deps), { settled: 1 });
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'agent_only');
  assert.deepEqual(await received(id), [
    { type: 'call.outbound.attempted', data: { ...attempted(id, 'agent_only'), attempted_at: settledAt } },
  ]);
  assert.deepEqual((await restCall(t, org, id)).json().data, restView(id, 'agent_only'));
  // agent_only is not "without a conversation": the recording may still come (409, not 410).
  assert.equal((await recordingUrl(t, org, id)).json().error.code, 'RECORDING_NOT_READY');

  // A day later the customer leg's completed status arrives: the customer had answered.
  t.h.clock.advance(24 * 3_600_000);
  const repairedAt = t.h.clock.now().toISOString();
  assert.deepEqual(replyOf(await leg.customerStatus('completed', { CallDuration: '48' })), xmlReply(EMPTY));
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'completed');
  const events = await received(id);
  assert.deepEqual(events.slice(1), [
    {
      type: 'call.outbound.lifecycle_repaired',
      data: {
        call_id: id,
        previous_lifecycle: 'agent_only',
        new_lifecycle: 'completed',
        repaired_at: repairedAt,
      },
    },
    {
      type: 'call.outbound.attempted',
      data: { ...attempted(id, 'completed', { hasRecording: true }), attempted_at: repairedAt },
    },
  ]);
  assert.deepEqual((await restCall(t, org, id)).json().data, restView(id, 'completed'));
  // The dial's end arriving later still is consistent and changes nothing.
  await leg.dialEnded('completed', 48);
  assert.equal((await received(id)).length, 3);
  t.h.clock.set(T0);
});

test('every callback sent twice, and all of them again late and in reverse: nothing changes twice', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  // Every request the fake sends, to replay it byte for byte later.
  const sent: { url: string; params: Record<string, string> }[] = [];
  const post = t.fake.signedPost;
  t.fake.signedPost = (url, params, o) => {
    sent.push({ url, params });
    return post(url, params, o);
  };
  try {
    const steps: [string, () => Promise<{ status: number; body: string }>][] = [
      ['agent ringing', () => leg.agentStatus('ringing')],
      ['answer', () => leg.answer()],
      ['agent in-progress', () => leg.agentStatus('in-progress')],
      ['press', () => leg.pressDigits('1')],
      ['customer ringing', () => leg.customerStatus('ringing')],
      ['customer in-progress', () => leg.customerStatus('in-progress')],
      ['customer completed', () => leg.customerStatus('completed', { CallDuration: '30' })],
      ['dial-ended', () => leg.dialEnded('completed', 30)],
      ['agent completed', () => leg.agentStatus('completed', { CallDuration: '40' })],
    ];
    for (const [name, step] of steps) {
      const n = sent.length;
      const first = await step();
      // Twilio retrying the same request at once: the same answer (the TwiML of the stored state).
      const again = await post(sent[n].url, sent[n].params, { account: org.account });
      assert.equal(first.status, 200, name);
      assert.deepEqual([again.status, again.body], [first.status, first.body], name);
    }
    const row = await callRow(t, id);
    const events = await received(id);
    const callbacks = await callbacksOf(t, id);
    assert.equal(row.outbound_lifecycle, 'completed');
    assert.deepEqual(
      events.map((e) => e.type),
      ['call.outbound.attempted'],
    );
    assert.equal(callbacks.length, steps.length, 'each callback recorded once');
    assert.deepEqual(
      callbacks.filter((c) => c.outcome === 'ignored'),
      [],
    );
    // The whole series once more, late and in reverse order.
    for (const r of [...sent].reverse()) {
      assert.equal((await post(r.url, r.params, { account: org.account })).status, 200);
    }
    assert.deepEqual(await callRow(t, id), row);
    assert.deepEqual(await received(id), events);
    assert.deepEqual(await callbacksOf(t, id), callbacks);
  } finally {
    t.fake.signedPost = post;
  }
});

test('out of order: later stages fast-forward, earlier ones arriving late are logged and ignored', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  // The answer TwiML request comes first; the press and then the customer leg's answer arrive
  // before the agent leg's own ringing and in-progress callbacks.
  await leg.answer();
  await leg.pressDigits('2');
  await leg.customerStatus('in-progress');
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'in_progress');
  await leg.agentStatus('ringing');
  await leg.agentStatus('in-progress');
  await leg.customerStatus('ringing');
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'in_progress');
  // The dial's end before the customer leg's completed status: completed once.
  await leg.dialEnded('completed', 25);
  await leg.customerStatus('completed', { CallDuration: '25' });
  // A busy report after completion is impossible: logged, never applied.
  await leg.customerStatus('busy');
  assert.deepEqual(await callRow(t, id), {
    outbound_lifecycle: 'completed',
    failure_reason: null,
    recording_state: 'pending',
    provider_call_sid: leg.callSid,
    provider_customer_call_sid: leg.customerSid,
  });
  assert.deepEqual(await received(id), [
    { type: 'call.outbound.attempted', data: attempted(id, 'completed', { hasRecording: true }) },
  ]);
  // The recording of the dial is reported absent: an outbound recording is then never captured (410).
  assert.equal((await leg.recording({ status: 'absent' })).reply.status, 204);
  assert.equal((await callRow(t, id)).recording_state, 'not_captured');
  const rec = await recordingUrl(t, org, id);
  assert.equal(rec.statusCode, 410);
  assert.equal(rec.json().error.code, 'RECORDING_NOT_CAPTURED');
  const ignored = (await callbacksOf(t, id)).filter((c) => c.outcome === 'ignored');
  assert.deepEqual(ignored.map((c) => c.detail).sort(), [
    'agent_answered reported for an outbound call in in_progress would move it to agent_answered: an earlier stage reported late.',
    'agent_ringing reported for an outbound call in in_progress would move it to ringing_agent: an earlier stage reported late.',
    'customer_ringing reported for an outbound call in in_progress would move it to ringing_customer: an earlier stage reported late.',
    'customer_unreached reported for an outbound call in completed would move it to customer_no_answer: not a move of the lifecycle.',
  ]);
});

test('a callback naming another leg is ignored; another account’s signature on the URL is a 404', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  await leg.answer();
  const stranger = await t.fake.signedPost(
    urlOf(id, 'agent-status'),
    {
      ...leg.base({ CallStatus: 'busy' }),
      CallSid: 'CA00000000000000000000000000000000',
    },
    { account: org.account },
  );
  assert.equal(stranger.status, 200);
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'agent_answered');
  const other = await outboundOrg(t);
  const foreign = await t.fake.signedPost(
    urlOf(id, 'agent-status'),
    { ...leg.base({ CallStatus: 'busy' }), AccountSid: other.account.accountSid },
    { account: other.account },
  );
  assert.equal(foreign.status, 404);
  assert.equal(JSON.parse(foreign.body).error.code, 'NOT_FOUND');
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'agent_answered');
  assert.deepEqual(
    (await callbacksOf(t, id)).map((c) => [c.kind, c.outcome, c.detail]),
    [
      [
        'outbound-agent-status',
        'ignored',
        "agent-status callback for CA00000000000000000000000000000000, not the call's agent leg.",
      ],
      ['outbound-answer', 'applied', 'agent_answered'],
    ].sort(),
  );
});

test('a tampered or unsigned callback answers 403 and changes nothing', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  await leg.agentStatus('ringing');
  const before = { row: await callRow(t, id), callbacks: await callbacksOf(t, id) };
  const url = urlOf(id, 'agent-status');
  const params = leg.base({ CallStatus: 'busy' });
  const good = getExpectedTwilioSignature(org.account.authToken, url, params);
  // The official package agrees that the tampered parameters no longer match the signature.
  const tampered = { ...params, CallStatus: 'no-answer' };
  assert.equal(validateRequest(org.account.authToken, good, url, params), true);
  assert.equal(validateRequest(org.account.authToken, good, url, tampered), false);
  for (const [what, body, signature] of [
    ['tampered parameters', tampered, good],
    ['a signature with another token', params, getExpectedTwilioSignature('0'.repeat(32), url, params)],
    ['no signature', params, null],
  ] as const) {
    const res = await t.fake.signedPost(url, body, { account: org.account, signature });
    assert.equal(res.status, 403, what);
    assert.deepEqual(JSON.parse(res.body).error.code, 'FORBIDDEN', what);
  }
  assert.deepEqual({ row: await callRow(t, id), callbacks: await callbacksOf(t, id) }, before);
  assert.deepEqual(await received(id), []);
});

test('placing a call: refusals store nothing and ask Twilio nothing', async () => {
  const calls = async () => (await t.h.db.query('SELECT count(*)::int AS n FROM calls')).rows[0].n;
  const n = await calls();
  const asked = t.fake.createdCalls.length;
  const cases: [Record<string, unknown>, number, string, string, string][] = [
    [
      { from_number: '+14155559999' },
      422,
      'VALIDATION_ERROR',
      `from_number "+14155559999" is not a service number of this organization; add it with POST /admin/v1/organizations/${org.orgId}/phone-numbers.`,
      'from_number',
    ],
    [
      { customer_phone: 'call me' },
      422,
      'VALIDATION_ERROR',
      'customer_phone "call me" is not a usable phone number; send it in E.164 (+14155552671) or in US national format.',
      'customer_phone',
    ],
    [
      { agent_phone: '12' },
      422,
      'VALIDATION_ERROR',
      'agent_phone "12" is not a usable phone number; send it in E.164.',
      'agent_phone',
    ],
    [
      { agent_user_id: '00000000-0000-4000-8000-000000000000' },
      422,
      'VALIDATION_ERROR',
      'agent_user_id 00000000-0000-4000-8000-000000000000 is not a user of this organization.',
      'agent_user_id',
    ],
  ];
  for (const [body, status, code, message, param] of cases) {
    const { res } = await placeCall(t, org, body);
    assert.equal(res.statusCode, status, JSON.stringify(body));
    assert.deepEqual(errorJson(res), errorBody(code, message, T0, param), JSON.stringify(body));
  }
  const { res: extra } = await placeCall(t, org, { ring_to: '+1' });
  assert.equal(extra.statusCode, 400);
  assert.equal(extra.json().error.code, 'BAD_REQUEST');
  // An organization without a telephony account (its number cannot be the other org's either).
  const { insertOrg } = await import('../helpers/fixtures.ts');
  const bare = await insertOrg(t.h.db, { country: 'US' });
  const res = await t.h.operator.inject({
    method: 'POST',
    url: `/admin/v1/organizations/${bare.orgId}/outbound-calls`,
    headers: { authorization: `Bearer ${t.h.deps.adminToken}` },
    payload: {
      agent_user_id: bare.ownerId,
      agent_phone: AGENT_PHONE,
      customer_phone: CUSTOMER_PHONE,
      from_number: org.number,
    },
  });
  assert.equal(res.statusCode, 422);
  assert.match(res.json().error.message, /is not a service number of this organization/);
  assert.equal(await calls(), n);
  assert.equal(t.fake.createdCalls.length, asked);
});

test('no_recording: the dial carries no recording and the recording is never captured', async () => {
  const { callId: id, leg } = await placeCall(t, org, { recording_mode: 'no_recording' });
  assert.ok(leg);
  await leg.answer();
  const reply = await leg.pressDigits('1');
  assert.doesNotMatch(reply.body, /record/i);
  await leg.customerStatus('in-progress');
  await leg.dialEnded('completed', 30);
  assert.equal((await callRow(t, id)).recording_state, 'not_captured');
  assert.deepEqual(await received(id), [
    { type: 'call.outbound.attempted', data: attempted(id, 'completed', { hasRecording: false }) },
  ]);
  assert.equal((await recordingUrl(t, org, id)).json().error.code, 'RECORDING_NOT_CAPTURED');
});

test('callbacks that stop before the key press: after 5 hours agent_no_answer / no_final_status', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  await leg.agentStatus('ringing');
  t.h.clock.advance(5 * 3_600_000 + 1);
  const at = t.h.clock.now().toISOString();
  await reconcileOutboundCalls(t.h.deps);
  assert.equal((await callRow(t, id)).failure_reason, 'no_final_status');
  assert.deepEqual(await received(id), [
    { type: 'call.outbound.attempted', data: { ...attempted(id, 'agent_no_answer'), attempted_at: at } },
    {
      type: 'call.failed',
      data: { call_id: id, outbound_lifecycle: 'agent_no_answer', failure_reason: 'no_final_status' },
    },
  ]);
  t.h.clock.set(T0);
});

test('agent_only repaired by the late recording of the dial (it records from answer)', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  await leg.answer();
  await leg.pressDigits('1');
  await leg.agentStatus('completed', { CallDuration: '70' });
  t.h.clock.advance(10 * 60_000 + 1);
  const settledAt = t.h.clock.now().toISOString();
  await reconcileOutboundCalls(t.h.deps);
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'agent_only');
  t.h.clock.advance(60_000);
  const repairedAt = t.h.clock.now().toISOString();
  const audio = mp3(20);
  assert.equal((await leg.recording({ audio: audio.bytes, duration: 20 })).reply.status, 204);
  await settleDownloads(t.h.deps);
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'completed');
  assert.equal((await callRow(t, id)).recording_state, 'available');
  const events = await received(id);
  const ready = events.find((e) => e.type === 'call.recording.ready');
  assert.ok(ready);
  assert.deepEqual(
    events.filter((e) => e.type !== 'call.recording.ready'),
    [
      { type: 'call.outbound.attempted', data: { ...attempted(id, 'agent_only'), attempted_at: settledAt } },
      {
        type: 'call.outbound.lifecycle_repaired',
        data: {
          call_id: id,
          previous_lifecycle: 'agent_only',
          new_lifecycle: 'completed',
          repaired_at: repairedAt,
        },
      },
      {
        type: 'call.outbound.attempted',
        data: { ...attempted(id, 'completed', { hasRecording: true }), attempted_at: repairedAt },
      },
    ],
  );
  const rest = (await restCall(t, org, id)).json().data;
  assert.equal(rest.outbound_lifecycle, 'completed');
  assert.equal(rest.duration, (ready.data as { duration: number }).duration);
  t.h.clock.set(T0);
});

test('the worker role runs outbound-reconcile every minute: reconciliation_required becomes agent_only', async () => {
  const { callId: id, leg } = await placeCall(t, org);
  assert.ok(leg);
  await leg.answer();
  await leg.pressDigits('1');
  await leg.agentStatus('completed', { CallDuration: '30' });
  assert.equal((await callRow(t, id)).outbound_lifecycle, 'reconciliation_required');
  const stop = await startWorkers(t.h.deps, { tickMs: 5 });
  try {
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await callRow(t, id)).outbound_lifecycle, 'reconciliation_required', 'within the grace');
    t.h.clock.advance(10 * 60_000 + 1);
    await waitFor(
      async () => (await callRow(t, id)).outbound_lifecycle === 'agent_only',
      'the outbound-reconcile job to settle the call',
    );
  } finally {
    await stop();
    t.h.clock.set(T0);
  }
});
