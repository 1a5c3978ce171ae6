import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { buildOperatorApp } from '../../src/http/operator/app.ts';
import { type Logger, safeRequestSerializer } from '../../src/log.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, errorBody, errorJson } from '../helpers/http.ts';

/** PUT …/telephony, POST …/phone-numbers and the consent settings on PATCH /organizations/{org}. */
let h: Harness;
const logLines: string[] = [];
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

const SID = `AC${'a1'.repeat(16)}`;
const TOKEN = 'f00dfeedcafebabe0123456789abcdef';
let n = 0;

async function org() {
  const res = await admin(h, 'POST', '/organizations', {
    name: 'Acme',
    owner_email: `o${++n}@acme.example`,
    owner_password: 'correct horse battery',
  });
  return res.json().organization_id as string;
}

test('PUT /telephony stores the account with its token encrypted; the answer never echoes the token', async () => {
  const id = await org();
  const res = await admin(h, 'PUT', `/organizations/${id}/telephony`, {
    provider: 'twilio',
    account_sid: SID,
    auth_token: TOKEN,
  });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { organization_id: id, provider: 'twilio', account_sid: SID });
  assert.ok(!res.body.includes(TOKEN));
  const { rows } = await h.db.query<{ auth_token_ciphertext: string }>(
    'SELECT auth_token_ciphertext FROM telephony_accounts WHERE organization_id = $1',
    [id],
  );
  assert.ok(!rows[0]!.auth_token_ciphertext.includes(TOKEN));
  // Replacing it (a rotated token) keeps one row.
  const again = await admin(h, 'PUT', `/organizations/${id}/telephony`, {
    provider: 'twilio',
    account_sid: SID,
    auth_token: 'another-token-0123456789',
  });
  assert.equal(again.statusCode, 200);
  const count = await h.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM telephony_accounts WHERE organization_id = $1',
    [id],
  );
  assert.equal(count.rows[0]!.n, 1);
});

test('PUT /telephony: an account connected to another organization is 409; bad bodies are 400 naming the field', async () => {
  const other = await org();
  const res = await admin(h, 'PUT', `/organizations/${other}/telephony`, {
    provider: 'twilio',
    account_sid: SID,
    auth_token: TOKEN,
  });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(
    errorJson(res),
    errorBody('CONFLICT', `Account ${SID} is already connected to another organization.`),
  );
  const cases: [Record<string, unknown>, string, string][] = [
    [
      { provider: 'vonage', account_sid: SID, auth_token: TOKEN },
      'provider',
      'Field "provider": must be "twilio".',
    ],
    [
      { provider: 'twilio', account_sid: 'AC123', auth_token: TOKEN },
      'account_sid',
      'Field "account_sid" must be a Twilio account SID: "AC" followed by 32 hex digits.',
    ],
    [
      { provider: 'twilio', account_sid: SID, auth_token: 'short' },
      'auth_token',
      'Field "auth_token" must be the account\'s auth token (8 to 256 characters, no spaces).',
    ],
  ];
  for (const [body, param, message] of cases) {
    const r = await admin(h, 'PUT', `/organizations/${other}/telephony`, body);
    assert.equal(r.statusCode, 400, param);
    assert.deepEqual(errorJson(r), errorBody('BAD_REQUEST', message, undefined, param), param);
    assert.ok(!r.body.includes(TOKEN));
  }
  const missing = await admin(h, 'PUT', '/organizations/00000000-0000-4000-8000-000000000000/telephony', {
    provider: 'twilio',
    account_sid: `AC${'b2'.repeat(16)}`,
    auth_token: TOKEN,
  });
  assert.equal(missing.statusCode, 404);
});

