/**
 * "Consecutive" means consecutive (spec "Webhook subscription states": two consecutive 410 replies,
 * 50 consecutive transient failures): each outcome counts against the subscription's counters as
 * they stand after every earlier outcome, however successes are batched. A scripted client hands
 * the worker its replies in an order the test chooses, so the success's write is still queued (or
 * blocked on a lock) when the next failure comes in.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { PostResult, WebhookClient } from '../../src/webhooks/delivery/http-client.ts';
import { EVENT_ID_HEADER } from '../../src/webhooks/delivery/signing.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import {
  createEnv,
  deliveryFor,
  type Env,
  emit,
  insertSubscription,
  subscriptionRow,
  worker,
} from '../helpers/webhooks.ts';

let env: Env;
before(async () => {
  env = await createEnv();
});
after(async () => {
  await env.close();
});

interface PendingPost {
  eventId: string;
  answer(status: number): void;
}

/** A client whose POSTs wait until the test answers them, in the order the test picks. */
function scriptedClient(): WebhookClient & { posts: PendingPost[] } {
  const posts: PendingPost[] = [];
  return {
    posts,
    post(_url, _body, headers) {
      return new Promise<PostResult>((resolve) => {
        posts.push({
          eventId: headers[EVENT_ID_HEADER],
          answer: (status) =>
            resolve({ kind: 'response', status, snippet: `answered ${status}`, durationMs: 1 }),
        });
      });
    },
    async close() {},
  };
}

async function until(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not in time: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function setup(events: number) {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: 'https://receiver.example.test/hooks' });
  const ids: string[] = [];
  for (let i = 0; i < events; i++)
    ids.push(await emit(env.deps, { orgId, eventType: 'contact.updated', callId: null }));
  const client = scriptedClient();
  const w = worker(env.deps, { client, concurrency: 128 });
  return { orgId, sub, ids, client, w };
}

test(`on ${engine}, 410, 2xx, 410 with the success's write still queued: the subscription stays active`, async () => {
  const { sub, client, w } = await setup(3);
  const run = w.runOnce();
  try {
    await until(async () => client.posts.length === 3, 'three requests in flight');
    const [first, second, third] = client.posts;
    first.answer(410);
    await until(
      async () => (await subscriptionRow(env.db, sub.subscriptionId)).consecutive_gone === 1,
      'the first 410 recorded',
    );
    // The 2xx and then the second 410, in the same turn: the success has not been written yet.
    second.answer(200);
    third.answer(410);
    assert.equal(await run, 3);
    const s = await subscriptionRow(env.db, sub.subscriptionId);
    assert.equal(s.state, 'active');
    assert.equal(s.paused_reason, null);
    assert.equal(s.consecutive_gone, 1, 'only the 410 after the 2xx counts');
    assert.equal(s.consecutive_transient_failures, 1);
    assert.equal((await deliveryFor(env.db, sub.subscriptionId, second.eventId)).status, 'delivered');
    const last = await deliveryFor(env.db, sub.subscriptionId, third.eventId);
    assert.equal(last.status, 'pending');
    assert.equal(last.last_response_status, 410);
    assert.equal(last.held, false);
  } finally {
    for (const p of client.posts) p.answer(200);
    await run.catch(() => {});
    await w.stop();
  }
});

test(`on ${engine}, 49 transient failures, 2xx, 49 transient failures: the subscription stays active`, async () => {
  const { sub, client, w } = await setup(99);
  const run = w.runOnce();
  try {
    await until(async () => client.posts.length === 99, '99 requests in flight');
    const posts = [...client.posts];
    for (const p of posts.slice(0, 49)) p.answer(503);
    await until(
      async () => (await subscriptionRow(env.db, sub.subscriptionId)).consecutive_transient_failures === 49,
      '49 failures recorded',
    );
    posts[49].answer(200);
    for (const p of posts.slice(50)) p.answer(503);
    assert.equal(await run, 99);
    const s = await subscriptionRow(env.db, sub.subscriptionId);
    assert.equal(s.state, 'active');
    assert.equal(s.paused_reason, null);
    assert.equal(s.consecutive_transient_failures, 49, 'the 2xx broke the run');
    assert.equal(s.consecutive_gone, 0);
    assert.equal((await deliveryFor(env.db, sub.subscriptionId, posts[49].eventId)).status, 'delivered');
  } finally {
    for (const p of client.posts) p.answer(200);
    await run.catch(() => {});
    await w.stop();
  }
});

