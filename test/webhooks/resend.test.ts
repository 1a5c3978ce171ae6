import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DAY, HOUR } from '../../src/clock.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { insertDelivery, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let c: ConsoleClient;
let hash: string;

before(async () => {
  h = await createHarness();
  hash = await passwordHash();
  const { email } = await orgWithLogin(h.db, hash);
  c = await login(h, email);
});
after(() => h.close());

type Row = {
  event_id: string;
  status: string;
  attempts: number;
  next_attempt_at: Date;
  reason: string | null;
  held: boolean;
};
const row = async (id: string) =>
  (
    await h.db.query<Row>(
      'SELECT event_id, status, attempts, next_attempt_at, reason, held FROM webhook_deliveries WHERE id = $1',
      [id],
    )
  ).rows[0]!;

test('resending a dead-lettered delivery answers 202 and resets the same row with the same event_id', async () => {
  const { subscriptionId: sub } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
  const d = await insertDelivery(h.db, {
    orgId: c.orgId,
    subscriptionId: sub,
    createdAt: new Date(h.clock.now().getTime() - DAY),
    status: 'dead_lettered',
    attempts: 5,
    reason: 'attempts_exhausted',
  });
  const res = await c.post(`/app/api/deliveries/${d.deliveryId}/resend`);
  assert.equal(res.status, 202);
  assert.equal(res.json.delivery_id, d.deliveryId);
  assert.equal(res.json.event_id, d.eventId);
  assert.equal(res.json.status, 'pending');
  assert.equal(res.json.subscription_state, 'active');
  assert.deepEqual(await row(d.deliveryId), {
    event_id: d.eventId,
    status: 'pending',
    attempts: 0,
    next_attempt_at: h.clock.now(),
    reason: null,
    held: false,
  });
  const { rows } = await h.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND event_id = $2',
    [sub, d.eventId],
  );
  assert.equal(rows[0]?.n, 1);
});

test('resending a skipped delivery answers 202', async () => {
  const { subscriptionId: sub } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
  const d = await insertDelivery(h.db, {
    orgId: c.orgId,
    subscriptionId: sub,
    createdAt: h.clock.now(),
    status: 'skipped',
    reason: 'emergency_rotation',
  });
  assert.equal((await c.post(`/app/api/deliveries/${d.deliveryId}/resend`)).status, 202);
  assert.equal((await row(d.deliveryId)).status, 'pending');
});

for (const status of ['pending', 'delivered'] as const) {
  test(`resending a ${status} delivery answers 409 CONFLICT and changes nothing`, async () => {
    const { subscriptionId: sub } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
    const d = await insertDelivery(h.db, {
      orgId: c.orgId,
      subscriptionId: sub,
      createdAt: h.clock.now(),
      status,
    });
    const before = await row(d.deliveryId);
    const res = await c.post(`/app/api/deliveries/${d.deliveryId}/resend`);
    assert.equal(res.status, 409);
    assert.equal(res.json.error.code, 'CONFLICT');
    assert.match(res.json.error.message, /dead-lettered or skipped/);
    assert.deepEqual(await row(d.deliveryId), before);
  });
}

test('a resend for a paused subscription is queued but held, and the answer says it waits for re-verification', async () => {
  const { subscriptionId: sub } = await insertSubscription(h.deps, {
    orgId: c.orgId,
    state: 'paused',
    pausedReason: 'receiver_rejected',
    at: h.clock.now(),
  });
  const d = await insertDelivery(h.db, {
    orgId: c.orgId,
    subscriptionId: sub,
    createdAt: h.clock.now(),
    status: 'dead_lettered',
  });
  const res = await c.post(`/app/api/deliveries/${d.deliveryId}/resend`);
  assert.equal(res.status, 202);
  assert.equal(res.json.subscription_state, 'paused');
  assert.match(res.json.message, /re-verify/);
  const r = await row(d.deliveryId);
  assert.equal(r.status, 'pending');
  assert.equal(r.held, true);
});

