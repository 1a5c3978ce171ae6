import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import {
  attemptsOf,
  createEnv,
  deliveryFor,
  drain,
  type Env,
  emit,
  insertSubscription,
  MIN,
  subscriptionRow,
  worker,
} from '../helpers/webhooks.ts';

let env: Env;
let rx: Receiver;
let orgId: string;
before(async () => {
  env = await createEnv();
  // /s/<code> answers <code>; a 3xx points somewhere else, which must never be requested.
  rx = await startReceiver((req, res) => {
    const code = Number(/\/s\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 200);
    res.statusCode = code;
    if (code >= 300 && code < 400) res.setHeader('location', '/redirected');
    res.end(code === 204 ? undefined : `reply ${code}`);
  });
  ({ orgId } = await insertOrg(env.db));
});
after(async () => {
  await rx?.close();
  await env?.close();
});

async function deliverOnce(code: number) {
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url.replace('/hooks', `/s/${code}`) });
  const eventId = await emit(env.deps, { orgId });
  // Other subscriptions of this organization get the event too; only this one's row matters.
  await drain(env.deps);
  return {
    sub,
    delivery: await deliveryFor(env.db, sub.subscriptionId, eventId),
    state: await subscriptionRow(env.db, sub.subscriptionId),
  };
}

// [status, delivery status, reason, subscription state, paused_reason]
const table: [number, string, string | null, string, string | null][] = [
  [200, 'delivered', null, 'active', null],
  [201, 'delivered', null, 'active', null],
  [204, 'delivered', null, 'active', null],
  [301, 'pending', 'http_301', 'active', null],
  [302, 'pending', 'http_302', 'active', null],
  [400, 'pending', 'http_400', 'active', null],
  [401, 'dead_lettered', 'receiver_rejected_401', 'paused', 'receiver_rejected'],
  [403, 'dead_lettered', 'receiver_rejected_403', 'paused', 'receiver_rejected'],
  [404, 'pending', 'http_404', 'active', null],
  [408, 'pending', 'http_408', 'active', null],
  [410, 'pending', 'http_410', 'active', null],
  [422, 'dead_lettered', 'receiver_rejected_422', 'paused', 'receiver_rejected'],
  [429, 'pending', 'http_429', 'active', null],
  [500, 'pending', 'http_500', 'active', null],
  [503, 'pending', 'http_503', 'active', null],
];

for (const [code, deliveryStatus, reason, state, pausedReason] of table) {
  test(`on ${engine}, a receiver answering ${code} leaves the delivery ${deliveryStatus}${reason ? ` (${reason})` : ''} and the subscription ${state}`, async () => {
    const { delivery, state: sub } = await deliverOnce(code);
    assert.equal(delivery.status, deliveryStatus);
    assert.equal(delivery.reason, reason);
    assert.equal(delivery.last_response_status, code);
    assert.equal(delivery.attempts, 1);
    assert.equal(sub.state, state);
    assert.equal(sub.paused_reason, pausedReason);
    if (deliveryStatus === 'pending') {
      assert.equal(
        delivery.next_attempt_at.getTime(),
        env.clock.now().getTime() + 2 * MIN,
        'first retry in 2 min',
      );
      assert.equal(sub.consecutive_transient_failures, 1);
    } else {
      assert.equal(sub.consecutive_transient_failures, 0);
    }
    const attempts = await attemptsOf(env.db, delivery.id);
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0].response_status, code);
    assert.equal(attempts[0].error_class, null);
    assert.equal(attempts[0].response_snippet, code === 204 ? '' : `reply ${code}`);
  });
}

test('redirects are never followed: the 3xx target is not requested', () => {
  assert.equal(rx.requests.filter((r) => r.url === '/redirected').length, 0);
});

test('a 410 twice in a row pauses the subscription, and the delivery waits instead of being dead-lettered', async () => {
  const { sub, delivery } = await deliverOnce(410);
  assert.equal((await subscriptionRow(env.db, sub.subscriptionId)).consecutive_gone, 1);
  env.clock.advance(2 * MIN);
  await drain(env.deps);
  const d = await env.db.query<{ status: string; attempts: number; held: boolean; reason: string }>(
    'SELECT status, attempts, held, reason FROM webhook_deliveries WHERE id = $1',
    [delivery.id],
  );
  assert.deepEqual(d.rows[0], { status: 'pending', attempts: 2, held: true, reason: 'http_410' });
  const s = await subscriptionRow(env.db, sub.subscriptionId);
  assert.equal(s.state, 'paused');
  assert.equal(s.paused_reason, 'receiver_gone');
  assert.equal(s.consecutive_gone, 0, 'a pause resets the counters');
});

test('a 410, then a 500, then a 410 is not two consecutive 410 and does not pause', async (t) => {
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url.replace('/hooks', '/s/410') });
  const eventId = await emit(env.deps, { orgId, eventType: 'contact.created', callId: null });
  const w = worker(env.deps);
  t.after(() => w.stop());
  await w.drain();
  await env.db.query('UPDATE webhook_subscriptions SET url = $2 WHERE id = $1', [
    sub.subscriptionId,
    rx.url.replace('/hooks', '/s/500'),
  ]);
  env.clock.advance(2 * MIN);
  await w.drain();
  await env.db.query('UPDATE webhook_subscriptions SET url = $2 WHERE id = $1', [
    sub.subscriptionId,
    rx.url.replace('/hooks', '/s/410'),
  ]);
  env.clock.advance(5 * MIN);
  await w.drain();
  const s = await subscriptionRow(env.db, sub.subscriptionId);
  assert.equal(s.state, 'active');
  assert.equal(s.consecutive_gone, 1);
  assert.equal(s.consecutive_transient_failures, 3);
  assert.equal((await deliveryFor(env.db, sub.subscriptionId, eventId)).attempts, 3);
});
