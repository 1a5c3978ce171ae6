import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MINUTE } from '../../src/clock.ts';
import { newId } from '../../src/ids.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { insertDelivery, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let c: ConsoleClient;
let sub: string;
const ids: string[] = [];

before(async () => {
  h = await createHarness();
  const { email } = await orgWithLogin(h.db, await passwordHash());
  c = await login(h, email);
  ({ subscriptionId: sub } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() }));
  const statuses = ['delivered', 'dead_lettered', 'pending', 'skipped', 'dead_lettered'] as const;
  for (let i = 0; i < statuses.length; i++) {
    const d = await insertDelivery(h.db, {
      orgId: c.orgId,
      subscriptionId: sub,
      createdAt: new Date(h.clock.now().getTime() - (10 - i) * MINUTE),
      status: statuses[i],
      attempts: statuses[i] === 'dead_lettered' ? 5 : 1,
      reason: statuses[i] === 'dead_lettered' ? 'attempts_exhausted' : null,
    });
    ids.push(d.deliveryId);
  }
  const signed = newId();
  await h.db.query(
    `INSERT INTO webhook_attempts (id, delivery_id, organization_id, attempt_number, started_at, duration_ms,
       response_status, error_class, response_snippet, secret_id)
     VALUES ($1, $2, $3, 1, $4, 120, 500, NULL, 'oops', $5), ($6, $2, $3, 2, $7, 10000, NULL, 'timeout', NULL, $5)`,
    [
      newId(),
      ids[1],
      c.orgId,
      new Date('2026-06-15T09:51:00Z'),
      signed,
      newId(),
      new Date('2026-06-15T09:53:00Z'),
    ],
  );
});
after(() => h.close());

test('the log lists deliveries newest first with their attempt log', async () => {
  const res = await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries`);
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.json.items.map((d: { delivery_id: string }) => d.delivery_id),
    [...ids].reverse(),
  );
  assert.equal(res.json.next_cursor, null);
  const dead = res.json.items.find((d: { delivery_id: string }) => d.delivery_id === ids[1]);
  assert.equal(dead.status, 'dead_lettered');
  assert.equal(dead.attempts, 5);
  assert.equal(dead.reason, 'attempts_exhausted');
  assert.equal(dead.last_response_status, 500);
  assert.equal(dead.next_attempt_at, null);
  assert.equal(dead.event_type, 'call.completed');
  assert.deepEqual(
    dead.attempt_log.map((a: Record<string, unknown>) => [
      a.attempt_number,
      a.duration_ms,
      a.response_status,
      a.error_class,
      a.response_snippet,
    ]),
    [
      [1, 120, 500, null, 'oops'],
      [2, 10000, null, 'timeout', null],
    ],
  );
  assert.match(dead.attempt_log[0].signed_with_secret_id, /^[0-9a-f-]{36}$/);
  const pending = res.json.items.find((d: { delivery_id: string }) => d.delivery_id === ids[2]);
  assert.equal(typeof pending.next_attempt_at, 'string');
  assert.deepEqual(pending.attempt_log, []);
});

test('status filters the log', async () => {
  const res = await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries?status=dead_lettered`);
  assert.deepEqual(
    res.json.items.map((d: { delivery_id: string }) => d.delivery_id),
    [ids[4], ids[1]],
  );
});

test('an unknown status answers 400 BAD_REQUEST naming the parameter', async () => {
  const res = await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries?status=failed`);
  assert.equal(res.status, 400);
  assert.equal(res.json.error.code, 'BAD_REQUEST');
  assert.match(res.json.error.message, /status/);
});

test('limit and cursor page through the log without gaps or repeats', async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${cursor}` : '';
    const res = await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries?limit=2${q}`);
    assert.equal(res.status, 200);
    assert.ok(res.json.items.length <= 2);
    seen.push(...res.json.items.map((d: { delivery_id: string }) => d.delivery_id));
    cursor = res.json.next_cursor;
  } while (cursor);
  assert.deepEqual(seen, [...ids].reverse());
});

test('limit outside 1..100 and a forged cursor answer 400', async () => {
  assert.equal((await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries?limit=0`)).status, 400);
  assert.equal((await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries?limit=101`)).status, 400);
  const res = await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries?cursor=garbage`);
  assert.equal(res.status, 400);
  assert.match(res.json.error.message, /cursor/);
});
