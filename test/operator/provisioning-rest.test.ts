import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, bearer } from '../helpers/http.ts';

/** What operator provisioning does to the public REST API (needs src/http/public/api-v1/auth.ts and src/maintenance.ts). */
let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

const me = (key: string) => h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });

let n = 0;
async function orgWithKey(scopes = ['read.calls', 'read.recordings']) {
  const org = await admin(h, 'POST', '/organizations', {
    name: 'Acme',
    owner_email: `rest${++n}@example.com`,
    owner_password: 'long-enough',
  });
  assert.equal(org.statusCode, 201);
  const { organization_id, owner_user_id } = org.json();
  const key = await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, {
    scopes,
    rate_limit_per_hour: 500,
  });
  assert.equal(key.statusCode, 201);
  const { api_key_id, key: secret } = key.json();
  return { organization_id, owner_user_id, api_key_id, key: secret as string };
}

test('a key created through the operator API identifies itself on GET /api/v1/me', async () => {
  const k = await orgWithKey();
  const res = await me(k.key);
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.success, true);
  assert.deepEqual(body.data, {
    api_key_id: k.api_key_id,
    user_id: k.owner_user_id,
    organization_id: k.organization_id,
    scopes: ['read.calls', 'read.recordings'],
    rate_limit_per_hour: 500,
    environment: 'live',
  });
});

test('a key revoked through the operator API answers 401 from then on', async () => {
  const k = await orgWithKey();
  assert.equal((await me(k.key)).statusCode, 200);
  assert.equal((await admin(h, 'DELETE', `/api-keys/${k.api_key_id}`)).statusCode, 204);
  const res = await me(k.key);
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().error.code, 'UNAUTHORIZED');
});

test('an organization set to entitlement inactive answers 402 SUBSCRIPTION_INACTIVE until reactivated', async () => {
  const k = await orgWithKey();
  assert.equal(
    (await admin(h, 'PATCH', `/organizations/${k.organization_id}`, { entitlement: 'inactive' })).statusCode,
    200,
  );
  const res = await me(k.key);
  assert.equal(res.statusCode, 402);
  assert.equal(res.json().error.code, 'SUBSCRIPTION_INACTIVE');
  await admin(h, 'PATCH', `/organizations/${k.organization_id}`, { entitlement: 'active' });
  assert.equal((await me(k.key)).statusCode, 200);
});

test('PUT /maintenance false makes every /api/v1 request answer 503 MAINTENANCE until switched back', async () => {
  const k = await orgWithKey();
  assert.equal((await admin(h, 'PUT', '/maintenance', { public_api_enabled: false })).statusCode, 200);
  try {
    const res = await me(k.key);
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().error.code, 'MAINTENANCE');
    const anonymous = await h.app.inject({ method: 'GET', url: '/api/v1/calls' });
    assert.equal(anonymous.statusCode, 503);
  } finally {
    await admin(h, 'PUT', '/maintenance', { public_api_enabled: true });
  }
  assert.equal((await me(k.key)).statusCode, 200);
});
