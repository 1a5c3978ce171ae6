import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import Stripe from 'stripe';
import type { CliIo } from '../../src/cli/command.ts';
import { reconnectDelayMs, runListen, SseParser } from '../../src/cli/listen.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { sseEvent } from '../../src/http/public/app-api/listen.ts';
import { RELEASE_HELD_SQL } from '../../src/webhooks/delivery/reconcile.ts';
import { assertActivationAllowed } from '../../src/webhooks/subscriptions/handshake.ts';
import {
  ackListenDeliveries,
  claimListenDeliveries,
  expireListenSessions,
  LISTEN_GRACE_MS,
  LISTEN_HEARTBEAT_MS,
  LISTEN_LEASE_MS,
  leaseOwnerOf,
  openListenSession,
  triggerListenEvent,
} from '../../src/webhooks/subscriptions/listen.ts';
import { listSubscriptions } from '../../src/webhooks/subscriptions/subscriptions.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { drain, emit } from '../helpers/webhooks.ts';

/**
 * `callcap listen` on the service side: the SSE framing the CLI parses, the cli subscription as the
 * outbox and the worker see it (fanned out to, never POSTed, invisible to the console's list and
 * limit), the stream's claim / lease / acknowledgement, resume, expiry, trigger; and the stream
 * over a real socket.
 */
let h: Harness;
let c: ConsoleClient;
const stripe = new Stripe('sk_test_x');
/** The harness clock stands in 2026; stripe checks the timestamp against the real time. */
const FAKE_CLOCK_TOLERANCE = 100 * 365 * 24 * 3600;

before(async () => {
  h = await createHarness();
  const { email } = await orgWithLogin(h.db, await passwordHash());
  c = await login(h, email);
});
after(() => h.close());

test('SseParser: chunked input, CRLF and CR, comments, multi-line data, ids', () => {
  const p = new SseParser();
  assert.deepEqual(p.push(': keep-alive\n\nid: d1\nevent: deli'), []);
  assert.deepEqual(p.push('very\ndata: {"a":\ndata: 1}\n'), []);
  assert.deepEqual(p.push('\n'), [{ event: 'delivery', data: '{"a":\n1}', id: 'd1' }]);
  assert.deepEqual(p.push('data: x\r'), []);
  assert.deepEqual(p.push('\n\r\n'), [{ event: 'message', data: 'x', id: 'd1' }]);
  // A CR at the end of a chunk may be half of a CRLF: the blank line is known with the next chunk.
  assert.deepEqual(p.push('event: end\rdata:{}\r\r'), []);
  assert.deepEqual(p.push('\n'), [{ event: 'end', data: '{}', id: 'd1' }]);
  assert.deepEqual(p.push('event: nothing\n\n'), [], 'an event without data is not dispatched');
  // What the server writes parses back to what it sent.
  const body = { delivery_id: 'x', body: '{"k":"line\\nbreak ✓"}' };
  assert.deepEqual(new SseParser().push(sseEvent('delivery', body, 'x')), [
    { event: 'delivery', data: JSON.stringify(body), id: 'x' },
  ]);
});

test('reconnectDelayMs doubles from 0.5 s to at most 10 s with ±20 % jitter', () => {
  assert.equal(
    reconnectDelayMs(0, () => 0.5),
    500,
  );
  assert.equal(
    reconnectDelayMs(1, () => 0.5),
    1000,
  );
  assert.equal(
    reconnectDelayMs(10, () => 0.5),
    10_000,
  );
  assert.equal(
    reconnectDelayMs(0, () => 0),
    400,
  );
  assert.equal(
    reconnectDelayMs(0, () => 1),
    600,
  );
});

