import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newId } from '../../src/ids.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver, status } from '../helpers/receiver.ts';
import { createEnv, drain, type Env, emit, insertSubscription } from '../helpers/webhooks.ts';

let env: Env;
let ok: Receiver;
let failing: Receiver;
before(async () => {
  env = await createEnv();
  ok = await startReceiver();
  failing = await startReceiver(status(500));
});
after(async () => {
  await ok?.close();
  await failing?.close();
  await env?.close();
});

async function reach(callId: string): Promise<string[]> {
  const { rows } = await env.db.query<{ subscription_id: string }>(
    'SELECT subscription_id FROM webhook_call_reach WHERE call_id = $1 ORDER BY subscription_id',
    [callId],
  );
  return rows.map((r) => r.subscription_id);
}

async function recipients(eventId: string): Promise<string[]> {
  const { rows } = await env.db.query<{ subscription_id: string }>(
    'SELECT subscription_id FROM webhook_deliveries WHERE event_id = $1 ORDER BY subscription_id',
    [eventId],
  );
  return rows.map((r) => r.subscription_id);
}

test(`on ${engine}, deletion events go only to the subscriptions that successfully received that call's content`, async () => {
  const { orgId } = await insertOrg(env.db);
  const received = await insertSubscription(env.deps, { orgId, url: ok.url });
  const failed = await insertSubscription(env.deps, { orgId, url: failing.url });
  const contactsOnly = await insertSubscription(env.deps, {
    orgId,
    url: ok.url,
    eventTypes: ['contact.created'],
  });
  const callId = newId();
  await emit(env.deps, { orgId, eventType: 'call.completed', callId });
  await drain(env.deps);
  assert.deepEqual(await reach(callId), [received.subscriptionId]);

  const later = await insertSubscription(env.deps, { orgId, url: ok.url });
  for (const type of ['call.deletion_scheduled', 'call.recording.deleted']) {
    const eventId = await emit(env.deps, { orgId, eventType: type, callId });
    assert.deepEqual(await recipients(eventId), [received.subscriptionId], type);
  }
  const unrelated = await emit(env.deps, { orgId, eventType: 'call.recording.deleted', callId: newId() });
  assert.deepEqual(await recipients(unrelated), [], 'no subscription ever received that call');
  assert.ok(failed && contactsOnly && later);
});

test('a delivered deletion event or contact event records no reach', async () => {
  const { orgId } = await insertOrg(env.db);
  await insertSubscription(env.deps, { orgId, url: ok.url });
  const callId = newId();
  await env.db.query(
    `INSERT INTO webhook_call_reach (subscription_id, call_id, organization_id, first_delivered_at)
     SELECT id, $2, $1, $3 FROM webhook_subscriptions WHERE organization_id = $1`,
    [orgId, callId, env.clock.now()],
  );
  await emit(env.deps, { orgId, eventType: 'call.deletion_scheduled', callId });
  const otherCall = newId();
  await emit(env.deps, { orgId, eventType: 'call.recording.deleted', callId: otherCall });
  await emit(env.deps, { orgId, eventType: 'contact.created', callId: null });
  await drain(env.deps);
  assert.deepEqual(await reach(otherCall), []);
});

test('every call event other than deletions records reach on a 2xx', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: ok.url });
  for (const type of ['call.transcribed', 'call.recording.ready', 'call.failed', 'call.tracker.matched']) {
    const callId = newId();
    await emit(env.deps, { orgId, eventType: type, callId });
    await drain(env.deps);
    assert.deepEqual(await reach(callId), [sub.subscriptionId], type);
  }
});
