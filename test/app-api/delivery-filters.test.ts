import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MINUTE } from '../../src/clock.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { insertDelivery, insertSubscription } from '../helpers/webhooks.ts';

/** The delivery log's event-type filter (query event_type) and the bulk resend's (body event_type). */
let h: Harness;
let c: ConsoleClient;
let sub: string;
const byType: Record<string, string[]> = { 'call.completed': [], 'contact.updated': [] };

before(async () => {
  h = await createHarness();
  const { email } = await orgWithLogin(h.db, await passwordHash());
  c = await login(h, email);
  ({ subscriptionId: sub } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() }));
  const rows = [
    ['call.completed', 'dead_lettered'],
    ['contact.updated', 'dead_lettered'],
    ['contact.updated', 'skipped'],
    ['call.completed', 'delivered'],
  ] as const;
  for (let i = 0; i < rows.length; i++) {
    const [eventType, status] = rows[i]!;
    const d = await insertDelivery(h.db, {
      orgId: c.orgId,
      subscriptionId: sub,
      eventType,
      status,
      createdAt: new Date(h.clock.now().getTime() - (10 - i) * MINUTE),
    });
    byType[eventType]!.push(d.deliveryId);
  }
});
after(() => h.close());

const ids = (items: { delivery_id: string }[]) => items.map((d) => d.delivery_id).sort();

test('GET …/deliveries?event_type= lists only that type, combined with status', async () => {
  const res = await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries?event_type=contact.updated`);
  assert.equal(res.status, 200);
  assert.deepEqual(ids(res.json.items), [...byType['contact.updated']!].sort());
  const both = await c.get(
    `/app/api/webhook-subscriptions/${sub}/deliveries?event_type=call.completed&status=dead_lettered`,
  );
  assert.deepEqual(ids(both.json.items), [byType['call.completed']![0]]);
});

test('an unknown event_type answers 400 naming the parameter', async () => {
  const res = await c.get(`/app/api/webhook-subscriptions/${sub}/deliveries?event_type=call.nope`);
  assert.equal(res.status, 400);
  assert.equal(res.json.error.code, 'BAD_REQUEST');
  assert.match(res.json.error.message, /event_type/);
});

test('bulk resend with event_type counts and resends only that type', async () => {
  const window = {
    from: new Date(h.clock.now().getTime() - 60 * MINUTE).toISOString(),
    to: h.clock.now().toISOString(),
  };
  const dry = await c.post(`/app/api/webhook-subscriptions/${sub}/deliveries/resend`, {
    ...window,
    event_type: 'contact.updated',
    dry_run: true,
  });
  assert.equal(dry.status, 200);
  assert.equal(dry.json.count, 2);
  const run = await c.post(`/app/api/webhook-subscriptions/${sub}/deliveries/resend`, {
    ...window,
    event_type: 'contact.updated',
  });
  assert.equal(run.status, 202);
  assert.equal(run.json.count, 2);
  const { rows } = await h.db.query<{ event_type: string; status: string }>(
    'SELECT event_type, status FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY created_at',
    [sub],
  );
  assert.deepEqual(
    rows.map((r) => `${r.event_type}:${r.status}`),
    [
      'call.completed:dead_lettered',
      'contact.updated:pending',
      'contact.updated:pending',
      'call.completed:delivered',
    ],
  );
});