test('a listen session is a held subscription: fanned out to, never POSTed, not listed, not counted', async () => {
  const { orgId } = await orgWithLogin(h.db, await passwordHash());
  await h.db.query('UPDATE organizations SET max_active_subscriptions = 1 WHERE id = $1', [orgId]);
  const s = await openListenSession(h.deps, tenantScope(orgId), { eventTypes: ['call.completed'] });
  assert.match(String(s.secret), /^whsec_/);
  assert.deepEqual(s.event_types, ['call.completed']);
  assert.deepEqual(await listSubscriptions(h.db, tenantScope(orgId), h.clock.now()), []);
  await h.db.transaction((tx) => assertActivationAllowed(tx, tenantScope(orgId), null));

  const eventId = await emit(h.deps, { orgId, eventType: 'call.completed' });
  await emit(h.deps, { orgId, eventType: 'call.transcribed' });
  const rows = async () =>
    (
      await h.db.query<{ id: string; event_id: string; status: string; held: boolean; attempts: number }>(
        'SELECT id, event_id, status, held, attempts FROM webhook_deliveries WHERE subscription_id = $1',
        [s.subscription_id],
      )
    ).rows;
  assert.deepEqual(
    (await rows()).map((r) => [r.event_id, r.status, r.held]),
    [[eventId, 'pending', true]],
    'only the selected type, held',
  );
  assert.equal(await drain(h.deps), 0, 'the worker attempts nothing');
  await h.db.query(RELEASE_HELD_SQL);
  assert.equal((await rows())[0]?.held, true, 'reconciliation does not release it');

  // The stream claims it, signed as the worker would sign it.
  const owner = leaseOwnerOf('stream-1');
  const [d, ...more] = await claimListenDeliveries(h.deps, { subscriptionId: s.subscription_id, owner });
  assert.equal(more.length, 0);
  assert.ok(d);
  assert.equal(d.event_id, eventId);
  const verified = stripe.webhooks.constructEvent(
    d.body,
    d.headers['service-signature'] as string,
    s.secret!,
    FAKE_CLOCK_TOLERANCE,
  );
  assert.equal((verified as unknown as { event_id: string }).event_id, eventId);
  assert.deepEqual(Object.keys(d.headers).sort(), [
    'content-type',
    'service-environment',
    'service-event-id',
    'service-event-type',
    'service-signature',
  ]);
  assert.deepEqual(await claimListenDeliveries(h.deps, { subscriptionId: s.subscription_id, owner }), []);

  // Unacknowledged past its lease: sent again, same event id.
  h.clock.advance(LISTEN_LEASE_MS + 1);
  const again = await claimListenDeliveries(h.deps, { subscriptionId: s.subscription_id, owner });
  assert.deepEqual(
    again.map((x) => [x.delivery_id, x.event_id]),
    [[d.delivery_id, eventId]],
  );
  // A resume hands leased rows back at once.
  await openListenSession(h.deps, tenantScope(orgId), { resumeId: s.subscription_id });
  const resumed = await claimListenDeliveries(h.deps, {
    subscriptionId: s.subscription_id,
    owner: leaseOwnerOf('stream-2'),
  });
  assert.equal(resumed.length, 1);

  // An ack from a stream that no longer holds the lease changes nothing; the holder's does.
  const ack = { delivery_id: d.delivery_id, status: 204, duration_ms: 7 };
  const base = { scope: tenantScope(orgId), subscriptionId: s.subscription_id };
  assert.equal(await ackListenDeliveries(h.deps, { ...base, streamId: 'stream-1', acks: [ack] }), 0);
  assert.equal(await ackListenDeliveries(h.deps, { ...base, streamId: 'stream-2', acks: [ack] }), 1);
  assert.deepEqual(
    (await rows()).map((r) => [r.status, r.attempts]),
    [['delivered', 1]],
  );
  const attempts = await h.db.query<{ response_status: number; duration_ms: number }>(
    'SELECT response_status, duration_ms FROM webhook_attempts WHERE delivery_id = $1',
    [d.delivery_id],
  );
  assert.deepEqual(attempts.rows, [{ response_status: 204, duration_ms: 7 }]);

  // Idle past the grace period: deleted, its waiting deliveries skipped.
  await emit(h.deps, { orgId, eventType: 'call.completed' });
  h.clock.advance(LISTEN_GRACE_MS + 1);
  assert.equal(await expireListenSessions(h.deps), 1);
  assert.deepEqual((await rows()).map((r) => r.status).sort(), ['delivered', 'skipped']);
  await assert.rejects(
    openListenSession(h.deps, tenantScope(orgId), { resumeId: s.subscription_id }),
    (e: Error & { code?: string }) => e.code === 'NOT_FOUND',
  );
});

