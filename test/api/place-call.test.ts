/**
 * POST /api/v1/calls (spec/api-v1-additions.md "Placing calls") on the live path, proven to the
 * Twilio REST call: the service's public listener on a real socket, the fake Twilio as its
 * TWILIO_API_BASE_URL. Defaults, 422 params, the per-organization cap, Idempotency-Key (replay,
 * reuse, bad keys, expiry and sweep, two requests at the same moment over real sockets), and the
 * carrier seam (a test-mode scope never reaches Twilio).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { deleteExpiredIdempotencyKeys } from '../../src/accounts/idempotency.ts';
import { placeCall } from '../../src/capture/telephony/place-call.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { periodicJobs } from '../../src/worker.ts';
import { T0 } from '../helpers/deps.ts';
import { insertApiKey, insertOrg } from '../helpers/fixtures.ts';
import { admin, bearer, errorBody, errorJson } from '../helpers/http.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';
import {
  AGENT_PHONE,
  CUSTOMER_E164,
  CUSTOMER_PHONE,
  type OutboundOrg,
  outboundOrg,
  PUBLIC_BASE_URL,
  serviceNumber,
} from '../helpers/outbound.ts';
import { rateHeaders } from '../helpers/rest.ts';
import { startTelephony, type TelephonyEnv } from '../helpers/telephony.ts';

const CAP = 4;
let t: TelephonyEnv;
before(async () => {
  t = await startTelephony({ PLACE_CALLS_PER_MINUTE: String(CAP) });
});
after(async () => {
  await t?.close();
});

interface Org extends OutboundOrg {
  writeKey: string;
}

/** An organization with telephony on the fake, one service number and a read.calls + write.calls key. */
async function org(): Promise<Org> {
  const o = await outboundOrg(t);
  const { key } = await insertApiKey(t.h.db, {
    orgId: o.orgId,
    userId: o.ownerId,
    scopes: ['read.calls', 'write.calls', 'read.contacts', 'write.contacts'],
    rateLimit: 100_000,
  });
  return { ...o, writeKey: key };
}

const post = (k: string, payload: unknown, headers: Record<string, string> = {}, url = '/calls') =>
  t.h.app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    headers: { ...bearer(k), ...headers },
    payload: payload as object,
  });

const dialled = () => t.fake.createdCalls.length;
const callsOf = async (orgId: string) =>
  (await t.h.db.query('SELECT count(*)::int AS n FROM calls WHERE organization_id = $1', [orgId])).rows[0]
    .n as number;

const callView = (o: Org, id: string, lifecycle = 'ringing_agent') => ({
  call_id: id,
  direction: 'outbound',
  caller_phone: o.number,
  customer_phone_e164: CUSTOMER_E164,
  customer_phone_national: '(415) 555-2671',
  company_phone_e164: o.number,
  app_url: `${PUBLIC_BASE_URL}/app/calls/${id}`,
  caller_name: null,
  duration: null,
  crm_status: 'new',
  review_status: null,
  outbound_lifecycle: lifecycle,
  transcript_processed: null,
  created_at: T0,
});

test('POST /calls answers 201 with the Call (outbound, ringing_agent) and asks Twilio to ring the agent', async () => {
  const o = await org();
  const before = dialled();
  const res = await post(o.writeKey, {
    customer_phone: CUSTOMER_PHONE,
    agent_user_id: o.ownerId,
    agent_phone: AGENT_PHONE,
    from_number: o.number,
  });
  assert.equal(res.statusCode, 201, res.body);
  const id = res.json().data.call_id;
  assert.deepEqual(res.json(), { success: true, data: callView(o, id), meta: { timestamp: T0 } });
  assert.equal(dialled(), before + 1);
  const asked = t.fake.createdCalls.at(-1)!;
  assert.equal(asked.accountSid, o.account.accountSid);
  assert.equal(asked.params.To, AGENT_PHONE);
  assert.equal(asked.params.From, o.number);
  assert.equal(asked.params.Url, `${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/outbound/answer`);
  assert.equal(
    asked.params.StatusCallback,
    `${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/outbound/agent-status`,
  );
  // Stored as a call the web app would have placed: the agent, the sid Twilio answered, normal recording.
  const row = (
    await t.h.db.query(
      'SELECT agent_user_id, agent_phone_e164, provider_call_sid, recording_mode FROM calls WHERE id = $1',
      [id],
    )
  ).rows[0];
  assert.deepEqual(row, {
    agent_user_id: o.ownerId,
    agent_phone_e164: AGENT_PHONE,
    provider_call_sid: asked.sid,
    recording_mode: 'normal',
  });
  // GET /calls/{id} reads the same call.
  const got = await t.h.app.inject({
    method: 'GET',
    url: `/api/v1/calls/${id}`,
    headers: bearer(o.writeKey),
  });
  assert.deepEqual(got.json().data, callView(o, id));
});

