/**
 * Inbound test calls (issue 17; spec/api-v1-additions.md "Inbound test calls"): each scenario of the
 * simulated carrier played through the real pipeline for an organization without any telephony;
 * events signed at a receiver, the REST read and the recording-url answer. The route refuses a
 * live key (403 FORBIDDEN).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { captureStageHandlers } from '../../src/capture/jobs/stages/index.ts';
import { telephonyStageHandlers } from '../../src/capture/telephony/download-stage.ts';
import { startInboundTestCall } from '../../src/capture/telephony/simulated/carrier.ts';
import { TEST_CALLER_PHONE, TEST_SERVICE_NUMBER } from '../../src/domain/simulated-call.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { T0 } from '../helpers/deps.ts';
import { insertApiKey } from '../helpers/fixtures.ts';
import { bearer } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { call } from '../helpers/rest.ts';
import { playOut, type SimOrg, simEvents, simOrg, simRow } from '../helpers/simulated.ts';
import { startTelephony, type TelephonyEnv } from '../helpers/telephony.ts';

let t: TelephonyEnv;
let org: SimOrg;
before(async () => {
  t = await startTelephony();
  org = await simOrg(t);
});
after(async () => {
  await t?.close();
});

async function play(input: Parameters<typeof startInboundTestCall>[2]) {
  t.h.clock.set(T0);
  const id = await startInboundTestCall(t.h.deps, tenantScope(org.orgId, 'test'), input);
  const seconds = await playOut(t.h, id);
  assert.ok(seconds <= 10, `played in ${seconds} s of clock time`);
  const events = (await simEvents(t, org, id)).map((e) => ({
    type: e.event_type,
    data: e.data as Record<string, unknown>,
  }));
  return { id, events, types: events.map((e) => e.type).sort() };
}

const recordingUrl = (id: string) =>
  call(t.h, '/calls/{id}/recording-url', `/calls/${id}/recording-url`, org.apiKey);

test('conversation (default): two-sided, recorded, transcribed from the lead script, completed with a draft', async () => {
  const { id, events, types } = await play({ callerName: 'Jordan Lee' });
  assert.deepEqual(types, [
    'call.completed',
    'call.followup_email.drafted',
    'call.recording.ready',
    'call.transcribed',
  ]);
  const completed = events.find((e) => e.type === 'call.completed')!.data;
  assert.equal(completed.direction, 'inbound');
  assert.equal(completed.customer_phone_e164, TEST_CALLER_PHONE);
  assert.equal(completed.company_phone_e164, TEST_SERVICE_NUMBER);
  const analysis = completed.transcript_processed as Record<string, unknown>;
  assert.equal(analysis.client_address, '42 Harbor Street');
  assert.equal((await simRow(t, id)).recording_channels, 2);
  const rest = await call(t.h, '/calls/{id}', `/calls/${id}`, org.apiKey);
  assert.equal(rest.statusCode, 200);
  assert.equal((rest.json().data as Record<string, unknown>).caller_name, 'Jordan Lee');
  assert.equal((await recordingUrl(id)).statusCode, 200);
});

test('voicemail: one-sided, mono, completed without a follow-up draft', async () => {
  const { id, types } = await play({ scenario: 'voicemail' });
  assert.deepEqual(types, ['call.completed', 'call.recording.ready', 'call.transcribed']);
  const row = await simRow(t, id);
  assert.equal(row.voicemail, true);
  assert.equal(row.recording_channels, 1);
});

test('recording_refused: the caller refuses the recording: recording-url answers 409, never 410', async () => {
  const { id, types } = await play({ scenario: 'recording_refused' });
  // Like a Twilio call whose caller refused: no recording, so no transcript and no events.
  assert.deepEqual(types, []);
  assert.equal((await simRow(t, id)).recording_state, 'refused');
  const rec = await recordingUrl(id);
  assert.equal(rec.statusCode, 409);
});

test('anonymous: a withheld caller: customer_phone_e164 null', async () => {
  const { id, types, events } = await play({ scenario: 'anonymous' });
  assert.deepEqual(types, [
    'call.completed',
    'call.followup_email.drafted',
    'call.recording.ready',
    'call.transcribed',
  ]);
  assert.equal((await simRow(t, id)).customer_phone_e164, null);
  const completed = events.find((e) => e.type === 'call.completed')!.data;
  assert.equal(completed.customer_phone_e164, null);
});

test('a given script is the transcript', async () => {
  const script =
    'Customer: Hello, I would like a quote for painting my kitchen.\nAgent: Sure, we can do that next week.';
  const { events } = await play({ script, callerPhone: '+14155552671' });
  const transcribed = events.find((e) => e.type === 'call.transcribed')!.data;
  assert.equal(transcribed.transcript_original, script);
});

test('POST /test-helpers/inbound-calls: 403 FORBIDDEN for a live key, 403 without write.calls; nothing created', async () => {
  const { key } = await insertApiKey(t.h.db, {
    orgId: org.orgId,
    userId: org.ownerId,
    scopes: ['read.calls', 'write.calls'],
    environment: 'live',
  });
  const before = (await t.h.db.query('SELECT count(*)::int AS n FROM calls')).rows[0].n;
  const live = await t.h.app.inject({
    method: 'POST',
    url: '/api/v1/test-helpers/inbound-calls',
    headers: bearer(key),
    payload: { scenario: 'conversation' },
  });
  assert.equal(live.statusCode, 403);
  assert.equal(live.json().error.code, 'FORBIDDEN');
  assert.match(live.json().error.message, /^Test helpers take a test key/);
  const readOnly = await insertApiKey(t.h.db, {
    orgId: org.orgId,
    userId: org.ownerId,
    scopes: ['read.calls'],
    environment: 'test',
  });
  const noScope = await t.h.app.inject({
    method: 'POST',
    url: '/api/v1/test-helpers/inbound-calls',
    headers: bearer(readOnly.key),
    payload: {},
  });
  assert.equal(noScope.statusCode, 403);
  assert.equal((await t.h.db.query('SELECT count(*)::int AS n FROM calls')).rows[0].n, before);
});

test('refusals: an unusable caller_phone, a caller_phone with anonymous, a script without turns (422)', async () => {
  const scope = tenantScope(org.orgId, 'test');
  for (const [input, param] of [
    [{ callerPhone: 'not a phone' }, 'caller_phone'],
    [{ scenario: 'anonymous' as const, callerPhone: '+14155552671' }, 'caller_phone'],
    [{ script: 'hello there' }, 'script'],
    [{ script: 'Agent:\nCustomer:   ' }, 'script'],
  ] as const) {
    await assert.rejects(
      startInboundTestCall(t.h.deps, scope, input),
      (err: { code?: string; param?: string }) => err.code === 'VALIDATION_ERROR' && err.param === param,
    );
  }
});

test('durable: the progress is in the database; a step replayed after a crash changes nothing twice', async () => {
  t.h.clock.set(T0);
  const id = await startInboundTestCall(t.h.deps, tenantScope(org.orgId, 'test'), {});
  // the first steps, by one runner ("process")
  await settleJobs(t.h.deps, { handlers: { ...captureStageHandlers(), ...telephonyStageHandlers() } });
  t.h.clock.set(new Date(Date.parse(T0) + 4_000));
  await settleJobs(t.h.deps, { handlers: { ...captureStageHandlers(), ...telephonyStageHandlers() } });
  const mid = await t.h.db.query<{ step: number; state: string }>(
    `SELECT s.step, j.state FROM simulated_calls s JOIN processing_jobs j ON j.call_id = s.call_id AND j.stage = 'simulate'
      WHERE s.call_id = $1`,
    [id],
  );
  assert.deepEqual(mid.rows[0], { step: 3, state: 'waiting' });
  // A crash after the steps but before their progress was written: they are played again.
  await t.h.db.query('UPDATE simulated_calls SET step = 0 WHERE call_id = $1', [id]);
  await playOut(t.h, id);
  const { types } = { types: (await simEvents(t, org, id)).map((e) => e.event_type).sort() };
  assert.deepEqual(types, [
    'call.completed',
    'call.followup_email.drafted',
    'call.recording.ready',
    'call.transcribed',
  ]);
  const callbacks = await t.h.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM telephony_callbacks WHERE call_id = $1',
    [id],
  );
  // voice, status in-progress, dial-ended, status completed, recording: each once
  assert.equal(callbacks.rows[0]!.n, 5);
});

test('REST with a test key: POST /test-helpers/inbound-calls answers 201 with the Call, and the call plays', async () => {
  t.h.clock.set(T0);
  const res = await t.h.app.inject({
    method: 'POST',
    url: '/api/v1/test-helpers/inbound-calls',
    headers: bearer(org.apiKey),
    payload: { scenario: 'voicemail', caller_phone: '+14155552671', caller_name: 'Jordan Lee' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const view = res.json().data as Record<string, unknown>;
  assert.equal(view.direction, 'inbound');
  assert.equal(view.customer_phone_e164, '+14155552671');
  assert.equal(view.company_phone_e164, TEST_SERVICE_NUMBER);
  assert.equal(view.caller_name, 'Jordan Lee');
  const id = view.call_id as string;
  await playOut(t.h, id);
  const types = (await simEvents(t, org, id)).map((e) => e.event_type).sort();
  assert.deepEqual(types, ['call.completed', 'call.recording.ready', 'call.transcribed']);
  // the delivery says its world
  const delivered = t.receiver.requests.filter((r) => r.body.includes(id));
  assert.ok(delivered.length >= 3);
  for (const r of delivered) assert.equal(r.headers['service-environment'], 'test');
  // a live key of the organization does not see the test call
  const { key } = await insertApiKey(t.h.db, { orgId: org.orgId, userId: org.ownerId, environment: 'live' });
  const live = await call(t.h, '/calls/{id}', `/calls/${id}`, key);
  assert.equal(live.statusCode, 404);
});

test('REST with a test key: POST /calls to 0001 answers 201 ringing_agent, then call.failed customer_busy', async () => {
  t.h.clock.set(T0);
  const res = await t.h.app.inject({
    method: 'POST',
    url: '/api/v1/calls',
    headers: bearer(org.apiKey),
    payload: { customer_phone: '+14155550001' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const placed = res.json().data as Record<string, unknown>;
  assert.equal(placed.outbound_lifecycle, 'ringing_agent');
  assert.equal(placed.company_phone_e164, TEST_SERVICE_NUMBER);
  const id = placed.call_id as string;
  await playOut(t.h, id);
  const events = (await simEvents(t, org, id)).map((e) => [e.event_type, e.data]);
  assert.deepEqual(
    events.map((e) => e[0]),
    ['call.outbound.attempted', 'call.failed'],
  );
  assert.deepEqual(events[1]![1], {
    call_id: id,
    outbound_lifecycle: 'customer_no_answer',
    failure_reason: 'customer_busy',
  });
  assert.equal(t.fake.restRequests.length, 0);
});

test('callcap trigger with a test key, against the service: a real test call that emits the event', async () => {
  t.h.clock.set(T0);
  const port = (t.h.app.server.address() as AddressInfo).port;
  for (const [type, expected] of [
    ['call.completed', 'call.completed'],
    ['call.failed', 'call.failed'],
  ] as const) {
    const out = await cliInProcess(['trigger', type], {
      CALLCAP_API_URL: `http://127.0.0.1:${port}/api/v1`,
      CALLCAP_API_KEY: org.apiKey,
    });
    assert.equal(out.code, 0, out.stderr);
    const summary = JSON.parse(out.stdout) as { call_id: string; event_type: string };
    assert.equal(summary.event_type, type);
    await playOut(t.h, summary.call_id);
    const types = (await simEvents(t, org, summary.call_id)).map((e) => e.event_type);
    assert.ok(types.includes(expected), types.join(', '));
  }
});
