import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { FLAG_TTL_MS, readPublicApiEnabled, setPublicApiEnabled } from '../../src/maintenance.ts';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer } from '../helpers/http.ts';
import { assertErrorShape, assertMatchesOpenApi } from '../helpers/openapi-check.ts';
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
afterEach(async () => {
  await setPublicApiEnabled(h.db, true, h.clock.now());
});
after(async () => {
  await h.close();
});

const MAINTENANCE = {
  code: 'MAINTENANCE',
  message: 'The public API is temporarily disabled for maintenance; retry later.',
};

test('without a stored setting the public API is enabled', async () => {
  assert.equal(await readPublicApiEnabled(h.db), true);
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 200);
});

const keyCount = async (id = keyId) =>
  (
    await h.db.query<{ count: number }>('SELECT count FROM rate_limit_windows WHERE bucket = $1', [
      `key:${id}`,
    ])
  ).rows[0]?.count ?? 0;

test('while public_api_enabled is false every /api/v1 request answers 503 MAINTENANCE, whatever path, method or key', async () => {
  await setPublicApiEnabled(h.db, false, h.clock.now());
  let count = await keyCount();
  // [method, url, headers, counted]: a request with a key counts unless it is for an unauthenticated
  // resource (the document, a signed download link), exactly as when the API is up.
  const requests: [string, string, Record<string, string>, boolean][] = [
    ['GET', '/api/v1/me', bearer(key), true],
    ['GET', '/api/v1/calls', bearer(key), true],
    ['GET', `/api/v1/calls/${callId}`, bearer(key), true],
    ['GET', `/api/v1/calls/${callId}/recording-url`, bearer(key), true],
    ['GET', `/api/v1/calls/${callId}/recording.mp3?token=x&exp=1`, {}, false],
    ['GET', `/api/v1/calls/${callId}/recording.mp3?token=x&exp=1`, bearer(key), false],
    ['GET', '/api/v1/openapi.json', {}, false],
    ['GET', '/api/v1/openapi.json', bearer(key), false],
    ['GET', '/api/v1/me', {}, false],
    ['GET', '/api/v1/me', bearer('cc_live_unknown'), false],
    ['GET', '/api/v1/calls?page=0', bearer(key), true],
    ['GET', '/api/v1/unknown', {}, false],
    ['GET', '/api/v1/unknown', bearer(key), true],
    ['POST', '/api/v1/calls', {}, false],
    ['POST', '/api/v1/calls', bearer(key), true],
    ['DELETE', `/api/v1/calls/${callId}`, {}, false],
    ['HEAD', '/api/v1/me', {}, false],
    ['HEAD', '/api/v1/me', bearer(key), true],
  ];
  for (const [method, url, headers, counted] of requests) {
    const res = await h.app.inject({ method: method as 'GET', url, headers });
    const what = `${method} ${url} ${headers.authorization ?? ''}`;
    assert.equal(res.statusCode, 503, what);
    if (counted) count++;
    // Every request counts regardless of response status; a 503 is never turned into a 429.
    assert.deepEqual(
      rateHeaders(res),
      counted
        ? {
            limit: '1000',
            remaining: String(1000 - count),
            reset: '2026-06-15T11:00:00.000Z',
            retryAfter: undefined,
          }
        : { limit: undefined, remaining: undefined, reset: undefined, retryAfter: undefined },
      what,
    );
    assert.equal(await keyCount(), count, what);
    if (method === 'HEAD') continue;
    const body = assertErrorShape(res, 503, 'MAINTENANCE');
    assert.deepEqual(body.error, MAINTENANCE);
  }
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/calls', headers: bearer(key) });
  assertMatchesOpenApi('GET', '/calls', res);
  assert.equal(res.headers['x-ratelimit-remaining'], String(1000 - (count + 1)));
});

test('a key over its limit still gets 503 during maintenance, with Remaining 0 and no Retry-After', async () => {
  const { orgId, ownerId } = await insertOrg(h.db);
  const small = await insertApiKey(h.db, { orgId, userId: ownerId, rateLimit: 1 });
  assert.equal((await call(h, '/me', '/me', small.key)).statusCode, 200);
  await setPublicApiEnabled(h.db, false, h.clock.now());
  for (const url of ['/me', '/calls', '/nothing']) {
    const res = await h.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: bearer(small.key) });
    assertErrorShape(res, 503, 'MAINTENANCE');
    assert.deepEqual(rateHeaders(res), {
      limit: '1',
      remaining: '0',
      reset: '2026-06-15T11:00:00.000Z',
      retryAfter: undefined,
    });
  }
  assert.equal(await keyCount(small.keyId), 4);
});

test('switching back on takes effect at once on the node that switched', async () => {
  await setPublicApiEnabled(h.db, false, h.clock.now());
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 503);
  await setPublicApiEnabled(h.db, true, h.clock.now());
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 200);
});

test(`another node notices the switch within ${FLAG_TTL_MS} ms`, async () => {
  const start = h.clock.now().getTime();
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 200);
  // Another node flips the flag: only the database changes, this node's cache does not hear of it.
  await h.db.query(
    `INSERT INTO settings (key, value, updated_at) VALUES ('public_api_enabled', 'false'::jsonb, $1)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [h.clock.now()],
  );
  h.clock.set(new Date(start + FLAG_TTL_MS - 1));
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 200);
  h.clock.set(new Date(start + FLAG_TTL_MS));
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 503);
  h.clock.set(new Date(start));
});

test('a freshly started node reads the flag before its first answer', async () => {
  await setPublicApiEnabled(h.db, false, h.clock.now());
  const node = await buildPublicApp(h.deps);
  try {
    const res = await node.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });
    assertErrorShape(res, 503, 'MAINTENANCE');
  } finally {
    await node.close();
  }
});

test('the flag is stored in settings as a jsonb boolean', async () => {
  await setPublicApiEnabled(h.db, false, new Date('2026-06-15T10:05:00.000Z'));
  const { rows } = await h.db.query<{ value: unknown; updated_at: Date }>(
    `SELECT value, updated_at FROM settings WHERE key = 'public_api_enabled'`,
  );
  assert.deepEqual(rows, [{ value: false, updated_at: new Date('2026-06-15T10:05:00.000Z') }]);
});
