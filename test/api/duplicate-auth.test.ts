import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer, errorBody, errorJson } from '../helpers/http.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';
import { rateHeaders } from '../helpers/rest.ts';

let h: Harness;
let key: string;
let keyId: string;
let otherKey: string;
let callId: string;
before(async () => {
  h = await createHarness();
  const { orgId, ownerId } = await insertOrg(h.db);
  ({ key, keyId } = await insertApiKey(h.db, { orgId, userId: ownerId }));
  ({ key: otherKey } = await insertApiKey(h.db, { orgId, userId: ownerId }));
  callId = await insertCall(h.db, { orgId });
});
after(async () => {
  await h.close();
});

const keyCount = async () =>
  (
    await h.db.query<{ count: number }>('SELECT count FROM rate_limit_windows WHERE bucket = $1', [
      `key:${keyId}`,
    ])
  ).rows[0]?.count ?? 0;

const MESSAGE =
  'The request carries 2 Authorization headers; send exactly one (Authorization: Bearer <API_KEY>). A proxy and this service could pick different ones, so the request is refused.';
const noRate = { limit: undefined, remaining: undefined, reset: undefined, retryAfter: undefined };

for (const [template, path] of [
  ['/me', () => '/me'],
  ['/calls', () => '/calls'],
  ['/calls/{id}', () => `/calls/${callId}`],
  ['/calls/{id}/recording-url', () => `/calls/${callId}/recording-url`],
] as const) {
  test(`two Authorization headers on GET ${template} answer 400 BAD_REQUEST, counted against neither key`, async () => {
    const before = await keyCount();
    for (const pair of [
      [`Bearer ${key}`, `Bearer ${otherKey}`],
      [`Bearer ${key}`, `Bearer ${key}`],
      [`Bearer ${key}`, 'Basic dXNlcjpwYXNz'],
    ]) {
      const res = await h.app.inject({
        method: 'GET',
        url: `/api/v1${path()}`,
        headers: { authorization: pair as unknown as string },
      });
      assertMatchesOpenApi('GET', template, res);
      assert.equal(res.statusCode, 400);
      assert.deepEqual(errorJson(res), errorBody('BAD_REQUEST', MESSAGE));
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['www-authenticate'], undefined);
      assert.deepEqual(rateHeaders(res), noRate);
    }
    assert.equal(await keyCount(), before);
  });
}

test('two Authorization headers on an unknown /api/v1 path answer 400 too (not 404), uncounted', async () => {
  const before = await keyCount();
  const res = await h.app.inject({
    method: 'GET',
    url: '/api/v1/contacts',
    headers: { authorization: [`Bearer ${key}`, `Bearer ${otherKey}`] as unknown as string },
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(errorJson(res), errorBody('BAD_REQUEST', MESSAGE));
  assert.equal(await keyCount(), before);
});

test('one Authorization header still authenticates (200, counted)', async () => {
  const before = await keyCount();
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });
  assert.equal(res.statusCode, 200);
  assert.equal(await keyCount(), before + 1);
});
