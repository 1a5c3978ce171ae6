import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/types.ts';
import { DELIVERY_CHANNEL } from '../../src/webhooks/delivery/worker.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { sleep, terminateListener, until, waitForResubscribe } from '../helpers/listen.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { createEnv, type Env, emit, insertSubscription, worker } from '../helpers/webhooks.ts';

const skip =
  engine === 'pglite' ? 'needs PostgreSQL (TEST_DATABASE_URL): PGlite has no LISTEN connection' : false;

let env: Env;
let rx: Receiver;
before(async () => {
  if (skip) return;
  env = await createEnv();
  rx = await startReceiver();
});
after(async () => {
  await rx?.close();
  await env?.close();
});

test('after a PostgreSQL restart of its LISTEN connection, the worker is woken by the next notification', {
  skip,
}, async () => {
  const { orgId } = await insertOrg(env.db);
  await insertSubscription(env.deps, { orgId, url: rx.url });
  // Counts the notifications and reconnections the worker's listener sees.
  let notifications = 0;
  let reconnects = 0;
  const db: Db = {
    ...env.db,
    listen: (channel, onNotify, options) =>
      env.db.listen(
        channel,
        (p) => {
          notifications++;
          onNotify(p);
        },
        {
          ...options,
          onReconnect: () => {
            reconnects++;
            options?.onReconnect?.();
          },
        },
      ),
  };
  // The poll never fires during the test: every delivery below is woken by LISTEN/NOTIFY.
  const w = worker({ ...env.deps, db }, { pollIntervalMs: 3_600_000 });
  await w.start();
  try {
    const first = await emit(env.deps, { orgId });
    await until(() => rx.requests.length === 1, 'the first delivery', 2000);
    assert.equal(rx.requests[0].headers['service-event-id'], first);

    const oldPid = await terminateListener(env.db, DELIVERY_CHANNEL);
    await waitForResubscribe(env.db, DELIVERY_CHANNEL, oldPid);
    await until(() => reconnects === 1, 'the reconnection callback');
    await sleep(200); // the catch-up claim of the reconnection finds nothing and ends
    const seen = notifications;

    const second = await emit(env.deps, { orgId });
    await until(
      () => rx.requests.length === 2,
      'the delivery of the event emitted after the reconnection',
      2000,
    );
    assert.equal(rx.requests[1].headers['service-event-id'], second);
    assert.ok(notifications > seen, 'woken by a notification');
  } finally {
    await w.stop();
  }
});
