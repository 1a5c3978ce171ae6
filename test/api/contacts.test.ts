import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { T0 } from '../helpers/deps.ts';
import { checkEnvelope, eventsOf } from '../helpers/events.ts';
import { insertApiKey, insertOrg, MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer, errorBody, errorJson } from '../helpers/http.ts';
import type { Json } from '../helpers/json.ts';
import { rateHeaders } from '../helpers/rest.ts';

/** The contacts API (spec/api-v1-additions.md "Contacts"), every answer checked against the OpenAPI document. */
let h: Harness;
let orgId: string;
let key: string;
let readOnly: string;
let other: { orgId: string; key: string };
const ALL = ['read.calls', 'read.contacts', 'write.contacts'];

before(async () => {
  h = await createHarness();
  ({ orgId } = await insertOrg(h.db, { country: 'US' }));
  const owner = (await h.db.query<{ id: string }>('SELECT id FROM users WHERE organization_id = $1', [orgId]))
    .rows[0].id;
  ({ key } = await insertApiKey(h.db, { orgId, userId: owner, scopes: ALL, rateLimit: 100_000 }));
  ({ key: readOnly } = await insertApiKey(h.db, { orgId, userId: owner, scopes: ['read.calls'] }));
  const o = await insertOrg(h.db, { country: 'US' });
  other = {
    orgId: o.orgId,
    key: (await insertApiKey(h.db, { orgId: o.orgId, userId: o.ownerId, scopes: ALL })).key,
  };
});
after(async () => {
  await h.close();
});

const send = (
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  k: string | null,
  payload?: unknown,
  headers = {},
) =>
  h.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { ...(k === null ? {} : bearer(k)), ...headers },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

let phones = 0;
/** A fresh possible US number, different for each contact of this file. */
const newPhone = () => `+1415555${String(4000 + ++phones).padStart(4, '0')}`;

async function create(body: Record<string, unknown>, k = key): Promise<Json> {
  const res = await send('POST', '/contacts', k, body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data;
}

test('POST /contacts answers 201 with the Contact and emits contact.created with the snapshot', async () => {
  const phone = newPhone();
  const res = await send('POST', '/contacts', key, {
    phone,
    first_name: 'Ana',
    last_name: 'Lopez',
    email: 'ana@example.com',
    company: 'Acme',
    notes: 'Prefers mornings',
    tags: ['vip', ' VIP ', 'lead', ''],
  });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['idempotent-replayed'], undefined);
  const body = res.json();
  const id = body.data.contact_id;
  assert.deepEqual(body, {
    success: true,
    data: {
      contact_id: id,
      phone,
      phone_e164: phone,
      first_name: 'Ana',
      last_name: 'Lopez',
      email: 'ana@example.com',
      company: 'Acme',
      notes: 'Prefers mornings',
      tags: ['vip', 'lead'],
      created_at: T0,
      updated_at: T0,
    },
    meta: { timestamp: T0 },
  });
  const events = await eventsOf(h.db, id);
  assert.equal(events.length, 1);
  const data = checkEnvelope(events[0], {
    type: 'contact.created',
    resourceId: id,
    factKey: id,
    dataKeys: ['contact'],
  });
  assert.deepEqual(data, {
    contact: { id, phone, first_name: 'Ana', last_name: 'Lopez', email: 'ana@example.com', company: 'Acme' },
  });
  // GET /contacts/{id} answers the same contact.
  const got = await send('GET', `/contacts/${id}`, key);
  assert.equal(got.statusCode, 200);
  assert.deepEqual(got.json().data, body.data);
});

test('a national number is kept as given and normalised with the organization country; optional fields default to null', async () => {
  const c = await create({ phone: '(415) 555-7001' });
  assert.equal(c.phone, '(415) 555-7001');
  assert.equal(c.phone_e164, '+14155557001');
  for (const f of ['first_name', 'last_name', 'email', 'company', 'notes']) assert.equal(c[f], null, f);
  assert.deepEqual(c.tags, []);
});

