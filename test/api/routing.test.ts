import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer } from '../helpers/http.ts';
import { assertErrorShape } from '../helpers/openapi-check.ts';
import { call, rateHeaders } from '../helpers/rest.ts';

let h: Harness;
let key: string;
let keyId: string;
let callId: string;
before(async () => {
  h = await createHarness();
  const { orgId, ownerId } = await insertOrg(h.db);
  ({ key, keyId } = await insertApiKey(h.db, { orgId, userId: ownerId }));
  callId = await insertCall(h.db, { orgId });
});
after(async () => {
  await h.close();
});

const countOf = async (bucket: string) =>
  (await h.db.query<{ count: number }>('SELECT count FROM rate_limit_windows WHERE bucket = $1', [bucket]))
    .rows[0]?.count ?? 0;
const keyCount = () => countOf(`key:${keyId}`);

/** The X-RateLimit-* headers a request with `key` must carry once the key's count is `count`. */
const countedAs = (count: number) => ({
  limit: '1000',
  remaining: String(1000 - count),
  reset: '2026-06-15T11:00:00.000Z',
  retryAfter: undefined,
});
const noRateHeaders = { limit: undefined, remaining: undefined, reset: undefined, retryAfter: undefined };

for (const path of [
  '/api/v1/contacts/x/y',
  '/api/v1/calls/x/y',
  '/api/v1',
  '/api/v1/',
  '/api/v1/webhooks?x=1',
  '/api/v1/ME',
]) {
  test(`an unknown route (${path}) answers 404 NOT_FOUND in the error shape, counted against a key it carries`, async () => {
    const before = await keyCount();
    for (const headers of [{}, bearer(key)]) {
      const res = await h.app.inject({ method: 'GET', url: path, headers });
      const body = assertErrorShape(res, 404, 'NOT_FOUND');
      assert.equal(
        body.error.message,
        `No operation GET ${path.split('?')[0]}; the operations are listed in https://calls.example.test/api/v1/openapi.json.`,
      );
      // Every request counts regardless of response status: the one with the key used one request.
      assert.deepEqual(rateHeaders(res), 'authorization' in headers ? countedAs(before + 1) : noRateHeaders);
    }
    assert.equal(await keyCount(), before + 1);
  });
}

test('POST to a path no operation has (/api/v1/webhooks) is an unknown route: 404', async () => {
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: bearer(key),
    payload: {},
  });
  assertErrorShape(res, 404, 'NOT_FOUND');
});

/** Known paths and the methods they answer (the writes: POST /calls, POST /contacts, PATCH /contacts/{id}). */
const known = (): [string, string, string][] => [
  ['/api/v1/me', '/api/v1/me', 'GET'],
  ['/api/v1/calls', '/api/v1/calls', 'GET, POST'],
  [`/api/v1/calls/${callId}`, '/api/v1/calls/{id}', 'GET'],
  ['/api/v1/contacts', '/api/v1/contacts', 'GET, POST'],
  [`/api/v1/contacts/${callId}`, '/api/v1/contacts/{id}', 'GET, PATCH'],
];

for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
  test(`${method} on a known path that does not serve it answers 405 METHOD_NOT_ALLOWED with Allow, counted against a key it carries`, async () => {
    let count = await keyCount();
    for (const [url, template, allow] of known()) {
      if (allow.split(', ').includes(method)) continue;
      for (const headers of [{}, bearer(key)]) {
        const res = await h.app.inject({ method, url, headers });
        const body = assertErrorShape(res, 405, 'METHOD_NOT_ALLOWED');
        assert.equal(res.headers.allow, allow);
        assert.equal(
          body.error.message,
          `${method} is not allowed on ${template}; this path answers ${allow} only.`,
        );
        if ('authorization' in headers) count++;
        assert.deepEqual(rateHeaders(res), 'authorization' in headers ? countedAs(count) : noRateHeaders);
      }
    }
    assert.equal(await keyCount(), count);
  });
}

test('HEAD on a known path answers 405 with Allow and no body, counted', async () => {
  let count = await keyCount();
  for (const [url, , allow] of known()) {
    const res = await h.app.inject({ method: 'HEAD', url, headers: bearer(key) });
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers.allow, allow);
    assert.equal(res.body, '');
    assert.deepEqual(rateHeaders(res), countedAs(++count));
  }
  assert.equal(await keyCount(), count);
});