test(`on ${engine}, a success received after a 410 is counted after it: 410, 410, 2xx still pauses`, async () => {
  const { sub, client, w } = await setup(3);
  const run = w.runOnce();
  try {
    await until(async () => client.posts.length === 3, 'three requests in flight');
    const [first, second, third] = client.posts;
    first.answer(410);
    await until(
      async () => (await subscriptionRow(env.db, sub.subscriptionId)).consecutive_gone === 1,
      'the first 410 recorded',
    );
    // The second 410 and then a 2xx in the same turn: the 2xx must not be written first.
    second.answer(410);
    third.answer(200);
    assert.equal(await run, 3);
    const s = await subscriptionRow(env.db, sub.subscriptionId);
    assert.equal(s.state, 'paused');
    assert.equal(s.paused_reason, 'receiver_gone');
    assert.equal((await deliveryFor(env.db, sub.subscriptionId, third.eventId)).status, 'delivered');
  } finally {
    for (const p of client.posts) p.answer(200);
    await run.catch(() => {});
    await w.stop();
  }
});

test('410, 2xx, 410 with the success’s write blocked by a lock on the subscription: the subscription stays active', {
  skip:
    engine === 'postgres'
      ? false
      : 'needs PostgreSQL (set TEST_DATABASE_URL): a lock held by another connection',
}, async () => {
  const { orgId, sub, client, w } = await setup(1);
  // The first 410 is recorded before the next deliveries are claimed: they see the counter at 1.
  const first = w.runOnce();
  await until(async () => client.posts.length === 1, 'first request in flight');
  client.posts[0].answer(410);
  assert.equal(await first, 1);
  assert.equal((await subscriptionRow(env.db, sub.subscriptionId)).consecutive_gone, 1);
  await emit(env.deps, { orgId, eventType: 'contact.updated', callId: null });
  await emit(env.deps, { orgId, eventType: 'contact.updated', callId: null });

  let release = () => {};
  let locked = () => {};
  const isLocked = new Promise<void>((r) => {
    locked = r;
  });
  // Another transaction holds the subscription row (as a fan-out or a state change would).
  const holder = env.db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR UPDATE', [sub.subscriptionId]);
    locked();
    await new Promise<void>((r) => {
      release = r;
    });
  });
  await isLocked;
  const run = w.runOnce();
  try {
    await until(async () => client.posts.length === 3, 'two more requests in flight');
    const [, success, gone] = client.posts;
    success.answer(200);
    // The success's write either waits for the lock or (skipping the reset) lands without it.
    await until(async () => {
      const waiting = await env.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      const d = await deliveryFor(env.db, sub.subscriptionId, success.eventId);
      return waiting.rows[0].n > 0 || d.status === 'delivered';
    }, 'the success being written');
    gone.answer(410);
    await new Promise((r) => setTimeout(r, 100));
    release();
    await holder;
    assert.equal(await run, 2);
    const s = await subscriptionRow(env.db, sub.subscriptionId);
    assert.equal(s.state, 'active');
    assert.equal(s.consecutive_gone, 1, 'only the 410 after the 2xx counts');
    assert.equal((await deliveryFor(env.db, sub.subscriptionId, success.eventId)).status, 'delivered');
  } finally {
    release();
    await holder.catch(() => {});
    for (const p of client.posts) p.answer(200);
    await run.catch(() => {});
    await w.stop();
  }
});
