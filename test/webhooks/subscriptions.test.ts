import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decryptSecret } from '../../src/webhooks/delivery/secret-box.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { echoChallenge, receiverPool } from '../helpers/receiver.ts';
import { insertDelivery } from '../helpers/webhooks.ts';

let h: Harness;
let c: ConsoleClient;
let hash: string;
const receivers = receiverPool();
const receiver = receivers.start;

before(async () => {
  h = await createHarness();
  hash = await passwordHash();
  const { email } = await orgWithLogin(h.db, hash);
  c = await login(h, email);
});
after(async () => {
  await receivers?.closeAll();
  await h?.close();
});

const create = (cl: ConsoleClient, body: Record<string, unknown>) =>
  cl.post('/app/api/webhook-subscriptions', body);

test('the handshake is an unsigned POST whose body has exactly event_type and challenge', async () => {
  const r = await receiver();
  const res = await create(c, { url: r.url });
  assert.equal(res.status, 201);
  assert.equal(r.requests.length, 1);
  const req = r.requests[0]!;
  assert.equal(req.method, 'POST');
  assert.equal(req.url, '/hooks');
  assert.equal(req.headers['content-type'], 'application/json');
  assert.equal(req.headers['service-signature'], undefined);
  assert.equal(req.headers['service-event-id'], undefined);
  const body = JSON.parse(req.body);
  assert.deepEqual(Object.keys(body), ['event_type', 'challenge']);
  assert.equal(body.event_type, 'webhook.subscription.verify');
  assert.match(body.challenge, /^[A-Za-z0-9_-]{43}$/);
});