test('POST /contacts: an unusable phone or e-mail answers 422 VALIDATION_ERROR naming the field, nothing stored', async () => {
  const before = (await h.db.query('SELECT count(*)::int AS n FROM contacts')).rows[0].n;
  const phone = await send('POST', '/contacts', key, { phone: '12345' });
  assert.equal(phone.statusCode, 422);
  assert.deepEqual(
    errorJson(phone),
    errorBody(
      'VALIDATION_ERROR',
      'phone "12345" is not a usable phone number; send it in E.164 (+14155552671).',
      T0,
      'phone',
    ),
  );
  const email = await send('POST', '/contacts', key, { phone: newPhone(), email: 'not-an-address' });
  assert.equal(email.statusCode, 422);
  assert.deepEqual(
    errorJson(email),
    errorBody(
      'VALIDATION_ERROR',
      'email "not-an-address" is not a usable e-mail address; send one such as ana@example.com, or null.',
      T0,
      'email',
    ),
  );
  assert.equal((await h.db.query('SELECT count(*)::int AS n FROM contacts')).rows[0].n, before);
});

test('POST /contacts: unknown fields, wrong types, a missing phone and a body that is not JSON answer 400', async () => {
  const cases: [unknown, string, string | undefined][] = [
    [
      { phone: newPhone(), nickname: 'A' },
      'Unknown field "nickname"; accepted fields: phone, first_name, last_name, email, company, notes, tags.',
      'nickname',
    ],
    [{ phone: 4155552671 }, 'Field "phone": must be a string.', 'phone'],
    [{ phone: newPhone(), tags: 'vip' }, 'Field "tags": must be an array of strings.', 'tags'],
    [{ phone: newPhone(), first_name: 7 }, 'Field "first_name": must be a string or null.', 'first_name'],
    [{}, 'Field "phone": is required (a string).', 'phone'],
    [
      ['+14155550000'],
      'The request body must be a JSON object with the fields phone, first_name, last_name, email, company, notes, tags.',
      undefined,
    ],
  ];
  for (const [payload, message, param] of cases) {
    const res = await send('POST', '/contacts', key, payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(errorJson(res), errorBody('BAD_REQUEST', message, T0, param), JSON.stringify(payload));
  }
  const broken = await send('POST', '/contacts', key, '{"phone":', { 'content-type': 'application/json' });
  assert.equal(broken.statusCode, 400);
  assert.deepEqual(
    errorJson(broken),
    errorBody(
      'BAD_REQUEST',
      'The request body is not valid JSON; send a JSON object with Content-Type: application/json.',
    ),
  );
  const form = await send('POST', '/contacts', key, 'phone=%2B14155550000', {
    'content-type': 'application/x-www-form-urlencoded',
  });
  assert.equal(form.statusCode, 415);
  assert.equal(errorJson(form) && JSON.parse(form.body).error.code, 'UNSUPPORTED_MEDIA_TYPE');
  const nul = await send('POST', '/contacts', key, { phone: newPhone(), notes: 'a\u0000b' });
  assert.equal(nul.statusCode, 400);
  assert.deepEqual(
    errorJson(nul),
    errorBody('BAD_REQUEST', 'Field "notes" must not contain a NUL character.', T0, 'notes'),
  );
});

test('a second contact with the same E.164 number answers 409 CONTACT_EXISTS naming the first', async () => {
  const first = await create({ phone: '+1 415 555 7002', first_name: 'Ben' });
  const res = await send('POST', '/contacts', key, { phone: '(415) 555-7002', first_name: 'Other Ben' });
  assert.equal(res.statusCode, 409);
  const body = errorJson(res) as Json;
  assert.deepEqual(body, {
    success: false,
    error: {
      code: 'CONTACT_EXISTS',
      message: `Contact ${first.contact_id} already has the phone number +14155557002; update it (PATCH /contacts/${first.contact_id}) instead of creating another.`,
      param: 'phone',
      contact_id: first.contact_id,
    },
    meta: { timestamp: T0 },
  });
  // Another organization may hold the same number.
  const elsewhere = await send('POST', '/contacts', other.key, { phone: '+14155557002' });
  assert.equal(elsewhere.statusCode, 201);
});

test('GET /contacts lists newest first with page, limit and has_more, filtered by phone and q', async () => {
  const { orgId: o, ownerId } = await insertOrg(h.db, { country: 'GB' });
  const { key: k } = await insertApiKey(h.db, { orgId: o, userId: ownerId, scopes: ALL });
  const made: Json[] = [];
  const rows = [
    { phone: '020 7946 0958', first_name: 'Carla', last_name: 'Diaz', company: 'Northwind' },
    { phone: '+14155557010', first_name: 'Dev', email: 'dev@contoso.example' },
    { phone: '+14155557011', last_name: 'O_Brien', company: '100% Plumbing' },
  ];
  for (const r of rows) {
    h.clock.advance(1000);
    made.push(await create(r, k));
  }
  try {
    const ids = (res: { json(): Json }) => res.json().data.items.map((c: Json) => c.contact_id);
    const all = await send('GET', '/contacts', k);
    assert.equal(all.statusCode, 200);
    assert.deepEqual(ids(all), [made[2].contact_id, made[1].contact_id, made[0].contact_id]);
    assert.deepEqual(
      { has_more: all.json().data.has_more, page: all.json().data.page, limit: all.json().data.limit },
      { has_more: false, page: 1, limit: 20 },
    );
    const p1 = await send('GET', '/contacts?limit=2', k);
    assert.deepEqual(ids(p1), [made[2].contact_id, made[1].contact_id]);
    assert.equal(p1.json().data.has_more, true);
    const p2 = await send('GET', '/contacts?limit=2&page=2', k);
    assert.deepEqual(ids(p2), [made[0].contact_id]);
    assert.deepEqual([p2.json().data.has_more, p2.json().data.page, p2.json().data.limit], [false, 2, 2]);

    // phone: the rules of GET /calls (trailing digits, separators ignored, trunk 0 dropped).
    assert.deepEqual(ids(await send('GET', '/contacts?phone=020%207946%200958', k)), [made[0].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?phone=%2B44%2020%207946%200958', k)), [
      made[0].contact_id,
    ]);
    assert.deepEqual(ids(await send('GET', '/contacts?phone=(415)%20555-7010', k)), [made[1].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?phone=557011', k)), [made[2].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?phone=9999999', k)), []);

    // q: names (either order), company, e-mail; case-insensitive; % and _ are literal.
    assert.deepEqual(ids(await send('GET', '/contacts?q=carla%20diaz', k)), [made[0].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?q=DIAZ%20carla', k)), [made[0].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?q=northwind', k)), [made[0].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?q=contoso.example', k)), [made[1].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?q=100%25', k)), [made[2].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?q=O_B', k)), [made[2].contact_id]);
    assert.deepEqual(ids(await send('GET', '/contacts?q=O%25B', k)), []);
    assert.deepEqual(ids(await send('GET', '/contacts?q=7946', k)), [], 'q does not search phone numbers');
  } finally {
    h.clock.set(T0);
  }
});

