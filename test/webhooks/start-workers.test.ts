import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startWorkers } from '../../src/worker.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { createEnv, type Env, emit, insertSubscription } from '../helpers/webhooks.ts';

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

test(`on ${engine}, startWorkers delivers events as they are emitted and stops cleanly`, async () => {
  const { orgId } = await insertOrg(env.db);
  await insertSubscription(env.deps, { orgId, url: rx.url });
  const stop = await startWorkers(env.deps);
  let eventId: string;
  try {
    eventId = await emit(env.deps, { orgId });
    const end = Date.now() + 5000;
    while (rx.requests.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  } finally {
    await stop();
  }
  assert.equal(rx.requests.length, 1);
  assert.equal(rx.requests[0].headers['service-event-id'], eventId);
});
