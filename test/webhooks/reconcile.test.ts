import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newId } from '../../src/ids.ts';
import { reconcileDeliveries } from '../../src/webhooks/delivery/reconcile.ts';
import { emitEvent } from '../../src/webhooks/outbox/outbox.ts';
import { engine } from '../helpers/db.ts';
import { sampleEventData } from '../helpers/event-samples.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import {
  createEnv,
  deliveryFor,
  drain,
  type Env,
  emit,
  HOUR,
  insertSubscription,
} from '../helpers/webhooks.ts';

let env: Env;
let rx: Receiver;
before(async () => {
  env = await createEnv();
  rx = await startReceiver();
});
after(async () => {
  await rx?.close();
  await env?.close();
});

async function countDeliveries(subscriptionId: string): Promise<number> {
  const { rows } = await env.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1',
    [subscriptionId],
  );
  return rows[0].n;
}

/** An event whose fan-out did not see the subscription: it was inactive in the emitting transaction. */
async function eventMissedBy(
  orgId: string,
  subscriptionId: string,
  at: Date,
  eventType = 'call.completed',
  callId = newId(),
) {
  await env.db.query(`UPDATE webhook_subscriptions SET state = 'inactive' WHERE id = $1`, [subscriptionId]);
  const eventId = await emit(env.deps, { orgId, eventType, callId, at });
  // …while its verification committed concurrently, a moment before the event was created.
  await env.db.query(
    `UPDATE webhook_subscriptions SET state = 'active', last_verified_at = $2 WHERE id = $1`,
    [subscriptionId, new Date(at.getTime() - 1000)],
  );
  return eventId;
}

test(`on ${engine}, reconciliation inserts the delivery a concurrent activation missed, once, and the worker delivers it`, async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const eventId = await eventMissedBy(orgId, sub.subscriptionId, new Date(env.clock.now().getTime() - HOUR));
  assert.equal(await countDeliveries(sub.subscriptionId), 0);

  const first = await reconcileDeliveries(env.deps);
  assert.equal(first.deliveriesCreated, 1);
  const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.status, 'pending');
  assert.equal(d.held, false);
  assert.equal(d.next_attempt_at.getTime(), env.clock.now().getTime());

  const second = await reconcileDeliveries(env.deps);
  assert.equal(second.deliveriesCreated, 0, 'idempotent');
  assert.equal(await countDeliveries(sub.subscriptionId), 1);

  rx.requests.length = 0;
  await drain(env.deps);
  assert.equal(rx.requests.length, 1);
  assert.equal(rx.requests[0].headers['service-event-id'], eventId);
});

test('events older than the window are not reconciled', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  await eventMissedBy(orgId, sub.subscriptionId, new Date(env.clock.now().getTime() - 73 * HOUR));
  assert.equal((await reconcileDeliveries(env.deps)).deliveriesCreated, 0);
  assert.equal((await reconcileDeliveries(env.deps, { windowMs: 74 * HOUR })).deliveriesCreated, 1);
});

test('an event created before the subscription was verified is not delivered to it', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url, state: 'inactive' });
  await emit(env.deps, { orgId, at: new Date(env.clock.now().getTime() - 2 * HOUR) });
  await env.db.query(
    `UPDATE webhook_subscriptions SET state = 'active', last_verified_at = $2 WHERE id = $1`,
    [sub.subscriptionId, new Date(env.clock.now().getTime() - HOUR)],
  );
  assert.equal((await reconcileDeliveries(env.deps)).deliveriesCreated, 0);
  assert.equal(await countDeliveries(sub.subscriptionId), 0);
});

test('a missed event of a type the subscription did not select is not reconciled', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url, eventTypes: ['contact.created'] });
  await eventMissedBy(orgId, sub.subscriptionId, new Date(env.clock.now().getTime() - HOUR));
  assert.equal((await reconcileDeliveries(env.deps)).deliveriesCreated, 0);
});

test('a missed deletion event is reconciled only to a subscription that received the call', async () => {
  const { orgId } = await insertOrg(env.db);
  const reached = await insertSubscription(env.deps, { orgId, url: rx.url });
  const callId = newId();
  await env.db.query(
    `INSERT INTO webhook_call_reach (subscription_id, call_id, organization_id, first_delivered_at) VALUES ($1, $2, $3, $4)`,
    [reached.subscriptionId, callId, orgId, env.clock.now()],
  );
  const notReached = await insertSubscription(env.deps, { orgId, url: rx.url });
  const at = new Date(env.clock.now().getTime() - HOUR);
  await eventMissedBy(orgId, reached.subscriptionId, at, 'call.recording.deleted', callId);
  await env.db.query(`UPDATE webhook_subscriptions SET last_verified_at = $2 WHERE id = $1`, [
    notReached.subscriptionId,
    new Date(at.getTime() - 1000),
  ]);
  const r = await reconcileDeliveries(env.deps);
  assert.equal(r.deliveriesCreated, 1);
  assert.equal(await countDeliveries(reached.subscriptionId), 1);
  assert.equal(await countDeliveries(notReached.subscriptionId), 0);
});

test('a webhook.test event is never reconciled to other subscriptions', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  await env.db.transaction((tx) =>
    emitEvent(tx, {
      organizationId: orgId,
      environment: 'live',
      eventType: 'webhook.test',
      resourceId: newId(),
      callId: null,
      factKey: newId(),
      data: sampleEventData('webhook.test', newId(), env.clock.now()),
      createdAt: env.clock.now(),
    }),
  );
  await env.db.query(`DELETE FROM webhook_deliveries WHERE subscription_id = $1`, [sub.subscriptionId]);
  assert.equal((await reconcileDeliveries(env.deps)).deliveriesCreated, 0);
});

test('a pending delivery held although its subscription is active is released, and one of a paused subscription held', async () => {
  const { orgId } = await insertOrg(env.db);
  const active = await insertSubscription(env.deps, { orgId, url: rx.url });
  const paused = await insertSubscription(env.deps, { orgId, url: rx.url, state: 'paused' });
  const eventId = await emit(env.deps, { orgId });
  // Rows written around the triggers (e.g. by hand in psql).
  await env.db.query('UPDATE webhook_deliveries SET held = NOT held WHERE event_id = $1', [eventId]);
  const r = await reconcileDeliveries(env.deps);
  assert.equal(r.released, 1);
  assert.equal(r.held, 1);
  assert.equal((await deliveryFor(env.db, active.subscriptionId, eventId)).held, false);
  assert.equal((await deliveryFor(env.db, paused.subscriptionId, eventId)).held, true);
});

test('pending deliveries of a deleted subscription end skipped with reason subscription_deleted', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const eventId = await emit(env.deps, { orgId });
  await env.db.query('UPDATE webhook_subscriptions SET deleted_at = $2 WHERE id = $1', [
    sub.subscriptionId,
    env.clock.now(),
  ]);
  assert.equal(
    (await deliveryFor(env.db, sub.subscriptionId, eventId)).held,
    true,
    'held at once by the trigger',
  );
  const r = await reconcileDeliveries(env.deps);
  assert.equal(r.skippedDeleted, 1);
  const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.status, 'skipped');
  assert.equal(d.reason, 'subscription_deleted');
});
