import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DatabaseError, type Db } from '../../src/db/types.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { errorJson, errorOf } from '../helpers/http.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';
import { call, rateHeaders } from '../helpers/rest.ts';

let h: Harness;
let orgId: string;
let ownerId: string;
let key: string;
let keyId: string;
before(async () => {
  h = await createHarness();
  ({ orgId, ownerId } = await insertOrg(h.db));
  ({ key, keyId } = await insertApiKey(h.db, { orgId, userId: ownerId }));
});
after(async () => {
  await h.close();
});

const INVALID_KEY =
  'The API key is invalid or has been revoked. API keys are created in the web app on the integrations settings page.';

async function assert401(res: Awaited<ReturnType<typeof call>>, message: string) {
  assert.equal(res.statusCode, 401);
  assert.deepEqual(errorJson(res), {
    success: false,
    error: { code: 'UNAUTHORIZED', message },
    meta: { timestamp: h.clock.now().toISOString() },
  });
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="api"');
  assert.equal(res.headers['x-ratelimit-limit'], undefined);
}

test('a request without an Authorization header answers 401 UNAUTHORIZED', async () => {
  await assert401(
    await call(h, '/calls', '/calls', null),
    'Missing Authorization header; send Authorization: Bearer <API_KEY>. API keys are created in the web app on the integrations settings page.',
  );
});

for (const header of ['Basic dXNlcjpwYXNz', 'Token KEY', 'KEY', 'Bearer', 'Bearer  ', 'Bearer a b']) {
  test(`Authorization: ${header.replace('KEY', '<key>')} is not a Bearer key: 401`, async () => {
    const res = await call(h, '/me', '/me', null, { headers: { authorization: header.replace('KEY', key) } });
    await assert401(
      res,
      'The Authorization header must use the Bearer scheme: Authorization: Bearer <API_KEY>.',
    );
  });
}

test('an unknown key answers 401 and the answer never echoes the key', async () => {
  const res = await call(h, '/me', '/me', 'cc_live_thisKeyDoesNotExist0000000000000000000');
  await assert401(res, INVALID_KEY);
  assert.ok(!res.body.includes('thisKeyDoesNotExist'));
});

test('a revoked key answers 401', async () => {
  const revoked = await insertApiKey(h.db, { orgId, userId: ownerId });
  assert.equal((await call(h, '/me', '/me', revoked.key)).statusCode, 200);
  await h.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revoked.keyId, h.clock.now()]);
  await assert401(await call(h, '/me', '/me', revoked.key), INVALID_KEY);
});

for (const param of ['api_key', 'key', 'token', 'access_token']) {
  test(`a key in the query parameter ?${param}= does not authenticate: 401`, async () => {
    const res = await call(h, '/calls', `/calls?${param}=${encodeURIComponent(key)}`, null);
    assert.equal(res.statusCode, 401);
    assert.equal(errorOf(res).code, 'UNAUTHORIZED');
  });
}

test('a key in a cookie does not authenticate: 401', async () => {
  const res = await call(h, '/me', '/me', null, {
    headers: { cookie: `api_key=${key}; session=${key}; token=${key}` },
  });
  assert.equal(res.statusCode, 401);
});