test('POST /phone-numbers: 201 with the id; the same number for another organization is 409; E.164 only', async () => {
  const a = await org();
  const b = await org();
  const res = await admin(h, 'POST', `/organizations/${a}/phone-numbers`, {
    number: '+14155550100',
    ring_to: '+14155550199',
    recording_mode: 'normal',
  });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(Object.keys(res.json()), ['phone_number_id']);
  const row = await h.db.query(
    'SELECT organization_id, number_e164, ring_to_e164, recording_mode FROM phone_numbers WHERE id = $1',
    [res.json().phone_number_id],
  );
  assert.deepEqual(row.rows[0], {
    organization_id: a,
    number_e164: '+14155550100',
    ring_to_e164: '+14155550199',
    recording_mode: 'normal',
  });
  const taken = await admin(h, 'POST', `/organizations/${b}/phone-numbers`, { number: '+14155550100' });
  assert.equal(taken.statusCode, 409);
  assert.deepEqual(
    errorJson(taken),
    errorBody('CONFLICT', 'Number +14155550100 belongs to another organization.'),
  );
  const twice = await admin(h, 'POST', `/organizations/${a}/phone-numbers`, { number: '+14155550100' });
  assert.equal(twice.statusCode, 409);
  for (const [body, param] of [
    [{ number: '4155550101' }, 'number'],
    [{ number: '+1 415 555 0101' }, 'number'],
    [{ number: '+14155550101', ring_to: '555' }, 'ring_to'],
  ] as const) {
    const r = await admin(h, 'POST', `/organizations/${b}/phone-numbers`, body);
    assert.equal(r.statusCode, 400, JSON.stringify(body));
    assert.equal(JSON.parse(r.body).error.param, param);
  }
  const mode = await admin(h, 'POST', `/organizations/${b}/phone-numbers`, {
    number: '+14155550102',
    recording_mode: 'loud',
  });
  assert.equal(mode.statusCode, 400);
});

test('PATCH /organizations/{org} recording_consent: set, merged, validated; enabled needs a text', async () => {
  const id = await org();
  const on = await admin(h, 'PATCH', `/organizations/${id}`, {
    recording_consent: { enabled: true, text: 'This call is recorded.', language: 'en-GB' },
  });
  assert.equal(on.statusCode, 200);
  assert.deepEqual(on.json().recording_consent, {
    enabled: true,
    text: 'This call is recorded.',
    language: 'en-GB',
  });
  const off = await admin(h, 'PATCH', `/organizations/${id}`, { recording_consent: { enabled: false } });
  assert.deepEqual(off.json().recording_consent, {
    enabled: false,
    text: 'This call is recorded.',
    language: 'en-GB',
  });
  const noText = await admin(h, 'PATCH', `/organizations/${await org()}`, {
    recording_consent: { enabled: true },
  });
  assert.equal(noText.statusCode, 400);
  assert.deepEqual(
    errorJson(noText),
    errorBody(
      'BAD_REQUEST',
      'The recording-consent announcement needs its text: send recording_consent.text with enabled true.',
      undefined,
      'recording_consent.text',
    ),
  );
  const lang = await admin(h, 'PATCH', `/organizations/${id}`, {
    recording_consent: { language: 'english' },
  });
  assert.equal(lang.statusCode, 400);
  assert.equal(JSON.parse(lang.body).error.param, 'recording_consent.language');
  const extra = await admin(h, 'PATCH', `/organizations/${id}`, { recording_consent: { digits: '9' } });
  assert.equal(extra.statusCode, 400);
  // nothing of the refused patches applied
  const now = await admin(h, 'GET', `/organizations/${id}`);
  assert.deepEqual(now.json().recording_consent, {
    enabled: false,
    text: 'This call is recorded.',
    language: 'en-GB',
  });
});

test('the auth token never reaches the log, even at trace level', async () => {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  const log = pino(
    { level: 'trace', serializers: { req: safeRequestSerializer }, redact: ['*.auth_token'] },
    sink,
  ) as unknown as Logger;
  const operator = await buildOperatorApp({ ...h.deps, log });
  try {
    const id = await org();
    const token = 'zz-secret-token-never-logged-1234';
    const res = await operator.inject({
      method: 'PUT',
      url: `/admin/v1/organizations/${id}/telephony`,
      headers: { authorization: `Bearer ${h.deps.adminToken}`, 'content-type': 'application/json' },
      payload: { provider: 'twilio', account_sid: `AC${'c3'.repeat(16)}`, auth_token: token },
    });
    assert.equal(res.statusCode, 200);
    const bad = await operator.inject({
      method: 'PUT',
      url: `/admin/v1/organizations/${id}/telephony`,
      headers: { authorization: `Bearer ${h.deps.adminToken}`, 'content-type': 'application/json' },
      payload: { provider: 'twilio', account_sid: 'nope', auth_token: token },
    });
    assert.equal(bad.statusCode, 400);
    assert.ok(!bad.body.includes(token));
    assert.ok(logLines.length > 0);
    assert.ok(logLines.every((l) => !l.includes(token)));
  } finally {
    await operator.close();
  }
});
