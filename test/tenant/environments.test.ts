/**
 * Test mode's two worlds (spec/api-v1-additions.md "Test mode"): test keys, the environment of
 * GET /me, the account bucket counted per environment, webhook fan-out and the
 * service-environment header with a real receiver, contacts and Idempotency-Keys per environment,
 * operator ingestion's `environment`, and the web app's test-mode switch and banner.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { cheapPasswordHash, login, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import { insertApiKey, insertCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, bearer } from '../helpers/http.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { drain, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let orgId: string;
let ownerId: string;
let email: string;
let live: string;
let testKey: string;
let rxLive: Receiver;
let rxTest: Receiver;

const WRITE = ['read.calls', 'read.contacts', 'write.contacts'];
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

before(async () => {
  h = await createHarness();
  ({ orgId, ownerId, email } = await orgWithLogin(h.db, cheapPasswordHash()));
  ({ key: live } = await insertApiKey(h.db, { orgId, userId: ownerId, scopes: WRITE }));
  ({ key: testKey } = await insertApiKey(h.db, {
    orgId,
    userId: ownerId,
    scopes: WRITE,
    environment: 'test',
  }));
  rxLive = await startReceiver();
  rxTest = await startReceiver();
});
after(async () => {
  await rxLive?.close();
  await rxTest?.close();
  await h?.close();
});

const get = (url: string, key: string) => h.app.inject({ url: `/api/v1${url}`, headers: bearer(key) });
const post = (url: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    headers: { ...bearer(key), ...headers },
    payload: body as object,
  });

test('the operator creates a test key with environment "test": prefix cc_test_, GET /me answers environment test', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/api-keys`, {
    scopes: ['read.calls'],
    environment: 'test',
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  assert.equal(body.environment, 'test');
  assert.match(body.key, /^cc_test_[A-Za-z0-9_-]{43}$/);
  const me = await get('/me', body.key);
  assert.equal(me.statusCode, 200);
  assert.equal(me.json().data.environment, 'test');
  const liveMe = await get('/me', live);
  assert.equal(liveMe.json().data.environment, 'live');
  const dflt = await admin(h, 'POST', `/organizations/${orgId}/api-keys`, { scopes: ['read.calls'] });
  assert.match(dflt.json().key, /^cc_live_/);
  const bad = await admin(h, 'POST', `/organizations/${orgId}/api-keys`, {
    scopes: ['read.calls'],
    environment: 'staging',
  });
  assert.equal(bad.statusCode, 400);
  const list = await admin(h, 'GET', `/organizations/${orgId}/api-keys`);
  const envs = new Set(list.json().api_keys.map((k: { environment: string }) => k.environment));
  assert.deepEqual([...envs].sort(), ['live', 'test'], 'the operator lists both environments');
});

test('the console API creates test keys with environment "test" and lists the session environment\'s keys', async () => {
  const c = await login(h, email);
  const res = await c.post('/app/api/api-keys', { scopes: ['read.calls'], environment: 'test' });
  assert.equal(res.status, 201);
  assert.match(res.json.key, /^cc_test_/);
  const me = await get('/me', res.json.key);
  assert.equal(me.json().data.environment, 'test');
  const liveList = await c.get('/app/api/api-keys');
  assert.ok(liveList.json.items.every((k: { environment: string }) => k.environment === 'live'));
  assert.ok(!liveList.json.items.some((k: { api_key_id: string }) => k.api_key_id === res.json.api_key_id));
  // The test key is not the live session's to revoke: 404 as for an unknown id.
  const del = await c.del(`/app/api/api-keys/${res.json.api_key_id}`);
  assert.equal(del.status, 404);
});

test('the account bucket is counted per environment, the same size in both', async () => {
  const { orgId: small, ownerId: o } = await orgWithLogin(h.db, cheapPasswordHash());
  await h.db.query('UPDATE organizations SET account_rate_limit_per_hour = 2 WHERE id = $1', [small]);
  const { key: l } = await insertApiKey(h.db, { orgId: small, userId: o });
  const { key: t } = await insertApiKey(h.db, { orgId: small, userId: o, environment: 'test' });
  assert.equal((await get('/me', l)).statusCode, 200);
  assert.equal((await get('/me', l)).statusCode, 200);
  const over = await get('/me', l);
  assert.equal(over.statusCode, 429);
  const inTest = await get('/me', t);
  assert.equal(inTest.statusCode, 200, 'the test bucket is its own');
  assert.equal(inTest.headers['x-ratelimit-limit'], over.headers['x-ratelimit-limit']);
  const { rows } = await h.db.query<{ bucket: string; count: number }>(
    `SELECT bucket, count FROM rate_limit_windows WHERE bucket LIKE $1 ORDER BY bucket`,
    [`org:${small}%`],
  );
  assert.deepEqual(
    rows.map((r) => [r.bucket, r.count]),
    [
      [`org:${small}`, 3],
      [`org:${small}:test`, 1],
    ],
  );
});

test('a contact with the same number exists in both environments; a second one in one environment is 409', async () => {
  const phone = '+14155550177';
  const a = await post('/contacts', live, { phone });
  const b = await post('/contacts', testKey, { phone });
  assert.equal(a.statusCode, 201, a.body);
  assert.equal(b.statusCode, 201, b.body);
  assert.notEqual(a.json().data.contact_id, b.json().data.contact_id);
  const again = await post('/contacts', testKey, { phone });
  assert.equal(again.statusCode, 409);
  assert.equal(again.json().error.contact_id, b.json().data.contact_id);
  // Each key lists only its own environment's.
  const list = await get(`/contacts?phone=${encodeURIComponent(phone)}`, live);
  assert.deepEqual(
    list.json().data.items.map((c: { contact_id: string }) => c.contact_id),
    [a.json().data.contact_id],
  );
});

test('an Idempotency-Key of one environment does not answer the other', async () => {
  const headers = { 'idempotency-key': 'same-key-both-worlds' };
  const body = { phone: '+14155550178' };
  const a = await post('/contacts', live, body, headers);
  const b = await post('/contacts', testKey, body, headers);
  assert.equal(a.statusCode, 201);
  assert.equal(b.statusCode, 201);
  assert.notEqual(a.json().data.contact_id, b.json().data.contact_id);
  const replay = await post('/contacts', testKey, body, headers);
  assert.equal(replay.statusCode, 201);
  assert.equal(replay.json().data.contact_id, b.json().data.contact_id);
});

test('a test subscription receives only test events, a live one only live ones; each delivery says service-environment', async () => {
  const { orgId: o2, ownerId: u2 } = await orgWithLogin(h.db, cheapPasswordHash());
  await insertSubscription(h.deps, { orgId: o2, url: rxLive.url, at: h.clock.now() });
  await insertSubscription(h.deps, { orgId: o2, url: rxTest.url, at: h.clock.now(), environment: 'test' });
  const { key: l } = await insertApiKey(h.db, { orgId: o2, userId: u2, scopes: WRITE });
  const { key: t } = await insertApiKey(h.db, { orgId: o2, userId: u2, scopes: WRITE, environment: 'test' });
  const lc = await post('/contacts', l, { phone: '+14155550190' });
  const tc = await post('/contacts', t, { phone: '+14155550191' });
  assert.equal(lc.statusCode, 201);
  assert.equal(tc.statusCode, 201);
  await drain(h.deps);
  const seen = (rx: Receiver) =>
    rx.requests.map((r) => [JSON.parse(r.body).resource_id, r.headers['service-environment']]);
  assert.deepEqual(seen(rxLive), [[lc.json().data.contact_id, 'live']]);
  assert.deepEqual(seen(rxTest), [[tc.json().data.contact_id, 'test']]);
  const envelope = JSON.parse(rxTest.requests[0]!.body);
  assert.deepEqual(Object.keys(envelope).sort(), [
    'api_version',
    'created_at',
    'data',
    'event_id',
    'event_type',
    'resource_id',
  ]);
  const { rows } = await h.db.query<{ environment: string }>(
    `SELECT environment FROM events WHERE resource_id = $1`,
    [tc.json().data.contact_id],
  );
  assert.deepEqual(rows, [{ environment: 'test' }]);
});

test("webhook.test goes to the subscription's environment; the console creates test subscriptions and lists environment", async () => {
  rxTest.requests.length = 0;
  const { orgId: o3, email: e3 } = await orgWithLogin(h.db, cheapPasswordHash());
  const c = await login(h, e3);
  const created = await c.post('/app/api/webhook-subscriptions', { url: rxTest.url, environment: 'test' });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  assert.equal(created.json.environment, 'test');
  assert.equal(created.json.state, 'active');
  // From a live session the test subscription is not there.
  assert.equal((await c.get(`/app/api/webhook-subscriptions/${created.json.subscription_id}`)).status, 404);
  assert.deepEqual((await c.get('/app/api/webhook-subscriptions')).json.items, []);
  // Switched to test mode (the page switch), the session sees it and can test it.
  const sw = await h.app.inject({
    method: 'POST',
    url: '/app/environment',
    headers: { ...FORM, cookie: c.cookie },
    payload: new URLSearchParams({
      _csrf: c.csrf,
      environment: 'test',
      next: '/app/settings/integrations',
    }).toString(),
  });
  assert.equal(sw.statusCode, 303);
  assert.equal((await c.get('/app/api/session')).json.environment, 'test');
  const items = (await c.get('/app/api/webhook-subscriptions')).json.items;
  assert.deepEqual(
    items.map((s: { subscription_id: string; environment: string }) => [s.subscription_id, s.environment]),
    [[created.json.subscription_id, 'test']],
  );
  const sent = await c.post(`/app/api/webhook-subscriptions/${created.json.subscription_id}/test`);
  assert.equal(sent.status, 202);
  await drain(h.deps);
  const got = rxTest.requests.filter((r) => r.headers['service-event-type'] === 'webhook.test');
  assert.equal(got.length, 1);
  assert.equal(got[0]!.headers['service-environment'], 'test');
  void o3;
});

test('operator ingestion takes environment (default live): a test call is read by a test key only', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: '+14155550123',
    environment: 'test',
  });
  assert.equal(res.statusCode, 201, res.body);
  const id = res.json().call_id;
  assert.equal((await get(`/calls/${id}`, testKey)).statusCode, 200);
  assert.equal((await get(`/calls/${id}`, live)).statusCode, 404);
  const dflt = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: '+14155550124',
  });
  assert.equal((await get(`/calls/${dflt.json().call_id}`, live)).statusCode, 200);
  assert.equal((await get(`/calls/${dflt.json().call_id}`, testKey)).statusCode, 404);
  const contact = await admin(h, 'POST', `/organizations/${orgId}/contacts`, {
    phone: '+14155550125',
    environment: 'test',
  });
  assert.equal(contact.statusCode, 201, contact.body);
  assert.equal((await get(`/contacts/${contact.json().contact_id}`, testKey)).statusCode, 200);
  assert.equal((await get(`/contacts/${contact.json().contact_id}`, live)).statusCode, 404);
});

test('the web app: the switch is on every page, test mode shows the banner on every page and only test data', async () => {
  const liveCall = await insertCall(h.db, { orgId, callerName: 'Live Larry' });
  const testCall = await insertCall(h.db, { orgId, callerName: 'Test Tina', environment: 'test' });
  await createContact(h.deps, tenantScope(orgId, 'test'), { phone: '+14155550199', first_name: 'Tessa' });
  const form = await h.app.inject({ url: '/app/login' });
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const pre = String(form.headers['set-cookie']).split(';')[0]!;
  const signed = await h.app.inject({
    method: 'POST',
    url: '/app/login',
    headers: { ...FORM, cookie: pre },
    payload: new URLSearchParams({ _csrf: token, email, password: PASSWORD }).toString(),
  });
  const cookie = (signed.headers['set-cookie'] as string[])[0]!.split(';')[0]!;
  const pages = [
    '/app/calls',
    '/app/contacts',
    '/app/trackers',
    '/app/settings/integrations',
    '/app/settings/organization',
  ];
  const BANNER = 'Test mode: you are seeing test data';
  let csrf = '';
  for (const url of pages) {
    const res = await h.app.inject({ url, headers: { cookie } });
    assert.equal(res.statusCode, 200, url);
    assert.ok(res.body.includes('action="/app/environment"'), `${url} has the switch`);
    assert.ok(res.body.includes('Switch to test mode'), url);
    assert.equal(res.body.includes(BANNER), false, `${url}: no banner in live mode`);
    csrf = /name="_csrf" value="([^"]+)"/.exec(res.body)![1]!;
  }
  const listLive = await h.app.inject({ url: '/app/calls', headers: { cookie } });
  assert.ok(listLive.body.includes('Live Larry'));
  assert.equal(listLive.body.includes('Test Tina'), false);
  // Without the CSRF token the switch is refused and nothing changes.
  const forged = await h.app.inject({
    method: 'POST',
    url: '/app/environment',
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({ environment: 'test' }).toString(),
  });
  assert.equal(forged.statusCode, 403);
  const sw = await h.app.inject({
    method: 'POST',
    url: '/app/environment',
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({ _csrf: csrf, environment: 'test', next: '/app/contacts' }).toString(),
  });
  assert.equal(sw.statusCode, 303);
  assert.equal(sw.headers.location, '/app/contacts');
  for (const url of [...pages, `/app/calls/${testCall}`]) {
    const res = await h.app.inject({ url, headers: { cookie } });
    assert.equal(res.statusCode, 200, url);
    assert.ok(res.body.includes(BANNER), `${url}: the banner in test mode`);
    assert.ok(res.body.includes('Switch to live data'), url);
  }
  const listTest = await h.app.inject({ url: '/app/calls', headers: { cookie } });
  assert.ok(listTest.body.includes('Test Tina'));
  assert.equal(listTest.body.includes('Live Larry'), false);
  assert.ok((await h.app.inject({ url: '/app/contacts', headers: { cookie } })).body.includes('Tessa'));
  assert.equal((await h.app.inject({ url: `/app/calls/${liveCall}`, headers: { cookie } })).statusCode, 404);
  // A key created on the page in test mode is a test key by default.
  const created = await h.app.inject({
    method: 'POST',
    url: '/app/settings/integrations/api-keys',
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({ _csrf: csrf, name: 'rehearsal', scopes: 'read.calls' }).toString(),
  });
  // post-redirect-get: the key is shown once on the page the 303 leads to
  assert.equal(created.statusCode, 303);
  const shown = await h.app.inject({ url: String(created.headers.location), headers: { cookie } });
  assert.equal(shown.statusCode, 200);
  assert.match(shown.body, /cc_test_[A-Za-z0-9_-]{43}/);
  assert.ok(shown.body.includes('API key created'));
  // The form's choice: a live key from test mode.
  const liveKey = await h.app.inject({
    method: 'POST',
    url: '/app/settings/integrations/api-keys',
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({
      _csrf: csrf,
      name: 'prod',
      scopes: 'read.calls',
      environment: 'live',
    }).toString(),
  });
  assert.equal(liveKey.statusCode, 303);
  const liveShown = await h.app.inject({ url: String(liveKey.headers.location), headers: { cookie } });
  assert.match(liveShown.body, /cc_live_[A-Za-z0-9_-]{43}/);
});
