import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { buildOperatorApp } from '../../src/http/operator/app.ts';
import { insertApiKey, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, adminHeaders } from '../helpers/http.ts';
import { call } from '../helpers/rest.ts';

/** X-Request-Id on both listeners, meta.request_id in error bodies, error.param on 400s. */
let h: Harness;
let key: string;
before(async () => {
  h = await createHarness();
  const { orgId, ownerId } = await insertOrg(h.db);
  key = (await insertApiKey(h.db, { orgId, userId: ownerId, scopes: ['read.calls'] })).key;
});
after(async () => {
  await h.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("a well-formed X-Request-Id is echoed on a success and in an error's meta.request_id", async () => {
  const ok = await call(h, '/me', '/me', key, { headers: { 'x-request-id': 'crm-sync:42_a.b-c' } });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.headers['x-request-id'], 'crm-sync:42_a.b-c');
  assert.deepEqual(ok.json().meta, { timestamp: '2026-06-15T10:00:00.000Z' }, 'success bodies are unchanged');

  const res = await call(h, '/me', '/me', null, { headers: { 'x-request-id': 'req-401' } });
  assert.equal(res.statusCode, 401);
  assert.equal(res.headers['x-request-id'], 'req-401');
  assert.deepEqual(res.json(), {
    success: false,
    error: {
      code: 'UNAUTHORIZED',
      message:
        'Missing Authorization header; send Authorization: Bearer <API_KEY>. API keys are created in the web app on the integrations settings page.',
    },
    meta: { timestamp: '2026-06-15T10:00:00.000Z', request_id: 'req-401' },
  });
});

test('an id of 128 allowed characters is kept; 129, a space, an empty or non-ASCII one gets a fresh UUID', async () => {
  const longest = 'a'.repeat(128);
  const kept = await call(h, '/me', '/me', key, { headers: { 'x-request-id': longest } });
  assert.equal(kept.headers['x-request-id'], longest);
  const seen = new Set<string>();
  for (const given of ['a'.repeat(129), 'two words', '', 'ünïcode', 'a/b', 'a"b']) {
    const res = await call(h, '/me', '/me', null, { headers: { 'x-request-id': given } });
    const id = String(res.headers['x-request-id']);
    assert.match(id, UUID, JSON.stringify(given));
    assert.equal(res.json().meta.request_id, id);
    seen.add(id);
  }
  const none = await call(h, '/me', '/me', null);
  assert.match(String(none.headers['x-request-id']), UUID);
  seen.add(String(none.headers['x-request-id']));
  assert.equal(seen.size, 7, 'every fresh id is new');
});

test('unknown routes, other methods and malformed URLs carry the id too', async () => {
  const headers = { 'x-request-id': 'req-edge' };
  const missing = await h.app.inject({ method: 'GET', url: '/api/v1/nope', headers });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.headers['x-request-id'], 'req-edge');
  assert.equal(missing.json().meta.request_id, 'req-edge');
  const post = await h.app.inject({ method: 'POST', url: '/api/v1/me', headers });
  assert.equal(post.statusCode, 405);
  assert.equal(post.headers['x-request-id'], 'req-edge');
  assert.equal(post.json().meta.request_id, 'req-edge');
  const malformed = await h.app.inject({ method: 'GET', url: '/api/v1/calls/%E0%A4%A', headers });
  assert.equal(malformed.statusCode, 400);
  assert.equal(malformed.headers['x-request-id'], 'req-edge');
  assert.equal(malformed.json().meta.request_id, 'req-edge');
});

test('a 400 names the query parameter at fault in error.param', async () => {
  const headers = { 'x-request-id': 'req-400' };
  const cases: Array<[string, string, string]> = [
    [
      '?limit=0',
      'limit',
      'Invalid value "0" for query parameter "limit": expected an integer from 1 to 100 (default 20).',
    ],
    [
      '?stauts=new',
      'stauts',
      'Unknown query parameter "stauts". Accepted parameters: page, limit, dateFrom, dateTo, direction, status, phone.',
    ],
    ['?page=1&page=2', 'page', 'Query parameter "page" is given more than once; give it at most once.'],
  ];
  for (const [query, param, message] of cases) {
    const res = await call(h, '/calls', `/calls${query}`, key, { headers });
    assert.equal(res.statusCode, 400, query);
    assert.deepEqual(
      res.json(),
      {
        success: false,
        error: { code: 'BAD_REQUEST', message, param },
        meta: { timestamp: '2026-06-15T10:00:00.000Z', request_id: 'req-400' },
      },
      query,
    );
  }
});

test('the operator listener: X-Request-Id on /healthz, meta.request_id and error.param in its errors', async () => {
  const health = await h.operator.inject({
    method: 'GET',
    url: '/healthz',
    headers: { 'x-request-id': 'op-1' },
  });
  assert.equal(health.statusCode, 200);
  assert.equal(health.headers['x-request-id'], 'op-1');

  const res = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: { ...adminHeaders, 'x-request-id': 'op-2' },
    payload: { owner_email: 'rid@example.com', owner_password: 'long-enough' },
  });
  assert.equal(res.statusCode, 400);
  assert.equal(res.headers['x-request-id'], 'op-2');
  assert.deepEqual(res.json(), {
    success: false,
    error: { code: 'BAD_REQUEST', message: 'Field "name" is required (string).', param: 'name' },
    meta: { timestamp: '2026-06-15T10:00:00.000Z', request_id: 'op-2' },
  });
  const unknown = await admin(h, 'POST', '/organizations', {
    name: 'A',
    owner_email: 'x@example.com',
    owner_password: 'long-enough',
    colour: 1,
  });
  assert.equal(unknown.json().error.param, 'colour');
  const noToken = await h.operator.inject({ method: 'POST', url: '/admin/v1/organizations', payload: {} });
  assert.equal(noToken.statusCode, 401);
  assert.match(String(noToken.headers['x-request-id']), UUID);
  assert.equal(noToken.json().meta.request_id, noToken.headers['x-request-id']);
  assert.equal(noToken.json().error.param, undefined, 'only 400s name a parameter');
});

test('every log line of a request carries its id as request_id', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const app = await buildOperatorApp({ ...h.deps, log: pino({ level: 'info' }, sink) });
  try {
    const res = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'log-7' } });
    assert.equal(res.statusCode, 200);
  } finally {
    await app.close();
  }
  const mine = lines.filter((l) => l.request_id === 'log-7');
  assert.deepEqual(
    mine.map((l) => l.msg),
    ['incoming request', 'request completed'],
  );
  assert.equal(
    lines.some((l) => 'reqId' in l),
    false,
  );
});