test('trigger: 409 without a session, webhook.test to every session, other types replay the latest event', async () => {
  const { orgId } = await orgWithLogin(h.db, await passwordHash());
  await assert.rejects(
    triggerListenEvent(h.deps, { scope: tenantScope(orgId), eventType: 'webhook.test' }),
    (e: Error & { code?: string; status?: number }) => e.code === 'CONFLICT' && e.status === 409,
  );
  const s = await openListenSession(h.deps, tenantScope(orgId), { eventTypes: ['contact.created'] });
  const t = await triggerListenEvent(h.deps, { scope: tenantScope(orgId), eventType: 'webhook.test' });
  assert.deepEqual([t.event_type, t.sessions], ['webhook.test', 1]);
  await assert.rejects(
    triggerListenEvent(h.deps, { scope: tenantScope(orgId), eventType: 'call.completed' }),
    (e: Error & { code?: string }) => e.code === 'NOT_FOUND',
  );
  await assert.rejects(
    triggerListenEvent(h.deps, { scope: tenantScope(orgId), eventType: 'call.nope' }),
    (e: Error & { code?: string }) => e.code === 'BAD_REQUEST',
  );
  const older = await emit(h.deps, { orgId, eventType: 'call.completed' });
  h.clock.advance(1000);
  const latest = await emit(h.deps, { orgId, eventType: 'call.completed' });
  assert.notEqual(older, latest);
  const r = await triggerListenEvent(h.deps, { scope: tenantScope(orgId), eventType: 'call.completed' });
  assert.equal(r.event_id, latest);
  const sent = await claimListenDeliveries(h.deps, {
    subscriptionId: s.subscription_id,
    owner: leaseOwnerOf('x'),
  });
  assert.deepEqual(sent.map((d) => d.event_type).sort(), ['call.completed', 'webhook.test']);
});