test('a key over its limit gets 429 on an unknown route and on a wrong method too, with Retry-After', async () => {
  h.clock.set('2026-06-15T10:30:00.000Z');
  try {
    const { orgId, ownerId } = await insertOrg(h.db);
    const small = await insertApiKey(h.db, { orgId, userId: ownerId, rateLimit: 2 });
    assert.equal((await call(h, '/me', '/me', small.key)).statusCode, 200);
    const unknown = await h.app.inject({
      method: 'GET',
      url: '/api/v1/webhooks',
      headers: bearer(small.key),
    });
    assertErrorShape(unknown, 404, 'NOT_FOUND');
    assert.deepEqual(rateHeaders(unknown), {
      limit: '2',
      remaining: '0',
      reset: '2026-06-15T11:00:00.000Z',
      retryAfter: undefined,
    });
    for (const [method, url] of [
      ['GET', '/api/v1/webhooks'],
      ['PUT', '/api/v1/calls'],
      ['DELETE', `/api/v1/calls/${callId}`],
    ] as const) {
      const res = await h.app.inject({ method, url, headers: bearer(small.key) });
      const body = assertErrorShape(res, 429, 'RATE_LIMITED');
      assert.equal(
        body.error.message,
        "Rate limit exceeded: this API key's limit of 2 requests per hour. The window resets on the UTC hour; retry after Retry-After seconds.",
        `${method} ${url}`,
      );
      assert.deepEqual(rateHeaders(res), {
        limit: '2',
        remaining: '0',
        reset: '2026-06-15T11:00:00.000Z',
        retryAfter: '1800',
      });
    }
    assert.equal(await countOf(`key:${small.keyId}`), 5);
    assert.equal(await countOf(`org:${orgId}`), 5);
  } finally {
    h.clock.set('2026-06-15T10:00:00.000Z');
  }
});

test('an unknown route with an invalid key stays 404, shows no rate headers and counts as a failed authentication', async () => {
  const ip = '203.0.113.77';
  for (const [method, url] of [
    ['GET', '/api/v1/webhooks'],
    ['PUT', '/api/v1/calls'],
  ] as const) {
    const res = await h.app.inject({ method, url, headers: bearer('cc_live_unknown'), remoteAddress: ip });
    assertErrorShape(
      res,
      method === 'GET' ? 404 : 405,
      method === 'GET' ? 'NOT_FOUND' : 'METHOD_NOT_ALLOWED',
    );
    assert.deepEqual(rateHeaders(res), noRateHeaders);
  }
  // Without a Bearer key nothing is counted at all.
  await h.app.inject({ method: 'GET', url: '/api/v1/webhooks', remoteAddress: ip });
  assert.equal(await countOf(`authfail:${ip}`), 2);
});

test('openapi.json is not counted, even when the request carries a key', async () => {
  const before = await keyCount();
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: bearer(key) });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(rateHeaders(res), noRateHeaders);
  assert.equal(await keyCount(), before);
});

test('a PUT with a malformed JSON body still answers 405, not 400', async () => {
  const res = await h.app.inject({
    method: 'PUT',
    url: '/api/v1/calls',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    payload: '{"broken":',
  });
  assertErrorShape(res, 405, 'METHOD_NOT_ALLOWED');
});

test('a PUT with an unsupported content type still answers 405', async () => {
  const res = await h.app.inject({
    method: 'PUT',
    url: '/api/v1/calls',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'a=b',
  });
  assertErrorShape(res, 405, 'METHOD_NOT_ALLOWED');
});

test('routes ignore a trailing slash', async () => {
  assert.equal((await call(h, '/me', '/me/', key)).statusCode, 200);
  assert.equal((await call(h, '/calls', '/calls/', key)).statusCode, 200);
  assert.equal((await call(h, '/calls/{id}', `/calls/${callId}/`, key)).statusCode, 200);
  const res = await h.app.inject({ method: 'PUT', url: '/api/v1/calls/' });
  assertErrorShape(res, 405, 'METHOD_NOT_ALLOWED');
});

test('every /api/v1 answer, errors included, carries Cache-Control: no-store', async () => {
  for (const [method, url, headers] of [
    ['GET', '/api/v1/me', bearer(key)],
    ['GET', '/api/v1/me', {}],
    ['GET', '/api/v1/nothing', {}],
    ['DELETE', '/api/v1/calls', {}],
    ['GET', '/api/v1/calls?page=0', bearer(key)],
  ] as const) {
    const res = await h.app.inject({ method, url, headers });
    assert.equal(res.headers['cache-control'], 'no-store', `${method} ${url}`);
  }
});

test('a malformed percent-encoding in the path answers 400 BAD_REQUEST in the error shape', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/calls/%zz', headers: bearer(key) });
  const body = assertErrorShape(res, 400, 'BAD_REQUEST');
  assert.match(
    body.error.message,
    /^The request URL is malformed \(FST_ERR_BAD_URL\): check its percent-encoding\.$/,
  );
});