test('defaults: the key’s user, the phone that user last used, the only service number', async () => {
  const o = await org();
  const before = dialled();
  const first = await post(o.writeKey, { customer_phone: CUSTOMER_PHONE });
  assert.equal(first.statusCode, 422);
  assert.deepEqual(
    errorJson(first),
    errorBody(
      'VALIDATION_ERROR',
      'This agent has placed no call yet, so agent_phone cannot be defaulted; send agent_phone with the phone the service should ring first.',
      T0,
      'agent_phone',
    ),
  );
  assert.equal(dialled(), before);
  const withPhone = await post(o.writeKey, { customer_phone: CUSTOMER_PHONE, agent_phone: '+14155550177' });
  assert.equal(withPhone.statusCode, 201, withPhone.body);
  const bare = await post(o.writeKey, { customer_phone: '+14155552672', recording_mode: 'no_recording' });
  assert.equal(bare.statusCode, 201, bare.body);
  assert.equal(t.fake.createdCalls.at(-1)!.params.To, '+14155550177');
  assert.equal(t.fake.createdCalls.at(-1)!.params.From, o.number);
  const row = (
    await t.h.db.query('SELECT agent_user_id, recording_mode FROM calls WHERE id = $1', [
      bare.json().data.call_id,
    ])
  ).rows[0];
  assert.deepEqual(row, { agent_user_id: o.ownerId, recording_mode: 'no_recording' });

  // A second service number: from_number can no longer be defaulted.
  const second = serviceNumber();
  assert.equal(
    (await admin(t.h, 'POST', `/organizations/${o.orgId}/phone-numbers`, { number: second })).statusCode,
    201,
  );
  const two = await post(o.writeKey, { customer_phone: CUSTOMER_PHONE });
  assert.equal(two.statusCode, 422);
  assert.deepEqual(
    errorJson(two),
    errorBody(
      'VALIDATION_ERROR',
      `The organization has 2 service numbers (${o.number}, ${second}); send from_number with the one to call from.`,
      T0,
      'from_number',
    ),
  );
});

test('422 VALIDATION_ERROR names the field: numbers, agent, from_number, telephony not set up; nothing dialled', async () => {
  const o = await org();
  const stranger = await insertOrg(t.h.db, { country: 'US' });
  const base = { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE, from_number: o.number };
  const cases: [Record<string, unknown>, string, string][] = [
    [
      { customer_phone: '911' },
      'customer_phone "911" is not a usable phone number; send it in E.164 (+14155552671) or in US national format.',
      'customer_phone',
    ],
    [
      { agent_phone: 'anonymous' },
      'agent_phone "anonymous" is not a usable phone number; send it in E.164.',
      'agent_phone',
    ],
    [
      { agent_user_id: stranger.ownerId },
      `agent_user_id ${stranger.ownerId} is not a user of this organization.`,
      'agent_user_id',
    ],
    [
      { agent_user_id: 'someone' },
      'agent_user_id someone is not a user of this organization.',
      'agent_user_id',
    ],
    [
      { from_number: '+14155559999' },
      `from_number "+14155559999" is not a service number of this organization; add it with POST /admin/v1/organizations/${o.orgId}/phone-numbers.`,
      'from_number',
    ],
  ];
  const before = dialled();
  for (const [change, message, param] of cases) {
    const res = await post(o.writeKey, { ...base, ...change });
    assert.equal(res.statusCode, 422, JSON.stringify(change));
    assert.deepEqual(
      errorJson(res),
      errorBody('VALIDATION_ERROR', message, T0, param),
      JSON.stringify(change),
    );
  }
  // An organization without a telephony account.
  const bare = await insertOrg(t.h.db, { country: 'US' });
  const { key } = await insertApiKey(t.h.db, {
    orgId: bare.orgId,
    userId: bare.ownerId,
    scopes: ['write.calls'],
  });
  const none = await post(key, { customer_phone: CUSTOMER_PHONE });
  assert.equal(none.statusCode, 422);
  assert.deepEqual(
    errorJson(none),
    errorBody(
      'VALIDATION_ERROR',
      'Telephony is not set up for this organization (no Twilio account is connected), so it cannot place calls; the operator of the service connects one.',
      T0,
      'from_number',
    ),
  );
  const explicit = await post(key, { ...base, from_number: '+14155550100' });
  assert.equal(explicit.statusCode, 422);
  assert.equal(JSON.parse(explicit.body).error.param, 'from_number');
  assert.equal(dialled(), before);
  assert.equal(await callsOf(o.orgId), 0);
});