test('permissive: a 200 reply activates; the answer carries the secret once and the state', async () => {
  const r = await receiver();
  const res = await create(c, { url: r.url, event_types: ['call.completed'] });
  assert.equal(res.status, 201);
  assert.equal(res.json.state, 'active');
  assert.match(res.json.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.match(res.json.subscription_id, /^[0-9a-f-]{36}$/);
  assert.equal(res.json.verification.accepted, true);
  assert.equal(res.json.verification.response_status, 200);
});

test('permissive: a 204 reply without body activates', async () => {
  const r = await receiver((_q, res) => res.writeHead(204).end());
  assert.equal((await create(c, { url: r.url })).json.state, 'active');
});

test('permissive: a 500 reply leaves the subscription inactive (still created, 201)', async () => {
  const r = await receiver((_q, res) => res.writeHead(500).end('boom'));
  const res = await create(c, { url: r.url });
  assert.equal(res.status, 201);
  assert.equal(res.json.state, 'inactive');
  assert.equal(res.json.verification.accepted, false);
  assert.equal(res.json.verification.response_status, 500);
});

test('a redirect is not followed and leaves the subscription inactive', async () => {
  const target = await receiver();
  const r = await receiver((_q, res) => res.writeHead(302, { location: target.url }).end());
  assert.equal((await create(c, { url: r.url })).json.state, 'inactive');
  assert.equal(target.requests.length, 0);
});

test('a receiver that cannot be reached leaves the subscription inactive with an error class', async () => {
  const r = await receiver();
  await r.close();
  const res = await create(c, { url: r.url });
  assert.equal(res.json.state, 'inactive');
  assert.equal(res.json.verification.response_status, null);
  assert.equal(res.json.verification.error_class, 'connection');
});

test('strict: an exact JSON echo of the challenge activates', async () => {
  const r = await receiver(echoChallenge);
  const res = await create(c, { url: r.url, verification_mode: 'strict' });
  assert.equal(res.json.state, 'active');
});

test('strict: a wrong echo leaves it inactive', async () => {
  const r = await receiver((_q, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"challenge":"nope"}'),
  );
  assert.equal((await create(c, { url: r.url, verification_mode: 'strict' })).json.state, 'inactive');
});

test('strict: a 2xx that is not JSON leaves it inactive', async () => {
  const r = await receiver((q, res) => res.writeHead(200).end(JSON.parse(q.body).challenge));
  assert.equal((await create(c, { url: r.url, verification_mode: 'strict' })).json.state, 'inactive');
});

test('the handshake creates no event and no delivery', async () => {
  const before = await h.db.query<{ e: number; d: number }>(
    'SELECT (SELECT count(*)::int FROM events) AS e, (SELECT count(*)::int FROM webhook_deliveries) AS d',
  );
  const r = await receiver();
  await create(c, { url: r.url });
  const after = await h.db.query<{ e: number; d: number }>(
    'SELECT (SELECT count(*)::int FROM events) AS e, (SELECT count(*)::int FROM webhook_deliveries) AS d',
  );
  assert.deepEqual(after.rows[0], before.rows[0]);
});

test('the secret is stored encrypted as the initial active secret', async () => {
  const r = await receiver();
  const res = await create(c, { url: r.url });
  const { rows } = await h.db.query<{ ciphertext: string; status: string; kind: string }>(
    'SELECT ciphertext, status, kind FROM webhook_secrets WHERE subscription_id = $1',
    [res.json.subscription_id],
  );
  assert.equal(rows.length, 1);
  assert.equal(rows[0]?.status, 'active');
  assert.equal(rows[0]?.kind, 'initial');
  assert.ok(!rows[0]?.ciphertext.includes(res.json.secret));
  assert.equal(decryptSecret(h.deps.keys.secretEncryptionKey, rows[0]!.ciphertext), res.json.secret);
});

test('GET lists subscriptions as {items} with their fields and never the secret', async () => {
  const r = await receiver();
  const created = await create(c, {
    url: r.url,
    event_types: ['call.completed', 'contact.created'],
    verification_mode: 'permissive',
  });
  const res = await c.get('/app/api/webhook-subscriptions');
  assert.equal(res.status, 200);
  const item = res.json.items.find(
    (s: { subscription_id: string }) => s.subscription_id === created.json.subscription_id,
  );
  assert.equal(item.url, r.url);
  assert.deepEqual(item.event_types, ['call.completed', 'contact.created']);
  assert.equal(item.verification_mode, 'permissive');
  assert.equal(item.state, 'active');
  assert.equal(item.paused_reason, null);
  assert.equal(item.created_at, h.clock.now().toISOString());
  assert.equal(item.pending_rotation, null);
  assert.ok(!JSON.stringify(res.json).includes(created.json.secret));
  const one = await c.get(`/app/api/webhook-subscriptions/${created.json.subscription_id}`);
  assert.deepEqual(one.json, item);
});

test('an unknown event type answers 400 BAD_REQUEST naming it, and nothing is created or sent', async () => {
  const r = await receiver();
  const res = await create(c, { url: r.url, event_types: ['call.completed', 'call.exploded'] });
  assert.equal(res.status, 400);
  assert.equal(res.json.error.code, 'BAD_REQUEST');
  assert.match(res.json.error.message, /"call\.exploded"/);
  assert.equal(r.requests.length, 0);
});

test('webhook.test cannot be selected: 400 BAD_REQUEST', async () => {
  const r = await receiver();
  const res = await create(c, { url: r.url, event_types: ['webhook.test'] });
  assert.equal(res.status, 400);
  assert.match(res.json.error.message, /Test action/);
});

test('an unknown verification mode answers 400 BAD_REQUEST', async () => {
  const r = await receiver();
  const res = await create(c, { url: r.url, verification_mode: 'lenient' });
  assert.equal(res.status, 400);
  assert.match(res.json.error.message, /verification_mode/);
});

test('a non-http URL answers 400 BAD_REQUEST', async () => {
  const res = await create(c, { url: 'ftp://example.com/hooks' });
  assert.equal(res.status, 400);
  assert.match(res.json.error.message, /url/);
});

test('DELETE answers 204, skips its waiting deliveries and hides it; a second DELETE is 404', async () => {
  const r = await receiver();
  const created = await create(c, { url: r.url });
  const id = created.json.subscription_id;
  const { eventId } = await insertDelivery(h.db, {
    orgId: c.orgId,
    subscriptionId: id,
    createdAt: h.clock.now(),
  });
  assert.equal((await c.del(`/app/api/webhook-subscriptions/${id}`)).status, 204);
  const { rows } = await h.db.query<{ status: string; reason: string }>(
    'SELECT status, reason FROM webhook_deliveries WHERE event_id = $1',
    [eventId],
  );
  assert.deepEqual(rows[0], { status: 'skipped', reason: 'subscription_deleted' });
  const list = await c.get('/app/api/webhook-subscriptions');
  assert.ok(!list.json.items.some((s: { subscription_id: string }) => s.subscription_id === id));
  assert.equal((await c.get(`/app/api/webhook-subscriptions/${id}`)).status, 404);
  assert.equal((await c.del(`/app/api/webhook-subscriptions/${id}`)).status, 404);
});

test("another organization's subscription answers 404 on every route", async () => {
  const r = await receiver();
  const other = await orgWithLogin(h.db, hash);
  const oc = await login(h, other.email);
  const id = (await create(oc, { url: r.url })).json.subscription_id;
  assert.equal((await c.get(`/app/api/webhook-subscriptions/${id}`)).status, 404);
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${id}/verify`)).status, 404);
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${id}/test`)).status, 404);
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${id}/rotations`, {})).status, 404);
  assert.equal((await c.get(`/app/api/webhook-subscriptions/${id}/deliveries`)).status, 404);
  assert.equal((await c.del(`/app/api/webhook-subscriptions/${id}`)).status, 404);
  assert.equal((await oc.get(`/app/api/webhook-subscriptions/${id}`)).status, 200);
});

test('the 21st active subscription of an account is refused with 422 VALIDATION_ERROR and nothing is sent', async () => {
  const other = await orgWithLogin(h.db, hash);
  const oc = await login(h, other.email);
  const r = await receiver();
  for (let i = 0; i < 20; i++) {
    const res = await create(oc, { url: `${r.url}?n=${i}` });
    assert.equal(res.json.state, 'active', `subscription ${i + 1}`);
  }
  const sent = r.requests.length;
  const res = await create(oc, { url: r.url });
  assert.equal(res.status, 422);
  assert.equal(res.json.error.code, 'VALIDATION_ERROR');
  assert.match(res.json.error.message, /20 active webhook subscriptions/);
  assert.equal(r.requests.length, sent);
  const { rows } = await h.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_subscriptions WHERE organization_id = $1',
    [other.orgId],
  );
  assert.equal(rows[0]?.n, 20);
});

test('the limit follows organizations.max_active_subscriptions', async () => {
  const other = await orgWithLogin(h.db, hash);
  await h.db.query('UPDATE organizations SET max_active_subscriptions = 1 WHERE id = $1', [other.orgId]);
  const oc = await login(h, other.email);
  const r = await receiver();
  assert.equal((await create(oc, { url: r.url })).json.state, 'active');
  assert.equal((await create(oc, { url: r.url })).status, 422);
});

test('an account keeps at most five times its active limit of subscriptions in any state: 422 beyond', async () => {
  const other = await orgWithLogin(h.db, hash);
  await h.db.query('UPDATE organizations SET max_active_subscriptions = 1 WHERE id = $1', [other.orgId]);
  const oc = await login(h, other.email);
  const r = await receiver((_q, res) => res.writeHead(500).end());
  for (let i = 0; i < 5; i++) assert.equal((await create(oc, { url: r.url })).json.state, 'inactive');
  const res = await create(oc, { url: r.url });
  assert.equal(res.status, 422);
  assert.equal(res.json.error.code, 'VALIDATION_ERROR');
  assert.match(res.json.error.message, /delete unused ones/);
});

test('with private targets allowed, localhost., 127.0.0.1. and [::1] receivers are accepted', async (t) => {
  const r = await receiver();
  const port = new URL(r.url).port;
  const asked: string[] = [];
  h.deps.dnsLookup = (hostname, _o, cb) => {
    asked.push(hostname);
    (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  };
  t.after(() => {
    h.deps.dnsLookup = undefined;
  });
  const viaName = await create(c, { url: `http://LOCALHOST.:${port}/hooks` });
  assert.equal(viaName.status, 201);
  assert.equal(viaName.json.state, 'active');
  assert.deepEqual(asked, ['localhost.']);
  const viaLiteral = await create(c, { url: `http://127.0.0.1.:${port}/hooks` });
  assert.equal(viaLiteral.status, 201);
  assert.equal(viaLiteral.json.state, 'active');
  assert.equal(r.requests.length, 2);
  const v6 = await create(c, { url: 'http://[::1]:9/hooks' });
  assert.equal(v6.status, 201);
  assert.equal(v6.json.verification.accepted, false);
});