test('GET /contacts answers 400 BAD_REQUEST naming an invalid parameter', async () => {
  const cases: [string, string, string][] = [
    ['q=', 'Invalid value "" for query parameter "q": expected 1 to 100 characters.', 'q'],
    [
      `q=${'a'.repeat(101)}`,
      `Invalid value "${'a'.repeat(40)}…" for query parameter "q": expected 1 to 100 characters.`,
      'q',
    ],
    [
      'phone=ab',
      'Invalid value "ab" for query parameter "phone": expected 3 to 40 characters: digits, spaces, hyphens, dots, parentheses and one leading +, with at least 3 digits.',
      'phone',
    ],
    [
      'limit=101',
      'Invalid value "101" for query parameter "limit": expected an integer from 1 to 100 (default 20).',
      'limit',
    ],
    [
      'page=0',
      'Invalid value "0" for query parameter "page": expected an integer of at least 1 (default 1).',
      'page',
    ],
    ['name=ana', 'Unknown query parameter "name". Accepted parameters: page, limit, phone, q.', 'name'],
  ];
  for (const [query, message, param] of cases) {
    const res = await send('GET', `/contacts?${query}`, key);
    assert.equal(res.statusCode, 400, query);
    assert.deepEqual(errorJson(res), errorBody('BAD_REQUEST', message, T0, param), query);
  }
});