test('400 for unknown fields and wrong types, 403 without write.calls (before the body is read)', async () => {
  const o = await org();
  const cases: [unknown, string, string][] = [
    [
      { customer_phone: CUSTOMER_PHONE, to: 'x' },
      'Unknown field "to"; accepted fields: customer_phone, agent_user_id, agent_phone, from_number, recording_mode.',
      'to',
    ],
    [{ customer_phone: 4155552671 }, 'Field "customer_phone": must be a string.', 'customer_phone'],
    [{}, 'Field "customer_phone": is required (a string).', 'customer_phone'],
    [
      { customer_phone: CUSTOMER_PHONE, recording_mode: 'loud' },
      'Field "recording_mode": must be "normal" or "no_recording".',
      'recording_mode',
    ],
  ];
  for (const [payload, message, param] of cases) {
    const res = await post(o.writeKey, payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(errorJson(res), errorBody('BAD_REQUEST', message, T0, param));
  }
  const forbidden = await post(o.apiKey, { nonsense: true });
  assert.equal(forbidden.statusCode, 403);
  assert.deepEqual(
    errorJson(forbidden),
    errorBody(
      'FORBIDDEN',
      'This API key lacks the scope "write.calls" that POST /calls needs. Create a key with the "write.calls" scope in the web app on the integrations settings page.',
    ),
  );
  assert.equal(await callsOf(o.orgId), 0);
});

test('Twilio refusing the REST call: 201 with the call in failed_to_initiate (call.failed follows)', async () => {
  const o = await org();
  t.fake.failNextCreateCall(400, 21211, "The 'To' number is not a valid phone number.");
  const res = await post(o.writeKey, { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE });
  assert.equal(res.statusCode, 201, res.body);
  const id = res.json().data.call_id;
  assert.deepEqual(res.json().data, callView(o, id, 'failed_to_initiate'));
  const events = (
    await t.h.db.query<{ event_type: string }>(
      'SELECT event_type FROM events WHERE resource_id = $1 ORDER BY event_type',
      [id],
    )
  ).rows.map((r) => r.event_type);
  assert.deepEqual(events, ['call.failed', 'call.outbound.attempted']);
});

test(`an organization places at most ${CAP} calls a minute: then 429 RATE_LIMITED with the cap's headers; 422s take no slot`, async () => {
  const o = await org();
  t.h.clock.set('2026-06-15T10:05:20.000Z');
  try {
    const body = { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE };
    assert.equal((await post(o.writeKey, { ...body, customer_phone: '12' })).statusCode, 422);
    for (let i = 0; i < CAP; i++) assert.equal((await post(o.writeKey, body)).statusCode, 201);
    const before = dialled();
    const over = await post(o.writeKey, body);
    assert.equal(over.statusCode, 429);
    assert.deepEqual(rateHeaders(over), {
      limit: String(CAP),
      remaining: '0',
      reset: '2026-06-15T10:06:00.000Z',
      retryAfter: '40',
    });
    assert.deepEqual(
      errorJson(over),
      errorBody(
        'RATE_LIMITED',
        `This organization has placed ${CAP} calls in the current minute, the most POST /calls places per minute; retry after Retry-After seconds.`,
        '2026-06-15T10:05:20.000Z',
      ),
    );
    assert.equal(dialled(), before);
    // Another organization is not affected; the next minute opens new slots.
    const other = await org();
    assert.equal((await post(other.writeKey, body)).statusCode, 201);
    t.h.clock.set('2026-06-15T10:06:00.000Z');
    assert.equal((await post(o.writeKey, body)).statusCode, 201);
  } finally {
    t.h.clock.set(T0);
  }
});

test('Idempotency-Key: the same key and body replays the first answer and places no second call', async () => {
  const o = await org();
  const body = { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE };
  const key = { 'idempotency-key': 'crm-click-0001' };
  const first = await post(o.writeKey, body, key);
  assert.equal(first.statusCode, 201);
  assert.equal(first.headers['idempotent-replayed'], undefined);
  const before = dialled();
  t.h.clock.advance(60_000);
  try {
    // Same body, other spacing and key order; another key of the organization shares the Idempotency-Key.
    const { key: second } = await insertApiKey(t.h.db, {
      orgId: o.orgId,
      userId: o.ownerId,
      scopes: ['write.calls'],
    });
    const again = await post(
      second,
      `{"agent_phone": "${AGENT_PHONE}",   "customer_phone": "${CUSTOMER_PHONE}"}`,
      {
        ...key,
        'content-type': 'application/json',
      },
    );
    assert.equal(again.statusCode, 201);
    assert.equal(again.body, first.body, 'the first answer, byte for byte');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(dialled(), before);
    assert.equal(await callsOf(o.orgId), 1);

    const other = await post(o.writeKey, { ...body, customer_phone: '+14155552673' }, key);
    assert.equal(other.statusCode, 422);
    assert.deepEqual(
      errorJson(other),
      errorBody(
        'IDEMPOTENCY_KEY_REUSED',
        'The Idempotency-Key "crm-click-0001" was already used with a different request body for this operation in the last 24 hours; use a new key for a new request.',
        new Date(Date.parse(T0) + 60_000).toISOString(),
        'Idempotency-Key',
      ),
    );
    // The key is per operation: POST /contacts with it is a new request.
    const contact = await post(o.writeKey, { phone: '+14155552674' }, key, '/contacts');
    assert.equal(contact.statusCode, 201, contact.body);
    // Another organization's same key is its own.
    const elsewhere = await org();
    assert.equal((await post(elsewhere.writeKey, body, key)).statusCode, 201);
    assert.equal(dialled(), before + 1);
  } finally {
    t.h.clock.set(T0);
  }
});

test('Idempotency-Key: a refusal the operation answered (422) is replayed too; 429 is not kept', async () => {
  const o = await org();
  const key = { 'idempotency-key': 'k-422' };
  const bad = await post(o.writeKey, { customer_phone: CUSTOMER_PHONE }, key);
  assert.equal(bad.statusCode, 422);
  const again = await post(o.writeKey, { customer_phone: CUSTOMER_PHONE }, key);
  assert.equal(again.statusCode, 422);
  assert.equal(again.body, bad.body);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  // A 400 (the body failed validation) is not an answer of the operation: nothing is kept.
  const invalid = await post(o.writeKey, { customer_phone: 5 }, { 'idempotency-key': 'k-400' });
  assert.equal(invalid.statusCode, 400);
  const rows = await t.h.db.query(
    'SELECT key, status FROM idempotency_keys WHERE organization_id = $1 ORDER BY key',
    [o.orgId],
  );
  assert.deepEqual(rows.rows, [{ key: 'k-422', status: 422 }]);

  t.h.clock.set('2026-06-15T10:07:00.000Z');
  try {
    const body = { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE };
    for (let i = 0; i < CAP; i++) assert.equal((await post(o.writeKey, body)).statusCode, 201);
    const limited = await post(o.writeKey, body, { 'idempotency-key': 'k-429' });
    assert.equal(limited.statusCode, 429);
    t.h.clock.set('2026-06-15T10:08:00.000Z');
    const retried = await post(o.writeKey, body, { 'idempotency-key': 'k-429' });
    assert.equal(retried.statusCode, 201, 'the retry after the 429 runs');
    assert.equal(retried.headers['idempotent-replayed'], undefined);
  } finally {
    t.h.clock.set(T0);
  }
});

test('an empty, over-long or non-printable Idempotency-Key answers 400 BAD_REQUEST with error.param', async () => {
  const o = await org();
  const before = dialled();
  const cases: [string, string][] = [
    ['', 'is empty'],
    ['k'.repeat(256), 'is 256 characters long'],
    ['tab\there', 'contains a character that is not printable ASCII'],
    ['caf\u00e9', 'contains a character that is not printable ASCII'],
  ];
  for (const [value, why] of cases) {
    const res = await post(
      o.writeKey,
      { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE },
      { 'idempotency-key': value },
    );
    assert.equal(res.statusCode, 400, JSON.stringify(value));
    assert.deepEqual(
      errorJson(res),
      errorBody(
        'BAD_REQUEST',
        `The Idempotency-Key header ${why}; send 1 to 255 printable ASCII characters, e.g. a UUID.`,
        T0,
        'Idempotency-Key',
      ),
    );
  }
  const contact = await post(o.writeKey, { phone: '+14155552675' }, { 'idempotency-key': '' }, '/contacts');
  assert.equal(contact.statusCode, 400);
  assert.equal(JSON.parse(contact.body).error.param, 'Idempotency-Key');
  assert.equal(dialled(), before);
  const ok = await post(
    o.writeKey,
    { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE },
    { 'idempotency-key': 'k'.repeat(255) },
  );
  assert.equal(ok.statusCode, 201);
});

test('Idempotency-Key: kept 24 hours, then a new request; the worker job sweeps expired keys', async () => {
  const o = await org();
  const body = { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE };
  const key = { 'idempotency-key': 'day-old' };
  const first = await post(o.writeKey, body, key);
  try {
    t.h.clock.set(new Date(Date.parse(T0) + 24 * 3_600_000 - 1000));
    const replay = await post(o.writeKey, body, key);
    assert.equal(replay.body, first.body);
    t.h.clock.set(new Date(Date.parse(T0) + 24 * 3_600_000));
    const fresh = await post(o.writeKey, body, key);
    assert.equal(fresh.statusCode, 201);
    assert.notEqual(fresh.json().data.call_id, first.json().data.call_id);
    assert.equal(await callsOf(o.orgId), 2);

    assert.ok(
      periodicJobs(t.h.deps, { send: async () => undefined } as never).some(
        (j) => j.name === 'idempotency-keys',
      ),
    );
    const count = async () =>
      (
        await t.h.db.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE organization_id = $1', [
          o.orgId,
        ])
      ).rows[0].n;
    assert.equal(await count(), 1);
    t.h.clock.set(new Date(Date.parse(T0) + 48 * 3_600_000));
    assert.ok((await deleteExpiredIdempotencyKeys(t.h.db, t.h.clock.now())) >= 1);
    assert.equal(await count(), 0);
  } finally {
    t.h.clock.set(T0);
  }
});

