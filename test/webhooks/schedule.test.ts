import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { verifyWebhook } from '../../sdk/src/webhooks/verify.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver, status } from '../helpers/receiver.ts';
import {
  attemptsOf,
  createEnv,
  deliveryFor,
  type Env,
  emit,
  HOUR,
  insertSubscription,
  MIN,
  worker,
} from '../helpers/webhooks.ts';

let env: Env;
let rx: Receiver;
before(async () => {
  env = await createEnv();
  rx = await startReceiver(status(503, 'busy'));
});
after(async () => {
  await rx?.close();
  await env?.close();
});

test(`on ${engine}, a failing delivery is retried after exactly 2 min and 5 min, then 30 min and 2 h plus at most 10 % jitter, and dead-lettered after the fifth failure`, async (t) => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const eventId = await emit(env.deps, { orgId });
  const jitter = [0.999999, 0.999999];
  const w = worker(env.deps, { random: () => jitter.shift() ?? 0 });
  t.after(() => w.stop());
  const t0 = env.clock.now().getTime();

  assert.equal(await w.runOnce(), 1);
  let d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.status, 'pending');
  assert.equal(d.attempts, 1);
  assert.equal(d.reason, 'http_503');
  assert.equal(d.next_attempt_at.toISOString(), new Date(t0 + 2 * MIN).toISOString());

  env.clock.advance(2 * MIN - 1);
  assert.equal(await w.runOnce(), 0, 'not due one millisecond early');
  env.clock.advance(1);
  assert.equal(await w.runOnce(), 1);
  d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.attempts, 2);
  assert.equal(d.next_attempt_at.getTime(), t0 + 2 * MIN + 5 * MIN);

  env.clock.set(d.next_attempt_at);
  assert.equal(await w.runOnce(), 1);
  d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  const third = env.clock.now().getTime();
  const delay30 = d.next_attempt_at.getTime() - third;
  assert.ok(delay30 >= 30 * MIN && delay30 <= 33 * MIN, `30 min retry with jitter, got ${delay30 / MIN} min`);
  assert.ok(delay30 > 32.9 * MIN, 'random close to 1 gives close to +10 %');

  env.clock.set(d.next_attempt_at);
  assert.equal(await w.runOnce(), 1);
  d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  const delay2h = d.next_attempt_at.getTime() - env.clock.now().getTime();
  assert.ok(delay2h >= 2 * HOUR && delay2h <= 2.2 * HOUR, `2 h retry with jitter, got ${delay2h / MIN} min`);

  env.clock.set(d.next_attempt_at);
  assert.equal(await w.runOnce(), 1);
  d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.status, 'dead_lettered');
  assert.equal(d.reason, 'max_attempts');
  assert.equal(d.attempts, 5);

  env.clock.advance(24 * HOUR);
  assert.equal(await w.drain(), 0, 'a dead-lettered delivery is never attempted again');
  const attempts = await attemptsOf(env.db, d.id);
  assert.deepEqual(
    attempts.map((a) => [
      a.attempt_number,
      a.response_status,
      a.error_class,
      a.response_snippet,
      a.secret_id,
    ]),
    [1, 2, 3, 4, 5].map((n) => [n, 503, null, 'busy', sub.secretId]),
  );
});

test('with the jitter source at 0 the 30 min and 2 h retries come exactly on time, never earlier', async (t) => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const eventId = await emit(env.deps, { orgId });
  const w = worker(env.deps, { random: () => 0 });
  t.after(() => w.stop());
  const expected = [2 * MIN, 5 * MIN, 30 * MIN, 2 * HOUR];
  for (const delay of expected) {
    await w.runOnce();
    const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
    assert.equal(d.next_attempt_at.getTime() - env.clock.now().getTime(), delay);
    env.clock.set(d.next_attempt_at);
  }
});

test('every attempt sends the stored body byte for byte, signed with a fresh timestamp that verifies', async (ctx) => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  const eventId = await emit(env.deps, { orgId });
  const { rows } = await env.db.query<{ body: string }>('SELECT body FROM events WHERE id = $1', [eventId]);
  const stored = rows[0].body;
  rx.requests.length = 0;
  const w = worker(env.deps);
  ctx.after(() => w.stop());
  await w.runOnce();
  env.clock.advance(2 * MIN);
  await w.runOnce();
  const mine = rx.requests.filter((r) => r.headers['service-event-id'] === eventId);
  assert.equal(mine.length, 2);
  const [a, b] = mine;
  assert.equal(a.body, stored);
  assert.equal(b.body, stored);
  const ta = /^t=(\d+),/.exec(String(a.headers['service-signature']))![1];
  const tb = /^t=(\d+),/.exec(String(b.headers['service-signature']))![1];
  assert.equal(Number(tb) - Number(ta), 120);
  for (const r of [a, b]) {
    const event = verifyWebhook(r.body, r.headers, sub.secret, { now: () => env.clock.now().getTime() });
    assert.equal(event.event_id, eventId);
  }
  const attempts = await attemptsOf(env.db, (await deliveryFor(env.db, sub.subscriptionId, eventId)).id);
  assert.deepEqual(
    attempts.map((x) => Number(x.signature_timestamp)),
    [Number(ta), Number(tb)],
  );
});
