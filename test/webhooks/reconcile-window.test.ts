import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { reconcileDeliveries } from '../../src/webhooks/delivery/reconcile.ts';
import { startWorkers } from '../../src/worker.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { createEnv, type Env, emit, HOUR, insertSubscription } from '../helpers/webhooks.ts';

/**
 * The reconciliation window (spec "Delivery rules": recent gaps within a bounded window) as the
 * worker process really applies it: configuration loaded with its defaults (createEnv sets no
 * WEBHOOK_RECONCILE_WINDOW_HOURS), startWorkers, its first reconciliation pass. A missed event
 * 71 hours old is healed, one 73 hours old is not: changing the default (72) or its conversion to
 * milliseconds fails this test.
 */
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

const deliveriesOf = async (eventId: string) =>
  (
    await env.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1',
      [eventId],
    )
  ).rows[0].n;

/** Two events a subscription missed (its activation committed concurrently): 71 h and 73 h old. */
async function gapsAt71And73Hours(): Promise<{ recent: string; old: string }> {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url, state: 'inactive' });
  const ago = (hours: number) => new Date(env.clock.now().getTime() - hours * HOUR);
  // Both events were emitted while the subscription looked inactive to their transactions…
  const recent = await emit(env.deps, { orgId, at: ago(71) });
  const old = await emit(env.deps, { orgId, at: ago(73) });
  // …while its verification, from before both, committed concurrently.
  await env.db.query(
    `UPDATE webhook_subscriptions SET state = 'active', last_verified_at = $2 WHERE id = $1`,
    [sub.subscriptionId, ago(74)],
  );
  assert.equal(await deliveriesOf(recent), 0);
  assert.equal(await deliveriesOf(old), 0);
  return { recent, old };
}

test(`on ${engine}, the worker reconciles a gap 71 h old and leaves one 73 h old (default window 72 h)`, async () => {
  assert.equal(env.deps.config.WEBHOOK_RECONCILE_WINDOW_HOURS, 72);
  const { recent, old } = await gapsAt71And73Hours();

  const stop = await startWorkers(env.deps);
  try {
    await waitFor(
      async () => (await deliveriesOf(recent)) === 1,
      'the 71 h old gap to be reconciled',
      10_000,
    );
  } finally {
    await stop(); // waits for the reconciliation pass in progress
  }
  assert.equal(await deliveriesOf(recent), 1);
  assert.equal(await deliveriesOf(old), 0, 'outside the window: never reconciled');
});

test('reconcileDeliveries called without a window uses the same 72 h', async () => {
  const { recent, old } = await gapsAt71And73Hours();
  assert.equal((await reconcileDeliveries(env.deps)).deliveriesCreated, 1);
  assert.equal(await deliveriesOf(recent), 1);
  assert.equal(await deliveriesOf(old), 0);
});
