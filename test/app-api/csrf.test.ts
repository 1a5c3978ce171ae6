import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { insertDelivery, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let c: ConsoleClient;
let routes: [method: 'POST' | 'DELETE', url: string, body?: Record<string, unknown>][];

before(async () => {
  h = await createHarness();
  const { email } = await orgWithLogin(h.db, await passwordHash());
  c = await login(h, email);
  const { subscriptionId: sub } = await insertSubscription(h.deps, {
    orgId: c.orgId,
    url: 'http://127.0.0.1:9/none',
    at: h.clock.now(),
  });
  const d = await insertDelivery(h.db, {
    orgId: c.orgId,
    subscriptionId: sub,
    createdAt: h.clock.now(),
    status: 'dead_lettered',
  });
  const key = await c.post('/app/api/api-keys', { scopes: ['read.calls'] });
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub}/rotations`, {});
  assert.equal(rot.status, 201);
  const s = `/app/api/webhook-subscriptions/${sub}`;
  routes = [
    ['POST', '/app/api/logout'],
    ['POST', '/app/api/api-keys', { scopes: ['read.calls'] }],
    ['DELETE', `/app/api/api-keys/${key.json.api_key_id}`],
    ['POST', '/app/api/webhook-subscriptions', { url: 'http://127.0.0.1:9/x' }],
    ['POST', `${s}/verify`],
    ['POST', `${s}/test`],
    ['POST', `${s}/rotations`, {}],
    ['POST', `${s}/rotations/${rot.json.rotation_id}/test`],
    ['POST', `${s}/rotations/${rot.json.rotation_id}/activate`],
    ['POST', `${s}/deliveries/resend`, { from: '2026-06-01T00:00:00Z', to: '2026-06-02T00:00:00Z' }],
    ['POST', `/app/api/deliveries/${d.deliveryId}/resend`],
    ['DELETE', s],
  ];
});
after(() => h.close());

const snapshot = async () =>
  (
    await h.db.query<{ s: string }>(
      `SELECT (SELECT count(*) FROM api_keys WHERE revoked_at IS NULL) || '/' ||
              (SELECT count(*) FROM webhook_subscriptions WHERE deleted_at IS NULL) || '/' ||
              (SELECT count(*) FROM webhook_secrets WHERE status = 'pending') || '/' ||
              (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') || '/' ||
              (SELECT count(*) FROM sessions) AS s`,
    )
  ).rows[0]!.s;

test('every state-changing console route answers 403 FORBIDDEN without the CSRF token and changes nothing', async () => {
  const before = await snapshot();
  for (const [method, url, body] of routes) {
    const res = await h.app.inject({
      method,
      url,
      headers: { cookie: c.cookie },
      ...(body ? { payload: body } : {}),
    });
    assert.equal(res.statusCode, 403, `${method} ${url}`);
    assert.equal(res.json().error.code, 'FORBIDDEN', `${method} ${url}`);
  }
  assert.equal(await snapshot(), before);
});

test('every state-changing console route answers 403 FORBIDDEN with a wrong CSRF token', async () => {
  for (const [method, url, body] of routes) {
    const res = await h.app.inject({
      method,
      url,
      headers: { cookie: c.cookie, 'x-csrf-token': 'A'.repeat(43) },
      ...(body ? { payload: body } : {}),
    });
    assert.equal(res.statusCode, 403, `${method} ${url}`);
  }
});

test('every console route answers 401 UNAUTHORIZED without a session, even with a CSRF token', async () => {
  const reads: [method: 'GET', url: string][] = [
    ['GET', '/app/api/session'],
    ['GET', '/app/api/api-keys'],
    ['GET', '/app/api/webhook-subscriptions'],
  ];
  for (const [method, url, body] of [...routes, ...reads]) {
    const res = await h.app.inject({
      method,
      url,
      headers: { 'x-csrf-token': c.csrf },
      ...(body ? { payload: body } : {}),
    });
    assert.equal(res.statusCode, 401, `${method} ${url}`);
    assert.equal(res.json().error.code, 'UNAUTHORIZED');
  }
});

test('reads need no CSRF token', async () => {
  const res = await h.app.inject({
    method: 'GET',
    url: '/app/api/webhook-subscriptions',
    headers: { cookie: c.cookie },
  });
  assert.equal(res.statusCode, 200);
});
