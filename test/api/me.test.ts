import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { insertApiKey, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { errorOf } from '../helpers/http.ts';
import { call, rateHeaders } from '../helpers/rest.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

test('GET /me returns the identity of the calling key in the envelope', async () => {
  const { orgId, ownerId } = await insertOrg(h.db);
  const { keyId, key } = await insertApiKey(h.db, { orgId, userId: ownerId, scopes: ['read.calls'] });
  const res = await call(h, '/me', '/me', key);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    success: true,
    data: {
      api_key_id: keyId,
      user_id: ownerId,
      organization_id: orgId,
      scopes: ['read.calls'],
      rate_limit_per_hour: 1000,
      environment: 'live',
    },
    meta: { timestamp: '2026-06-15T10:00:00.000Z' },
  });
  assert.equal(res.headers['cache-control'], 'no-store');
});

test('GET /me needs no scope: a key without scopes and a key with reserved scopes only both get 200', async () => {
  const { orgId, ownerId } = await insertOrg(h.db);
  const none = await insertApiKey(h.db, { orgId, userId: ownerId, scopes: [] });
  const reserved = await insertApiKey(h.db, {
    orgId,
    userId: ownerId,
    scopes: ['write.calls', 'manage.api_keys'],
  });
  const a = await call(h, '/me', '/me', none.key);
  const b = await call(h, '/me', '/me', reserved.key);
  assert.equal(a.statusCode, 200);
  assert.deepEqual(a.json().data.scopes, []);
  assert.equal(b.statusCode, 200);
  assert.deepEqual(b.json().data.scopes, ['write.calls', 'manage.api_keys']);
});

test("GET /me shows the key's own hourly limit when it overrides the default", async () => {
  const { orgId, ownerId } = await insertOrg(h.db);
  const { key } = await insertApiKey(h.db, { orgId, userId: ownerId, rateLimit: 250 });
  const res = await call(h, '/me', '/me', key);
  assert.equal(res.json().data.rate_limit_per_hour, 250);
  assert.deepEqual(rateHeaders(res), {
    limit: '250',
    remaining: '249',
    reset: '2026-06-15T11:00:00.000Z',
    retryAfter: undefined,
  });
});

test('GET /me/ with a trailing slash is the same operation', async () => {
  const { orgId, ownerId } = await insertOrg(h.db);
  const { keyId, key } = await insertApiKey(h.db, { orgId, userId: ownerId });
  const res = await call(h, '/me', '/me/', key);
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().data.api_key_id, keyId);
});

test('GET /me refuses query parameters with 400 naming the parameter', async () => {
  const { orgId, ownerId } = await insertOrg(h.db);
  const { key } = await insertApiKey(h.db, { orgId, userId: ownerId });
  const res = await call(h, '/me', '/me?verbose=1', key);
  assert.equal(res.statusCode, 400);
  assert.deepEqual(errorOf(res), {
    code: 'BAD_REQUEST',
    message: 'Unknown query parameter "verbose". This operation takes no query parameters.',
    param: 'verbose',
  });
});

test('GET /me of an organization without an active subscription answers 402 SUBSCRIPTION_INACTIVE', async () => {
  const { orgId, ownerId } = await insertOrg(h.db, { entitlement: 'inactive' });
  const { key } = await insertApiKey(h.db, { orgId, userId: ownerId });
  const res = await call(h, '/me', '/me', key);
  assert.equal(res.statusCode, 402);
  assert.equal(errorOf(res).code, 'SUBSCRIPTION_INACTIVE');
});