test('two requests with the same Idempotency-Key at the same moment, over real sockets, place one call and create one contact', async () => {
  const o = await org();
  const origin = `http://127.0.0.1:${(t.h.app.server.address() as AddressInfo).port}`;
  const fire = (path: string, body: unknown, key: string) =>
    fetch(`${origin}/api/v1${path}`, {
      method: 'POST',
      headers: { ...bearer(o.writeKey), 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    }).then(async (r) => {
      const headers: Record<string, string> = {};
      r.headers.forEach((value, name) => {
        headers[name] = value;
      });
      return { statusCode: r.status, headers, body: await r.text() };
    });
  const before = dialled();
  const calls = await Promise.all(
    [1, 2, 3].map(() =>
      fire('/calls', { customer_phone: CUSTOMER_PHONE, agent_phone: AGENT_PHONE }, 'same-moment'),
    ),
  );
  for (const r of calls) {
    assert.equal(r.statusCode, 201, r.body);
    assertMatchesOpenApi('POST', '/calls', r);
    assert.equal(r.body, calls[0].body);
  }
  assert.equal(calls.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 2);
  assert.equal(dialled(), before + 1);
  assert.equal(await callsOf(o.orgId), 1);

  const contacts = await Promise.all(
    [1, 2].map(() => fire('/contacts', { phone: '+14155552676', first_name: 'Zoe' }, 'same-contact')),
  );
  for (const r of contacts) {
    assert.equal(r.statusCode, 201, r.body);
    assert.equal(r.body, contacts[0].body);
  }
  const n = (
    await t.h.db.query('SELECT count(*)::int AS n FROM contacts WHERE organization_id = $1', [o.orgId])
  ).rows[0].n;
  assert.equal(n, 1);
  const events = await t.h.db.query(
    "SELECT count(*)::int AS n FROM events WHERE event_type = 'contact.created' AND organization_id = $1",
    [o.orgId],
  );
  assert.equal(events.rows[0].n, 1);
});

test('the carrier seam: a test-mode scope goes to the simulated carrier and never reaches Twilio', async () => {
  const o = await org();
  const before = t.fake.restRequests.length;
  const placed = await placeCall(t.h.deps, tenantScope(o.orgId, 'test'), {
    agentUserId: o.ownerId,
    agentPhone: AGENT_PHONE,
    customerPhone: CUSTOMER_PHONE,
    fromNumber: o.number,
  });
  assert.equal(placed.outbound_lifecycle, 'ringing_agent');
  assert.equal(t.fake.restRequests.length, before);
  const { rows } = await t.h.db.query('SELECT telephony_provider FROM calls WHERE id = $1', [placed.call_id]);
  assert.equal(rows[0].telephony_provider, 'simulated');
});