test("GET /contacts/{id}: another organization's contact, an unknown and a malformed id answer 404", async () => {
  const theirs = await create({ phone: newPhone() }, other.key);
  for (const id of [theirs.contact_id, MISSING, 'not-a-uuid']) {
    const res = await send('GET', `/contacts/${id}`, key);
    assert.equal(res.statusCode, 404, id);
    assert.deepEqual(
      errorJson(res),
      errorBody('NOT_FOUND', 'No contact with this id exists in your organization.'),
    );
  }
  const mine = await send('GET', '/contacts', key);
  assert.ok(!mine.json().data.items.some((c: Json) => c.contact_id === theirs.contact_id));
});

test('PATCH /contacts/{id}: 200 with the contact, contact.updated holds only what changed; no change, no event', async () => {
  const c = await create({ phone: newPhone(), first_name: 'Dana', email: 'dana@example.com', tags: ['a'] });
  h.clock.advance(5000);
  const later = new Date(Date.parse(T0) + 5000).toISOString();
  try {
    const res = await send('PATCH', `/contacts/${c.contact_id}`, key, {
      first_name: 'Dana',
      last_name: 'Scully',
      email: null,
      tags: ['a', 'b'],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      success: true,
      data: { ...c, last_name: 'Scully', email: null, tags: ['a', 'b'], updated_at: later },
      meta: { timestamp: later },
    });
    const events = await eventsOf(h.db, c.contact_id);
    assert.deepEqual(
      events.map((e) => e.event_type),
      ['contact.created', 'contact.updated'],
    );
    const data = checkEnvelope(events[1], {
      type: 'contact.updated',
      resourceId: c.contact_id,
      factKey: `${c.contact_id}:1`,
      dataKeys: ['contact_id', 'diff'],
      createdAt: later,
    });
    assert.deepEqual(data, {
      contact_id: c.contact_id,
      diff: { last_name: 'Scully', email: null, tags: ['a', 'b'] },
    });

    const same = await send('PATCH', `/contacts/${c.contact_id}`, key, {
      first_name: 'Dana',
      last_name: 'Scully',
    });
    assert.equal(same.statusCode, 200);
    assert.deepEqual(same.json().data, res.json().data);
    assert.equal((await eventsOf(h.db, c.contact_id)).length, 2, 'no event when nothing changed');
  } finally {
    h.clock.set(T0);
  }
});

