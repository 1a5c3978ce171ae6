/**
 * The simulated carrier's magic numbers (issue 17; docs/test-mode.md "Simulated carrier and magic
 * numbers"): placeCall with a test scope, for an organization without any telephony (no account,
 * no service number, an agent who never called), plays each outcome through the real pipeline in
 * a few seconds of clock time; the events arrive signed at a receiver, the REST read and the call
 * page show the call; nothing reaches Twilio.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { placeCall, resolveCallDefaults } from '../../src/capture/telephony/place-call.ts';
import { TEST_AGENT_PHONE, TEST_SERVICE_NUMBER } from '../../src/domain/simulated-call.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { cheapPasswordHash, PASSWORD } from '../helpers/app-api.ts';
import { T0 } from '../helpers/deps.ts';
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

async function place(customer: string) {
  t.h.clock.set(T0);
  const scope = tenantScope(org.orgId, 'test');
  // "No carrier needed": every default comes from the simulated carrier.
  const input = await resolveCallDefaults(t.h.deps, scope, org.ownerId, { customerPhone: customer });
  assert.deepEqual(
    { from: input.fromNumber, agent: input.agentPhone },
    { from: TEST_SERVICE_NUMBER, agent: TEST_AGENT_PHONE },
  );
  const placed = await placeCall(t.h.deps, scope, input);
  const seconds = await playOut(t.h, placed.call_id);
  assert.ok(seconds <= 10, `played in ${seconds} s of clock time`);
  const events = (await simEvents(t, org, placed.call_id)).map((e) => ({ type: e.event_type, data: e.data }));
  return { placed, id: placed.call_id, events };
}

const attempted = (id: string, customer: string, lifecycle: string, at: string, hasRecording = false) => ({
  type: 'call.outbound.attempted',
  data: {
    call_id: id,
    agent_user_id: org.ownerId,
    customer_phone: customer,
    customer_phone_e164: customer,
    outbound_lifecycle: lifecycle,
    duration: null,
    attempted_at: at,
    has_recording: hasRecording,
  },
});
const failed = (id: string, lifecycle: string, reason: string) => ({
  type: 'call.failed',
  data: { call_id: id, outbound_lifecycle: lifecycle, failure_reason: reason },
});
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();

test('0000: a connected 30 s conversation, recorded, transcribed from its script, analysed and completed', async () => {
  const { placed, id, events } = await place('+14155550000');
  assert.deepEqual(placed, { call_id: id, outbound_lifecycle: 'ringing_agent', failure_reason: null });
  assert.deepEqual(events.map((e) => e.type).sort(), [
    'call.completed',
    'call.followup_email.drafted',
    'call.outbound.attempted',
    'call.recording.ready',
    'call.transcribed',
  ]);
  assert.deepEqual(
    events.find((e) => e.type === 'call.outbound.attempted'),
    attempted(id, '+14155550000', 'completed', at(5), true),
  );
  const ready = events.find((e) => e.type === 'call.recording.ready')!.data as Record<string, unknown>;
  assert.ok(Math.abs((ready.duration as number) - 30) < 0.5, `duration ${ready.duration}`);
  const completed = events.find((e) => e.type === 'call.completed')!.data as Record<string, unknown>;
  assert.match(String(completed.transcript_original), /^Agent: Hi, this is Sam/);
  assert.equal(
    (completed.transcript_processed as Record<string, unknown>).client_address,
    '42 Harbor Street',
  );
  assert.deepEqual(await simRow(t, id), {
    outbound_lifecycle: 'completed',
    failure_reason: null,
    recording_state: 'available',
    telephony_provider: 'simulated',
    recording_channels: 2,
    processing_state: 'processed',
    voicemail: false,
    customer_phone_e164: '+14155550000',
    company_phone_e164: TEST_SERVICE_NUMBER,
    agent_phone_e164: TEST_AGENT_PHONE,
  });
  // The REST read, and the recording: a real two-channel MP3 of the script's length.
  const rest = await call(t.h, '/calls/{id}', `/calls/${id}`, org.apiKey);
  assert.equal(rest.statusCode, 200);
  const data = rest.json().data as Record<string, unknown>;
  assert.equal(data.outbound_lifecycle, 'completed');
  assert.equal(data.duration, ready.duration);
  const link = await call(t.h, '/calls/{id}/recording-url', `/calls/${id}/recording-url`, org.apiKey);
  assert.equal(link.statusCode, 200);
  const url = new URL((link.json().data as { url: string }).url);
  const mp3 = await t.h.app.inject({ url: url.pathname + url.search });
  assert.equal(mp3.statusCode, 200);
  assert.equal(mp3.headers['content-type'], 'audio/mpeg');
  assert.ok(mp3.rawPayload.length > 50_000, `${mp3.rawPayload.length} bytes`);
  // No request went to Twilio, and the simulated store is empty again.
  assert.equal(t.fake.restRequests.length, 0);
  assert.equal(await t.h.deps.store.size(`simulated/${org.orgId}/${id}.mp3`), null);
  // The call page shows the call.
  await t.h.db.query('UPDATE users SET password_hash = $1 WHERE id = $2', [cheapPasswordHash(), org.ownerId]);
  const { rows } = await t.h.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [
    org.ownerId,
  ]);
  const login = await t.h.app.inject({
    method: 'POST',
    url: '/app/api/login',
    payload: { email: rows[0]!.email, password: PASSWORD },
  });
  assert.equal(login.statusCode, 200, login.body);
  const cookie = String(login.headers['set-cookie']).split(';')[0]!;
  // the web app's test-mode switch: the session works in the test world
  await t.h.db.query("UPDATE sessions SET environment = 'test' WHERE user_id = $1", [org.ownerId]);
  const page = await t.h.app.inject({ url: `/app/calls/${id}`, headers: { cookie } });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /42 Harbor Street/);
  assert.match(page.body, /\(415\) 555-0000/);
});

test('0001: the customer is busy: customer_no_answer, call.failed customer_busy', async () => {
  const { id, events } = await place('+14155550001');
  assert.deepEqual(events, [
    attempted(id, '+14155550001', 'customer_no_answer', at(3)),
    failed(id, 'customer_no_answer', 'customer_busy'),
  ]);
  assert.equal((await simRow(t, id)).recording_state, 'not_captured');
  const link = await call(t.h, '/calls/{id}/recording-url', `/calls/${id}/recording-url`, org.apiKey);
  assert.equal(link.statusCode, 410);
});

test('0002: the agent never confirms: agent_no_answer, call.failed agent_no_confirmation', async () => {
  const { id, events } = await place('+442079460002');
  assert.deepEqual(events, [
    attempted(id, '+442079460002', 'agent_no_answer', at(2)),
    failed(id, 'agent_no_answer', 'agent_no_confirmation'),
  ]);
});

test('0003: the carrier refuses the call: failed_to_initiate, call.failed provider_rejected', async () => {
  const { placed, id, events } = await place('+14155550003');
  assert.deepEqual(placed, {
    call_id: id,
    outbound_lifecycle: 'failed_to_initiate',
    failure_reason: 'provider_rejected',
  });
  assert.deepEqual(events, [
    attempted(id, '+14155550003', 'failed_to_initiate', at(0)),
    failed(id, 'failed_to_initiate', 'provider_rejected'),
  ]);
});

test('0004: agent_only first, then a late callback repairs it to completed, and the recording follows', async () => {
  const { id, events } = await place('+14155550004');
  const lifecycle = events.filter((e) => e.type.startsWith('call.outbound.'));
  assert.deepEqual(lifecycle, [
    attempted(id, '+14155550004', 'agent_only', at(6)),
    {
      type: 'call.outbound.lifecycle_repaired',
      data: { call_id: id, previous_lifecycle: 'agent_only', new_lifecycle: 'completed', repaired_at: at(8) },
    },
    attempted(id, '+14155550004', 'completed', at(8), true),
  ]);
  assert.deepEqual(
    events
      .map((e) => e.type)
      .filter((e) => !e.startsWith('call.outbound.'))
      .sort(),
    ['call.completed', 'call.followup_email.drafted', 'call.recording.ready', 'call.transcribed'],
  );
});

test('any number not listed is connected; a from_number that is not the organization’s is refused', async () => {
  const { events } = await place('+14155552671');
  assert.ok(events.some((e) => e.type === 'call.completed'));
  await assert.rejects(
    placeCall(t.h.deps, tenantScope(org.orgId, 'test'), {
      agentUserId: org.ownerId,
      agentPhone: TEST_AGENT_PHONE,
      customerPhone: '+14155550000',
      fromNumber: '+14155559999',
    }),
    (err: { code?: string; param?: string }) =>
      err.code === 'VALIDATION_ERROR' && err.param === 'from_number',
  );
});

test('a tracker that matches the script: call.tracker.matched with the completion', async () => {
  await t.h.db.query(
    `INSERT INTO trackers (id, organization_id, name, terms, created_at) VALUES ($1, $2, 'Water heaters', $3, $4)`,
    [crypto.randomUUID(), org.orgId, ['water heater'], T0],
  );
  try {
    const { events } = await place('+14155550000');
    const matched = events.filter((e) => e.type === 'call.tracker.matched');
    assert.equal(matched.length, 1);
    const data = matched[0]!.data as { matches: { name: string; matched_terms: string[] }[] };
    assert.deepEqual(
      data.matches.map((m) => [m.name, m.matched_terms]),
      [['Water heaters', ['water heater']]],
    );
  } finally {
    await t.h.db.query('DELETE FROM trackers WHERE organization_id = $1', [org.orgId]);
  }
});

test('the web app in test mode: an organization without telephony calls from the test number (click-to-call)', async () => {
  t.h.clock.set(T0);
  await t.h.db.query('UPDATE users SET password_hash = $1 WHERE id = $2', [cheapPasswordHash(), org.ownerId]);
  const { rows } = await t.h.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [
    org.ownerId,
  ]);
  const login = await t.h.app.inject({
    method: 'POST',
    url: '/app/api/login',
    payload: { email: rows[0]!.email, password: PASSWORD },
  });
  assert.equal(login.statusCode, 200, login.body);
  const cookie = String(login.headers['set-cookie']).split(';')[0]!;
  const csrf = login.json().csrf_token as string;
  await t.h.db.query("UPDATE sessions SET environment = 'test' WHERE user_id = $1", [org.ownerId]);
  const form = await t.h.app.inject({ url: '/app/calls/new', headers: { cookie } });
  assert.equal(form.statusCode, 200);
  assert.match(form.body, new RegExp(`value="\\${TEST_AGENT_PHONE}"`));
  const res = await t.h.app.inject({
    method: 'POST',
    url: '/app/calls',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      _csrf: csrf,
      customer_phone: '+14155550002',
      agent_phone: TEST_AGENT_PHONE,
      from_number: TEST_SERVICE_NUMBER,
    }).toString(),
  });
  assert.equal(res.statusCode, 303, res.body);
  const id = /\/app\/calls\/([0-9a-f-]{36})\?done=calling/.exec(String(res.headers.location))![1]!;
  await playOut(t.h, id);
  const events = await simEvents(t, org, id);
  assert.deepEqual(
    events.map((e) => e.event_type),
    ['call.outbound.attempted', 'call.failed'],
  );
});