test('over HTTP: the stream needs a session, sends ready and deliveries; ack needs CSRF; DELETE ends it', async () => {
  const anon = await h.app.inject({ method: 'GET', url: '/app/api/listen' });
  assert.equal(anon.statusCode, 401);
  assert.equal(anon.json().error.code, 'UNAUTHORIZED');
  const plain = await c.get('/app/api/listen');
  assert.equal(plain.status, 400, 'without Accept: text/event-stream');
  assert.match((plain.json as { error: { message: string } }).error.message, /Accept: text\/event-stream/);
  const bad = await h.app.inject({
    method: 'GET',
    url: '/app/api/listen?events=call.nope',
    headers: { cookie: c.cookie, accept: 'text/event-stream' },
  });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().error.code, 'BAD_REQUEST');

  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const abort = new AbortController();
  const res = await fetch(`${base}/app/api/listen`, {
    headers: { cookie: c.cookie, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  try {
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const parser = new SseParser();
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const next = async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        const m = parser.push(decoder.decode(value, { stream: true }));
        if (m.length) return m;
      }
    };
    const [ready] = await next();
    assert.equal(ready?.event, 'ready');
    const r = JSON.parse(ready!.data);
    assert.deepEqual(Object.keys(r).sort(), [
      'event_types',
      'grace_seconds',
      'resumed',
      'secret',
      'stream_id',
      'subscription_id',
    ]);
    const trig = await c.post('/app/api/listen/trigger', { event_type: 'webhook.test' });
    assert.equal(trig.status, 202);
    const [msg] = await next();
    assert.equal(msg?.event, 'delivery');
    const d = JSON.parse(msg!.data);
    assert.equal(msg?.id, d.delivery_id);
    assert.equal(d.event_id, (trig.json as { event_id: string }).event_id);
    stripe.webhooks.constructEvent(d.body, d.headers['service-signature'], r.secret, FAKE_CLOCK_TOLERANCE);

    const noCsrf = await h.app.inject({
      method: 'POST',
      url: `/app/api/listen/${r.subscription_id}/ack`,
      headers: { cookie: c.cookie },
      payload: {
        stream_id: r.stream_id,
        acks: [{ delivery_id: d.delivery_id, status: 200, duration_ms: 3 }],
      },
    });
    assert.equal(noCsrf.statusCode, 403);
    const ack = await c.post(`/app/api/listen/${r.subscription_id}/ack`, {
      stream_id: r.stream_id,
      acks: [{ delivery_id: d.delivery_id, status: 200, duration_ms: 3 }],
    });
    assert.equal(ack.status, 200);
    assert.deepEqual(ack.json, { acknowledged: 1 });
    const listed = await c.get('/app/api/webhook-subscriptions');
    assert.deepEqual(listed.json, { items: [] }, 'the session is not a console subscription');
    const gone = await c.get(`/app/api/webhook-subscriptions/${r.subscription_id}`);
    assert.equal(gone.status, 404);

    // The heartbeat runs on the service's clock: a period later the session is seen at that time.
    const seenAt = async () =>
      (
        await h.db.query<{ listen_seen_at: Date }>(
          'SELECT listen_seen_at FROM webhook_subscriptions WHERE id = $1',
          [r.subscription_id],
        )
      ).rows[0]?.listen_seen_at.getTime();
    h.clock.advance(LISTEN_HEARTBEAT_MS);
    const beatAt = h.clock.now().getTime();
    await until(async () => (await seenAt()) === beatAt, 'the heartbeat');

    const del = await c.del(`/app/api/listen/${r.subscription_id}`);
    assert.equal(del.status, 204);
    assert.equal((await c.del(`/app/api/listen/${r.subscription_id}`)).status, 404);
    // The next beat finds the session gone: the stream says so and ends.
    h.clock.advance(LISTEN_HEARTBEAT_MS);
    const [last] = await next();
    assert.equal(last?.event, 'end');
    assert.deepEqual(JSON.parse(last!.data), { reason: 'session_deleted' });
    await assert.rejects(next(), /stream ended/);
  } finally {
    abort.abort();
  }
});

test('runListen (the CLI loop) forwards with the signed headers and prints one JSON object per event', async () => {
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const rx = await startReceiver((_q, res) => res.writeHead(202).end());
  const abort = new AbortController();
  let out = '';
  let err = '';
  const io: CliIo = {
    env: {},
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    readStdin: async () => '',
  };
  const running = runListen({
    auth: { base, cookie: c.cookie, csrf_token: c.csrf, email: 'x', organization_id: c.orgId },
    relogin: null,
    forwardTo: rx.url,
    events: [],
    printJson: true,
    io,
    signal: abort.signal,
  });
  try {
    const secret = await until(() => /signing secret is (whsec_\S+)/.exec(err)?.[1], 'the secret');
    const trig = await c.post('/app/api/listen/trigger', { event_type: 'webhook.test' });
    assert.equal(trig.status, 202);
    const line = await until(() => out.split('\n').find(Boolean), 'the JSON line');
    const j = JSON.parse(line);
    assert.deepEqual(Object.keys(j).sort(), [
      'error',
      'event',
      'event_id',
      'event_type',
      'latency_ms',
      'status',
    ]);
    assert.equal(j.event_id, (trig.json as { event_id: string }).event_id);
    assert.equal(j.status, 202);
    assert.equal(j.error, null);
    const [r] = rx.requests;
    assert.equal(r?.headers['service-event-id'], j.event_id);
    stripe.webhooks.constructEvent(
      r!.body,
      String(r!.headers['service-signature']),
      secret,
      FAKE_CLOCK_TOLERANCE,
    );
    await until(async () => {
      const { rows } = await h.db.query<{ status: string }>(
        'SELECT status FROM webhook_deliveries WHERE event_id = $1',
        [j.event_id],
      );
      return rows[0]?.status === 'delivered';
    }, 'the acknowledgement');
  } finally {
    abort.abort();
    const r = await running;
    await rx.close();
    assert.equal(r.forwarded, 1);
  }
});

async function until<T>(check: () => T | Promise<T>, what: string, ms = 15_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