test('PATCH /contacts/{id}: a phone another contact has answers 409, an unusable one 422, others 400/404', async () => {
  const a = await create({ phone: newPhone() });
  const b = await create({ phone: newPhone() });
  const taken = await send('PATCH', `/contacts/${b.contact_id}`, key, { phone: a.phone });
  assert.equal(taken.statusCode, 409);
  assert.equal(JSON.parse(taken.body).error.code, 'CONTACT_EXISTS');
  assert.equal(JSON.parse(taken.body).error.contact_id, a.contact_id);
  // Its own number written differently is no conflict.
  const own = await send('PATCH', `/contacts/${a.contact_id}`, key, { phone: a.phone.replace('+1', '+1 ') });
  assert.equal(own.statusCode, 200, own.body);
  const bad = await send('PATCH', `/contacts/${b.contact_id}`, key, { phone: 'anonymous' });
  assert.equal(bad.statusCode, 422);
  assert.equal(JSON.parse(bad.body).error.param, 'phone');
  const badEmail = await send('PATCH', `/contacts/${b.contact_id}`, key, { email: 'x@' });
  assert.equal(badEmail.statusCode, 422);
  assert.equal(JSON.parse(badEmail.body).error.param, 'email');
  const unknown = await send('PATCH', `/contacts/${b.contact_id}`, key, { contact_id: MISSING });
  assert.equal(unknown.statusCode, 400);
  assert.equal(JSON.parse(unknown.body).error.param, 'contact_id');
  const empty = await send('PATCH', `/contacts/${b.contact_id}`, key, {});
  assert.equal(empty.statusCode, 400);
  const theirs = await create({ phone: newPhone() }, other.key);
  const missing = await send('PATCH', `/contacts/${theirs.contact_id}`, key, { first_name: 'X' });
  assert.equal(missing.statusCode, 404);
  assert.equal((await eventsOf(h.db, b.contact_id)).length, 1, 'b: only contact.created');
});

test('a key without the scope gets 403 FORBIDDEN naming it, before the body is read', async () => {
  const cases: ['GET' | 'POST' | 'PATCH', string, string, string][] = [
    ['GET', '/contacts', 'read.contacts', '/contacts'],
    ['GET', `/contacts/${MISSING}`, 'read.contacts', '/contacts/{id}'],
    ['POST', '/contacts', 'write.contacts', '/contacts'],
    ['PATCH', `/contacts/${MISSING}`, 'write.contacts', '/contacts/{id}'],
  ];
  for (const [method, url, scope, route] of cases) {
    const res = await send(method, url, readOnly, method === 'GET' ? undefined : { bogus: true });
    assert.equal(res.statusCode, 403, `${method} ${url}`);
    assert.deepEqual(
      errorJson(res),
      errorBody(
        'FORBIDDEN',
        `This API key lacks the scope "${scope}" that ${method} ${route} needs. Create a key with the "${scope}" scope in the web app on the integrations settings page.`,
      ),
    );
  }
  const none = await send('POST', '/contacts', null, { phone: newPhone() });
  assert.equal(none.statusCode, 401);
});

test('writes count against the hourly limits like reads: X-RateLimit-* on every answer, 429 over the limit', async () => {
  const { orgId: o, ownerId } = await insertOrg(h.db, { country: 'US' });
  const { key: k } = await insertApiKey(h.db, { orgId: o, userId: ownerId, scopes: ALL, rateLimit: 3 });
  const a = await send('POST', '/contacts', k, { phone: newPhone() });
  assert.deepEqual(rateHeaders(a), {
    limit: '3',
    remaining: '2',
    reset: '2026-06-15T11:00:00.000Z',
    retryAfter: undefined,
  });
  const b = await send('PATCH', `/contacts/${a.json().data.contact_id}`, k, { first_name: 'Eve' });
  assert.equal(b.statusCode, 200);
  assert.equal(rateHeaders(b).remaining, '1');
  const bad = await send('POST', '/contacts', k, { nope: 1 });
  assert.equal(bad.statusCode, 400);
  assert.equal(rateHeaders(bad).remaining, '0');
  const over = await send('POST', '/contacts', k, { phone: newPhone() });
  assert.equal(over.statusCode, 429);
  assert.deepEqual(rateHeaders(over), {
    limit: '3',
    remaining: '0',
    reset: '2026-06-15T11:00:00.000Z',
    retryAfter: '3600',
  });
  assert.equal(
    (await h.db.query('SELECT count(*)::int AS n FROM contacts WHERE organization_id = $1', [o])).rows[0].n,
    1,
  );
});