test("another organization's delivery answers 404 NOT_FOUND", async () => {
  const other = await orgWithLogin(h.db, hash);
  const { subscriptionId: sub } = await insertSubscription(h.deps, { orgId: other.orgId, at: h.clock.now() });
  const d = await insertDelivery(h.db, {
    orgId: other.orgId,
    subscriptionId: sub,
    createdAt: h.clock.now(),
    status: 'dead_lettered',
  });
  const res = await c.post(`/app/api/deliveries/${d.deliveryId}/resend`);
  assert.equal(res.status, 404);
  assert.equal(res.json.error.code, 'NOT_FOUND');
  assert.equal((await row(d.deliveryId)).status, 'dead_lettered');
});

test('bulk resend: a dry run counts, the real run re-queues exactly those and answers 202', async () => {
  const { subscriptionId: sub } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
  const base = new Date('2026-06-10T00:00:00.000Z');
  const at = (hours: number) => new Date(base.getTime() + hours * HOUR);
  const mk = (status: 'dead_lettered' | 'skipped' | 'delivered' | 'pending', hours: number) =>
    insertDelivery(h.db, { orgId: c.orgId, subscriptionId: sub, createdAt: at(hours), status });
  const inWindow = [await mk('dead_lettered', 1), await mk('skipped', 2), await mk('dead_lettered', 23)];
  const delivered = await mk('delivered', 3);
  const pending = await mk('pending', 4);
  const outside = await mk('dead_lettered', 24); // "to" is exclusive
  const body = { from: at(0).toISOString(), to: at(24).toISOString() };
  const url = `/app/api/webhook-subscriptions/${sub}/deliveries/resend`;

  const dry = await c.post(url, { ...body, dry_run: true });
  assert.equal(dry.status, 200);
  assert.equal(dry.json.count, 3);
  assert.equal(dry.json.dry_run, true);
  assert.equal((await row(inWindow[0]!.deliveryId)).status, 'dead_lettered');

  const onlyDead = await c.post(url, { ...body, statuses: ['dead_lettered'], dry_run: true });
  assert.equal(onlyDead.json.count, 2);

  const real = await c.post(url, body);
  assert.equal(real.status, 202);
  assert.equal(real.json.count, 3);
  for (const d of inWindow) assert.equal((await row(d.deliveryId)).status, 'pending');
  assert.equal((await row(delivered.deliveryId)).status, 'delivered');
  assert.equal((await row(pending.deliveryId)).attempts, 0);
  assert.equal((await row(outside.deliveryId)).status, 'dead_lettered');
  assert.equal((await c.post(url, { ...body, dry_run: true })).json.count, 0);
});

test('bulk resend refuses a window longer than 30 days, an inverted window and unknown statuses with 400', async () => {
  const { subscriptionId: sub } = await insertSubscription(h.deps, { orgId: c.orgId, at: h.clock.now() });
  const url = `/app/api/webhook-subscriptions/${sub}/deliveries/resend`;
  const long = await c.post(url, { from: '2026-05-01T00:00:00Z', to: '2026-06-01T00:00:01Z' });
  assert.equal(long.status, 400);
  assert.match(long.json.error.message, /30 days/);
  const inverted = await c.post(url, { from: '2026-06-02T00:00:00Z', to: '2026-06-01T00:00:00Z' });
  assert.equal(inverted.status, 400);
  const badStatus = await c.post(url, {
    from: '2026-06-01T00:00:00Z',
    to: '2026-06-02T00:00:00Z',
    statuses: ['delivered'],
  });
  assert.equal(badStatus.status, 400);
  assert.match(badStatus.json.error.message, /statuses/);
  const badDate = await c.post(url, { from: 'yesterday', to: '2026-06-02T00:00:00Z' });
  assert.equal(badDate.status, 400);
  assert.match(badDate.json.error.message, /from/);
});

test("bulk resend on another organization's subscription answers 404", async () => {
  const other = await orgWithLogin(h.db, hash);
  const { subscriptionId: sub } = await insertSubscription(h.deps, { orgId: other.orgId, at: h.clock.now() });
  const res = await c.post(`/app/api/webhook-subscriptions/${sub}/deliveries/resend`, {
    from: '2026-06-01T00:00:00Z',
    to: '2026-06-02T00:00:00Z',
  });
  assert.equal(res.status, 404);
});
