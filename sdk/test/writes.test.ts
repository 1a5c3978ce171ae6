import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContactExistsError, IdempotencyKeyReusedError } from '../src/api-errors.ts';
import type { ContactResource } from '../src/api-types.ts';
import { CallCaptureClient, type FetchLike } from '../src/client.ts';

/** The writes of the REST client: method, headers, body, idempotency key, retries, typed errors. */
const BASE = 'https://calls.example.com/api/v1';
type Sent = { url: string; method: string; headers: Record<string, string>; body?: string };

function client(answers: (() => Response)[]) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    sent.push({
      url,
      method: init.method,
      headers: init.headers,
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return next();
  };
  const c = new CallCaptureClient({
    apiKey: 'cc_live_x',
    baseUrl: BASE,
    fetch,
    sleep: async () => undefined,
    random: () => 0,
  });
  return { c, sent };
}
const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });
const ok = (status: number, data: unknown) => json(status, { success: true, data, meta: { timestamp: 't' } });
const fail = (status: number, error: Record<string, string>) =>
  json(status, { success: false, error, meta: { timestamp: 't' } });

const contact = (n: number): ContactResource => ({
  contact_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  phone: '+14155552671',
  phone_e164: '+14155552671',
  first_name: 'Ana',
  last_name: null,
  email: null,
  company: null,
  notes: null,
  tags: [],
  created_at: '2026-06-15T10:00:00.000Z',
  updated_at: '2026-06-15T10:00:00.000Z',
});

test('createContact POSTs JSON with the Idempotency-Key and answers the Contact', async () => {
  const { c, sent } = client([ok(201, contact(1))]);
  const got = await c.createContact({ phone: '+14155552671', first_name: 'Ana' }, { idempotencyKey: 'k1' });
  assert.deepEqual(got, contact(1));
  assert.deepEqual(sent, [
    {
      url: `${BASE}/contacts`,
      method: 'POST',
      headers: {
        authorization: 'Bearer cc_live_x',
        accept: 'application/json',
        'content-type': 'application/json',
        'idempotency-key': 'k1',
      },
      body: '{"phone":"+14155552671","first_name":"Ana"}',
    },
  ]);
});

test('a POST without an idempotency key is never retried; with one it is', async () => {
  const without = client([fail(503, { code: 'MAINTENANCE', message: 'm' })]);
  await assert.rejects(without.c.placeCall({ customer_phone: '+14155552671' }));
  assert.equal(without.sent.length, 1);
  const withKey = client([fail(503, { code: 'MAINTENANCE', message: 'm' }), ok(201, { call_id: 'c' })]);
  await withKey.c.placeCall({ customer_phone: '+14155552671' }, { idempotencyKey: 'click-1' });
  assert.equal(withKey.sent.length, 2);
  assert.deepEqual(
    withKey.sent.map((s) => [s.method, s.url, s.headers['idempotency-key'], s.body]),
    [
      ['POST', `${BASE}/calls`, 'click-1', '{"customer_phone":"+14155552671"}'],
      ['POST', `${BASE}/calls`, 'click-1', '{"customer_phone":"+14155552671"}'],
    ],
  );
});

test('updateContact PATCHes; getContact and listContacts GET; iterateContacts follows has_more', async () => {
  const { c, sent } = client([
    ok(200, contact(1)),
    ok(200, contact(2)),
    ok(200, { items: [contact(3), contact(2)], has_more: true, page: 1, limit: 100 }),
    ok(200, { items: [contact(2), contact(1)], has_more: false, page: 2, limit: 100 }),
  ]);
  await c.updateContact(contact(1).contact_id, { email: null });
  await c.getContact(contact(2).contact_id);
  const ids: string[] = [];
  for await (const x of c.iterateContacts({ q: 'ana' })) ids.push(x.contact_id);
  assert.deepEqual(ids, [contact(3).contact_id, contact(2).contact_id, contact(1).contact_id]);
  assert.deepEqual(
    sent.map((s) => [s.method, s.url, s.body]),
    [
      ['PATCH', `${BASE}/contacts/${contact(1).contact_id}`, '{"email":null}'],
      ['GET', `${BASE}/contacts/${contact(2).contact_id}`, undefined],
      ['GET', `${BASE}/contacts?q=ana&limit=100&page=1`, undefined],
      ['GET', `${BASE}/contacts?q=ana&limit=100&page=2`, undefined],
    ],
  );
});

test('CONTACT_EXISTS and IDEMPOTENCY_KEY_REUSED come back as typed errors', async () => {
  const id = contact(9).contact_id;
  const { c } = client([
    fail(409, { code: 'CONTACT_EXISTS', message: 'exists', param: 'phone', contact_id: id }),
    fail(422, { code: 'IDEMPOTENCY_KEY_REUSED', message: 'reused', param: 'Idempotency-Key' }),
  ]);
  await assert.rejects(c.createContact({ phone: '+14155552671' }), (err: unknown) => {
    assert.ok(err instanceof ContactExistsError);
    assert.equal(err.contactId, id);
    assert.equal(err.param, 'phone');
    assert.equal(err.retryable, false);
    return true;
  });
  await assert.rejects(
    c.placeCall({ customer_phone: '+1' }, { idempotencyKey: 'k' }),
    IdempotencyKeyReusedError,
  );
});

test('createInboundTestCall POSTs the scenario to /test-helpers/inbound-calls once, never retried', async () => {
  const call = { call_id: '00000000-0000-4000-8000-000000000001', direction: 'inbound' };
  const { c, sent } = client([ok(201, call)]);
  assert.deepEqual(await c.createInboundTestCall({ scenario: 'voicemail', caller_name: 'Jo' }), call);
  assert.deepEqual(sent, [
    {
      url: `${BASE}/test-helpers/inbound-calls`,
      method: 'POST',
      headers: {
        authorization: 'Bearer cc_live_x',
        accept: 'application/json',
        'content-type': 'application/json',
      },
      body: '{"scenario":"voicemail","caller_name":"Jo"}',
    },
  ]);
  const busy = client([fail(503, { code: 'MAINTENANCE', message: 'm' }), ok(201, call)]);
  await assert.rejects(busy.c.createInboundTestCall());
  assert.equal(busy.sent.length, 1);
  assert.equal(busy.sent[0]!.body, '{}');
});
