import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN } from '../helpers/deps.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { errorJson } from '../helpers/http.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

const unauthorizedBody = {
  success: false,
  error: {
    code: 'UNAUTHORIZED',
    message: 'Missing or invalid operator token: send Authorization: Bearer <ADMIN_TOKEN>.',
  },
  meta: { timestamp: '2026-06-15T10:00:00.000Z' },
};

const body = { name: 'Acme', owner_email: 'auth-test@example.com', owner_password: 'long-enough-pw' };

test('an operator request without a token answers 401 UNAUTHORIZED and creates nothing', async () => {
  const res = await h.operator.inject({ method: 'POST', url: '/admin/v1/organizations', payload: body });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(errorJson(res), unauthorizedBody);
  const { rows } = await h.db.query<{ n: number }>('SELECT count(*) AS n FROM organizations');
  assert.equal(rows[0].n, 0);
});

test('an operator request with a wrong token answers 401 UNAUTHORIZED', async () => {
  const res = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}x` },
    payload: body,
  });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(errorJson(res), unauthorizedBody);
});

test('the operator token in another scheme than Bearer answers 401', async () => {
  const res = await h.operator.inject({
    method: 'PUT',
    url: '/admin/v1/maintenance',
    headers: { authorization: `Basic ${ADMIN_TOKEN}` },
    payload: { public_api_enabled: false },
  });
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().error.code, 'UNAUTHORIZED');
});

test('a request with a malformed JSON body and no token answers 401 before the body is judged', async () => {
  const res = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: { 'content-type': 'application/json' },
    payload: '{"name":',
  });
  assert.equal(res.statusCode, 401);
});

test('the right token is accepted', async () => {
  const res = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: body,
  });
  assert.equal(res.statusCode, 201);
});

test('/healthz answers without a token', async () => {
  const res = await h.operator.inject({ method: 'GET', url: '/healthz' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { status: 'ok' });
});
