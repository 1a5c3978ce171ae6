import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { after, before, test } from 'node:test';
import { createWebhookClient, SNIPPET_BYTES } from '../../src/webhooks/delivery/http-client.ts';
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
} from '../helpers/webhooks.ts';

let env: Env;
let rx: Receiver;
before(async () => {
  // Private targets refused, as in production; tests that need the loopback receiver say so.
  env = await createEnv({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' });
  rx = await startReceiver((req, res) => {
    if (req.url === '/hang') return;
    if (req.url === '/reset') return void req.socket.destroy();
    if (req.url === '/huge') {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'y');
      const pump = () => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      res.on('error', () => {});
      pump();
      return;
    }
    res.end('ok');
  });
});
after(async () => {
  await rx?.close();
  await env?.close();
});

const loopbackAllowed = () => createWebhookClient({ allowPrivateTargets: true, timeoutMs: 300 });

async function attemptOnce(path: string, client = loopbackAllowed()) {
  try {
    const { orgId } = await insertOrg(env.db);
    const sub = await insertSubscription(env.deps, { orgId, url: rx.url.replace('/hooks', path) });
    const eventId = await emit(env.deps, { orgId });
    const t = performance.now();
    await drain(env.deps, { client });
    const took = performance.now() - t;
    const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
    return { d, attempts: await attemptsOf(env.db, d.id), took };
  } finally {
    await client.close();
  }
}

test(`on ${engine}, a receiver hanging past the time-out is a transient failure (timeout) retried in 2 min`, async () => {
  const { d, attempts, took } = await attemptOnce('/hang');
  assert.equal(d.status, 'pending');
  assert.equal(d.reason, 'timeout');
  assert.equal(d.next_attempt_at.getTime(), env.clock.now().getTime() + 2 * MIN);
  assert.equal(attempts[0].error_class, 'timeout');
  assert.equal(attempts[0].response_status, null);
  assert.match(String(attempts[0].response_snippet), /no complete response within 300 ms/);
  assert.ok(took < 3000, `took ${took} ms`);
});

test('a receiver resetting the connection is a transient failure (connection)', async () => {
  const { d, attempts } = await attemptOnce('/reset');
  assert.equal(d.status, 'pending');
  assert.equal(d.reason, 'connection');
  assert.equal(attempts[0].error_class, 'connection');
});

test('a receiver streaming an endless 200 body is delivered promptly with a 1 KiB snippet', async () => {
  const { d, attempts, took } = await attemptOnce('/huge');
  assert.equal(d.status, 'delivered');
  assert.equal(attempts[0].response_snippet, 'y'.repeat(SNIPPET_BYTES));
  assert.ok(took < 3000, `took ${took} ms`);
});

test('with private targets refused, a subscription pointing at 127.0.0.1 is refused at every attempt and nothing is sent', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url.replace('http:', 'https:') });
  const eventId = await emit(env.deps, { orgId });
  rx.requests.length = 0;
  await drain(env.deps);
  const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.status, 'pending');
  assert.equal(d.reason, 'blocked_address');
  assert.equal((await attemptsOf(env.db, d.id))[0].error_class, 'blocked_address');
  assert.equal(rx.requests.length, 0);
});

test('with private targets refused, a host name that resolves to 127.0.0.1 is blocked too', async (t) => {
  const toLoopback: LookupFunction = (_h, _o, cb) =>
    (cb as (e: null, a: LookupAddress[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
  const port = new URL(rx.url).port;
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, {
    orgId,
    url: `https://hooks.customer.example:${port}/hooks`,
  });
  const eventId = await emit(env.deps, { orgId });
  rx.requests.length = 0;
  const client = createWebhookClient({ allowPrivateTargets: false, lookup: toLoopback });
  t.after(() => client.close());
  await drain(env.deps, { client });
  const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.reason, 'blocked_address');
  const { rows } = await env.db.query<{ last_error: string }>(
    'SELECT last_error FROM webhook_deliveries WHERE id = $1',
    [d.id],
  );
  assert.equal(
    rows[0].last_error,
    'blocked_address: hooks.customer.example resolves to a loopback address; receivers must be reachable on the public internet ' +
      '(an operator can allow private targets with WEBHOOK_ALLOW_PRIVATE_TARGETS=1 for development).',
  );
  assert.equal(rx.requests.length, 0);
});

test('a subscription without a usable signing secret is never sent unsigned', async (t) => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  await env.db.query(`UPDATE webhook_secrets SET status = 'retired' WHERE subscription_id = $1`, [
    sub.subscriptionId,
  ]);
  const eventId = await emit(env.deps, { orgId });
  rx.requests.length = 0;
  const client = loopbackAllowed();
  t.after(() => client.close());
  await drain(env.deps, { client });
  const d = await deliveryFor(env.db, sub.subscriptionId, eventId);
  assert.equal(d.status, 'pending');
  assert.equal(d.reason, 'no_signing_secret');
  const [a] = await attemptsOf(env.db, d.id);
  assert.equal(a.secret_id, null);
  assert.equal(a.signature_timestamp, null);
  assert.equal(rx.requests.length, 0);
});
