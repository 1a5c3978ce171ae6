import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let c: ConsoleClient;

before(async () => {
  h = await createHarness();
  const { email } = await orgWithLogin(h.db, await passwordHash());
  c = await login(h, email);
});
after(() => h.close());

const CALL_COMPLETED_KEYS = [
  'app_url',
  'call_created_at',
  'call_id',
  'caller_phone',
  'company_phone_e164',
  'customer_phone_e164',
  'customer_phone_national',
  'direction',
  'duration',
  'recording_url',
  'transcript_original',
  'transcript_processed',
];

test('Test on an active subscription answers 202 with the event and its one delivery', async () => {
  // The selection does not matter: webhook.test goes to this subscription only.
  const { subscriptionId: id } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
  await h.db.query(`UPDATE webhook_subscriptions SET event_types = '{contact.created}' WHERE id = $1`, [id]);
  const { subscriptionId: other } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
  const res = await c.post(`/app/api/webhook-subscriptions/${id}/test`);
  assert.equal(res.status, 202);
  assert.deepEqual(Object.keys(res.json).sort(), ['delivery_id', 'event_id']);
  const { rows } = await h.db.query<{
    id: string;
    subscription_id: string;
    status: string;
    event_type: string;
    secret_id: string | null;
  }>(
    'SELECT id, subscription_id, status, event_type, secret_id FROM webhook_deliveries WHERE event_id = $1',
    [res.json.event_id],
  );
  assert.deepEqual(rows, [
    {
      id: res.json.delivery_id,
      subscription_id: id,
      status: 'pending',
      event_type: 'webhook.test',
      secret_id: null,
    },
  ]);
  assert.notEqual(rows[0]?.subscription_id, other);
});

test('the stored body is the six-key envelope with a synthetic call.completed payload and the test keys', async () => {
  const { subscriptionId: id } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
  const res = await c.post(`/app/api/webhook-subscriptions/${id}/test`);
  const { rows } = await h.db.query<{
    body: string;
    event_type: string;
    resource_id: string;
    call_id: string | null;
  }>('SELECT body, event_type, resource_id, call_id FROM events WHERE id = $1', [res.json.event_id]);
  const row = rows[0]!;
  assert.equal(row.event_type, 'webhook.test');
  assert.equal(row.resource_id, id);
  assert.equal(row.call_id, null);
  const env = JSON.parse(row.body);
  assert.deepEqual(Object.keys(env), [
    'api_version',
    'event_id',
    'event_type',
    'resource_id',
    'created_at',
    'data',
  ]);
  assert.equal(env.api_version, '2026-06-15');
  assert.equal(env.event_id, res.json.event_id);
  assert.equal(env.event_type, 'webhook.test');
  assert.equal(env.resource_id, id);
  assert.equal(env.created_at, h.clock.now().toISOString());
  assert.deepEqual(
    Object.keys(env.data).sort(),
    [...CALL_COMPLETED_KEYS, '_message', '_sent_at', '_test'].sort(),
  );
  assert.equal(env.data._test, true);
  assert.equal(typeof env.data._message, 'string');
  assert.equal(env.data._sent_at, h.clock.now().toISOString());
  assert.equal(env.data.recording_url, null);
  assert.match(env.data.call_id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(env.data.call_id, id);
  assert.equal(env.data.app_url, `https://calls.example.test/app/calls/${env.data.call_id}`);
  assert.equal(typeof env.data.duration, 'number');
  assert.equal(typeof env.data.transcript_processed, 'object');
  assert.match(env.event_id, /^[0-9a-f]{8}-[0-9a-f]{4}-5/);
});

test('two Test clicks make two events with different event ids', async () => {
  const { subscriptionId: id } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
  const a = await c.post(`/app/api/webhook-subscriptions/${id}/test`);
  const b = await c.post(`/app/api/webhook-subscriptions/${id}/test`);
  assert.notEqual(a.json.event_id, b.json.event_id);
});

for (const state of ['paused', 'inactive'] as const) {
  test(`Test on a ${state} subscription answers 409 SUBSCRIPTION_INACTIVE and queues nothing`, async () => {
    const { subscriptionId: id } = await insertSubscription(h.deps, {
      orgId: c.orgId,
      state,
      at: h.clock.now(),
    });
    const res = await c.post(`/app/api/webhook-subscriptions/${id}/test`);
    assert.equal(res.status, 409);
    assert.equal(res.json.error.code, 'SUBSCRIPTION_INACTIVE');
    assert.match(res.json.error.message, /re-verify/);
    const { rows } = await h.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1',
      [id],
    );
    assert.equal(rows[0]?.n, 0);
  });
}