test('the Bearer scheme name is case-insensitive (RFC 7235)', async () => {
  const res = await call(h, '/me', '/me', null, { headers: { authorization: `bearer ${key}` } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().data.api_key_id, keyId);
});

test('the first request of a key in an hour records last_used_at', async () => {
  const fresh = await insertApiKey(h.db, { orgId, userId: ownerId });
  await call(h, '/me', '/me', fresh.key);
  const { rows } = await h.db.query<{ last_used_at: Date }>(
    'SELECT last_used_at FROM api_keys WHERE id = $1',
    [fresh.keyId],
  );
  assert.equal(rows[0].last_used_at.toISOString(), h.clock.now().toISOString());
});

test('a key whose organization has no active subscription answers 402 on every operation, counted', async () => {
  const o = await insertOrg(h.db, { entitlement: 'inactive' });
  const k = await insertApiKey(h.db, { orgId: o.orgId, userId: o.ownerId });
  const callId = await insertCall(h.db, { orgId: o.orgId });
  for (const [template, path] of [
    ['/me', '/me'],
    ['/calls', '/calls'],
    ['/calls/{id}', `/calls/${callId}`],
  ]) {
    const res = await call(h, template, path, k.key);
    assert.equal(res.statusCode, 402);
    assert.deepEqual(errorOf(res), {
      code: 'SUBSCRIPTION_INACTIVE',
      message: "The organization's subscription is inactive; the account owner can renew it in the web app.",
    });
  }
  const res = await call(h, '/me', '/me', k.key);
  assert.equal(rateHeaders(res).remaining, '996');
});

test('402 comes before 403: an inactive organization with a key lacking the scope answers 402', async () => {
  const o = await insertOrg(h.db, { entitlement: 'inactive' });
  const k = await insertApiKey(h.db, { orgId: o.orgId, userId: o.ownerId, scopes: [] });
  assert.equal((await call(h, '/calls', '/calls', k.key)).statusCode, 402);
});

test('a key with reserved scopes only gets 403 FORBIDDEN naming read.calls on GET /calls and GET /calls/{id}', async () => {
  const k = await insertApiKey(h.db, {
    orgId,
    userId: ownerId,
    scopes: ['write.calls', 'read.contacts', 'write.contacts', 'manage.webhooks', 'manage.api_keys'],
  });
  const callId = await insertCall(h.db, { orgId });
  const list = await call(h, '/calls', '/calls', k.key);
  assert.equal(list.statusCode, 403);
  assert.deepEqual(errorOf(list), {
    code: 'FORBIDDEN',
    message:
      'This API key lacks the scope "read.calls" that GET /calls needs. Create a key with the "read.calls" scope in the web app on the integrations settings page.',
  });
  const one = await call(h, '/calls/{id}', `/calls/${callId}`, k.key);
  assert.equal(one.statusCode, 403);
  assert.match(errorOf(one).message, /scope "read\.calls" that GET \/calls\/\{id\} needs/);
  assert.equal(rateHeaders(one).remaining, '998');
});

test('read.recordings does not grant read.calls, and read.calls does not grant read.recordings', async () => {
  const rec = await insertApiKey(h.db, { orgId, userId: ownerId, scopes: ['read.recordings'] });
  const calls = await insertApiKey(h.db, { orgId, userId: ownerId, scopes: ['read.calls'] });
  const callId = await insertCall(h.db, { orgId });
  assert.equal((await call(h, '/calls', '/calls', rec.key)).statusCode, 403);
  const res = await call(h, '/calls/{id}/recording-url', `/calls/${callId}/recording-url`, calls.key);
  assert.equal(res.statusCode, 403);
  assert.match(errorOf(res).message, /"read\.recordings"/);
});

test('403 comes before 400: a key without the scope sending an invalid query gets 403', async () => {
  const k = await insertApiKey(h.db, { orgId, userId: ownerId, scopes: [] });
  assert.equal((await call(h, '/calls', '/calls?page=zero', k.key)).statusCode, 403);
});

test('300 failed authentications a minute from one address are answered 401, then that address gets 429 even with a valid key', async () => {
  h.clock.set('2026-06-15T10:30:20.000Z');
  const ip = '203.0.113.7';
  for (let i = 0; i < 300; i++) {
    const res = await h.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      remoteAddress: ip,
      headers: { authorization: 'Bearer wrong' },
    });
    assert.equal(res.statusCode, 401, `failure ${i + 1}`);
  }
  for (const k of ['wrong', key]) {
    const res = await call(h, '/me', '/me', k, { remoteAddress: ip });
    assert.equal(res.statusCode, 429);
    assert.deepEqual(errorOf(res), {
      code: 'RATE_LIMITED',
      message:
        'Too many failed authentication attempts from this address; wait for Retry-After seconds, then retry with a valid API key.',
    });
    assert.deepEqual(rateHeaders(res), {
      limit: '300',
      remaining: '0',
      reset: '2026-06-15T10:31:00.000Z',
      retryAfter: '40',
    });
  }
  // Another address is not affected; the throttled one recovers in the next minute.
  assert.equal((await call(h, '/me', '/me', key, { remoteAddress: '198.51.100.1' })).statusCode, 200);
  h.clock.set('2026-06-15T10:31:00.000Z');
  assert.equal((await call(h, '/me', '/me', key, { remoteAddress: ip })).statusCode, 200);
  h.clock.set('2026-06-15T10:00:00.000Z');
});

test('while an address is throttled its requests are not counted against the key', async () => {
  const k = await insertApiKey(h.db, { orgId, userId: ownerId });
  h.clock.set('2026-06-15T10:40:00.000Z');
  await h.db.query(`INSERT INTO rate_limit_windows (bucket, window_start, count) VALUES ($1, $2, 300)`, [
    'authfail:192.0.2.9',
    new Date('2026-06-15T10:40:00.000Z'),
  ]);
  assert.equal((await call(h, '/me', '/me', k.key, { remoteAddress: '192.0.2.9' })).statusCode, 429);
  const res = await call(h, '/me', '/me', k.key, { remoteAddress: '192.0.2.10' });
  assert.equal(rateHeaders(res).remaining, '999');
  h.clock.set('2026-06-15T10:00:00.000Z');
});

test('a database failure during authentication answers 500 DATABASE_ERROR without internals', async () => {
  const failing: Db = {
    ...h.db,
    query: async <T>(sql: string, params?: readonly unknown[]) => {
      if (sql.includes('FROM api_keys')) {
        throw new DatabaseError(
          'relation "api_keys" does not exist at character 42: SELECT k.id FROM api_keys',
        );
      }
      return h.db.query<T>(sql, params);
    },
  };
  const app = await buildPublicApp({ ...h.deps, db: failing });
  try {
    const res = await app.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { authorization: `Bearer ${key}` },
    });
    assertMatchesOpenApi('GET', '/me', res);
    assert.equal(res.statusCode, 500);
    assert.deepEqual(res.json().error, {
      code: 'DATABASE_ERROR',
      message: 'The service could not complete the request; retry with backoff.',
    });
    assert.ok(!res.body.includes('api_keys'));
    assert.equal(res.headers['x-ratelimit-limit'], undefined);
  } finally {
    await app.close();
  }
});
