import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { FLAG_TTL_MS, readPublicApiEnabled, setPublicApiEnabled } from '../../src/maintenance.ts';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { assertErrorShape, assertMatchesOpenApi } from '../helpers/openapi-check.ts';
import { bearer, call } from './support.ts';

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

test('while public_api_enabled is false every /api/v1 request answers 503 MAINTENANCE, whatever path, method or key', async () => {
  await setPublicApiEnabled(h.db, false, h.clock.now());
  const before = (
    await h.db.query<{ count: number }>('SELECT count FROM rate_limit_windows WHERE bucket = $1', [
      `key:${keyId}`,
    ])
  ).rows[0]?.count;
  const requests: [string, string, Record<string, string>][] = [
    ['GET', '/api/v1/me', bearer(key)],
    ['GET', '/api/v1/calls', bearer(key)],
    ['GET', `/api/v1/calls/${callId}`, bearer(key)],
    ['GET', `/api/v1/calls/${callId}/recording-url`, bearer(key)],
    ['GET', `/api/v1/calls/${callId}/recording.mp3?token=x&exp=1`, {}],
    ['GET', '/api/v1/openapi.json', {}],
    ['GET', '/api/v1/me', {}],
    ['GET', '/api/v1/calls?page=0', bearer(key)],
    ['GET', '/api/v1/unknown', {}],
    ['POST', '/api/v1/calls', {}],
    ['DELETE', `/api/v1/calls/${callId}`, {}],
    ['HEAD', '/api/v1/me', {}],
  ];
  for (const [method, url, headers] of requests) {
    const res = await h.app.inject({ method: method as 'GET', url, headers });
    assert.equal(res.statusCode, 503, `${method} ${url}`);
    if (method === 'HEAD') continue;
    const body = assertErrorShape(res, 503, 'MAINTENANCE');
    assert.deepEqual(body.error, MAINTENANCE);
    assert.equal(res.headers['x-ratelimit-limit'], undefined);
  }
  assertMatchesOpenApi(
    'GET',
    '/calls',
    await h.app.inject({ method: 'GET', url: '/api/v1/calls', headers: bearer(key) }),
  );
  const after = (
    await h.db.query<{ count: number }>('SELECT count FROM rate_limit_windows WHERE bucket = $1', [
      `key:${keyId}`,
    ])
  ).rows[0]?.count;
  assert.equal(after, before, 'requests refused for maintenance are not counted');
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
