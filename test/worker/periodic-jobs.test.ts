/**
 * Every periodic job of the worker role, driven through the real startWorkers wiring: the test moves
 * the fake clock by the job's documented period (docs/operations.md "Periodic jobs") and sees the
 * job's effect. Nothing calls a job function directly. The scheduler checks the clock every few
 * real milliseconds here (tickMs), so no test waits real minutes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hourWindow } from '../../src/accounts/rate-limit-windows.ts';
import { submitTranscript } from '../../src/capture/pipeline.ts';
import { DAY, HOUR, MINUTE, SECOND } from '../../src/clock.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { emitEvent } from '../../src/webhooks/outbox/outbox.ts';
import { startRotation } from '../../src/webhooks/subscriptions/rotation.ts';
import { startWorkers } from '../../src/worker.ts';
import { engine } from '../helpers/db.ts';
import { sampleEventData } from '../helpers/event-samples.ts';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let rx: Receiver;
before(async () => {
  h = await createHarness();
  rx = await startReceiver();
});
after(async () => {
  await rx.close();
  await h.close();
});

/** The real wiring, with the clock checked every 5 real ms instead of every second. */
const TICK_MS = 5;

/** Runs body with the worker role started; always stops it. */
async function withWorkers(body: () => Promise<void>): Promise<void> {
  const stop = await startWorkers(h.deps, { tickMs: TICK_MS });
  try {
    await body();
  } finally {
    await stop();
  }
}

/** Reads until done(value) or 10 real seconds passed; returns the last value read (asserted by the caller). */
async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const end = Date.now() + 10_000;
  let v = await read();
  while (!done(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 10));
    v = await read();
  }
  return v;
}

/** A few scheduler ticks in real time: long enough for a job that was due to have started. */
const settle = () => new Promise((r) => setTimeout(r, 20 * TICK_MS));

async function orgWithKey(): Promise<{ orgId: string; get: (url: string) => Promise<number> }> {
  const { orgId, ownerId } = await insertOrg(h.db);
  const { key } = await insertApiKey(h.db, { orgId, userId: ownerId });
  const get = async (url: string) =>
    (await h.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { authorization: `Bearer ${key}` } }))
      .statusCode;
  return { orgId, get };
}

test(`on ${engine}, a scheduled deletion is carried out within a minute of its pending_deletion_at: the call answers 404`, async () => {
  const { orgId, get } = await orgWithKey();
  const at = new Date(h.clock.now().getTime() + 30 * SECOND);
  const call = await insertCall(h.db, { orgId, pendingDeletionAt: at });
  await withWorkers(async () => {
    await settle();
    assert.equal(await get(`/calls/${call}`), 200, 'not erased before its time');
    h.clock.advance(MINUTE);
    assert.equal(
      await eventually(
        () => get(`/calls/${call}`),
        (s) => s === 404,
      ),
      404,
    );
  });
});

test(`on ${engine}, with retention_days the audio is deleted within a minute of passing the retention: recording-url answers 410`, async () => {
  const { orgId, get } = await orgWithKey();
  await h.db.query('UPDATE organizations SET retention_days = 30 WHERE id = $1', [orgId]);
  const createdAt = new Date(h.clock.now().getTime() - 30 * DAY + 30 * SECOND);
  const call = await insertCall(h.db, { orgId, recordingState: 'available', duration: 12, createdAt });
  await withWorkers(async () => {
    await settle();
    assert.equal(await get(`/calls/${call}/recording-url`), 200, 'kept until the retention passes');
    h.clock.advance(MINUTE);
    assert.equal(
      await eventually(
        () => get(`/calls/${call}/recording-url`),
        (s) => s === 410,
      ),
      410,
    );
    assert.equal(await get(`/calls/${call}`), 200, 'the call itself stays');
  });
});

test(`on ${engine}, a pending rotation expires within a minute after its 24 h`, async () => {
  const { orgId } = await insertOrg(h.db);
  const { subscriptionId } = await insertSubscription(h.deps, { orgId, url: rx.url });
  const { rotation_id } = await startRotation(h.deps, {
    scope: tenantScope(orgId),
    subscriptionId,
    emergency: false,
  });
  const status = async () =>
    (await h.db.query<{ status: string }>('SELECT status FROM webhook_secrets WHERE id = $1', [rotation_id]))
      .rows[0].status;
  await withWorkers(async () => {
    h.clock.advance(DAY - SECOND);
    await settle();
    assert.equal(await status(), 'pending', 'still pending before its 24 h');
    h.clock.advance(MINUTE);
    assert.equal(await eventually(status, (s) => s === 'expired'), 'expired');
  });
});

test(`on ${engine}, reconciliation creates a missing delivery within five minutes and the worker sends it`, async () => {
  const { orgId } = await insertOrg(h.db);
  await withWorkers(async () => {
    // An event dated a minute ahead: the pass at start cannot see it yet. It fans out to nobody
    // (no subscription yet); the subscription below was verified before it: the gap a concurrent
    // activation leaves.
    const eventId = await h.db.transaction(async (tx) => {
      const out = await emitEvent(tx, {
        organizationId: orgId,
        environment: 'live',
        eventType: 'call.completed',
        resourceId: orgId,
        callId: null,
        factKey: `reconcile-test-${orgId}`,
        data: sampleEventData('call.completed', orgId, h.clock.now()),
        createdAt: new Date(h.clock.now().getTime() + MINUTE),
      });
      return out.eventId;
    });
    await insertSubscription(h.deps, { orgId, url: rx.url });
    const deliveries = async () =>
      Number(
        (
          await h.db.query<{ n: string }>(
            'SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = $1',
            [eventId],
          )
        ).rows[0].n,
      );
    await settle();
    assert.equal(await deliveries(), 0, 'the gap exists');
    h.clock.advance(5 * MINUTE);
    assert.equal(await eventually(deliveries, (n) => n === 1), 1);
    const sent = await eventually(
      async () => rx.requests.filter((r) => r.headers['service-event-id'] === eventId).length,
      (n) => n === 1,
    );
    assert.equal(sent, 1, 'the healed delivery is sent');
  });
});

test(`on ${engine}, the worker runs a queued analysis at once, woken by the enqueue's notification`, async () => {
  const { orgId } = await insertOrg(h.db);
  const call = await insertCall(h.db, { orgId });
  const state = async () =>
    (await h.db.query<{ s: string }>('SELECT processing_state AS s FROM calls WHERE id = $1', [call])).rows[0]
      .s;
  // a poll far away: only the notification can wake the worker within the test
  const stop = await startWorkers(h.deps, { tickMs: TICK_MS, jobsPollIntervalMs: 60_000 });
  try {
    await settle();
    await submitTranscript(h.deps, call, {
      text: 'Hello, my boiler is leaking, please call me back tomorrow.',
    });
    assert.equal(await eventually(state, (s) => s === 'processed'), 'processed');
  } finally {
    await stop();
  }
});

test(`on ${engine}, the worker's poll runs a retry when its backoff has passed on the clock`, async () => {
  const { orgId } = await insertOrg(h.db);
  const call = await insertCall(h.db, { orgId });
  await submitTranscript(h.deps, call, { text: 'Caller: my boiler is leaking.' });
  // a failed first run: due again in 20 s
  await h.db.query(
    `UPDATE processing_jobs SET attempts = 1, last_error = 'timeout', last_error_kind = 'retryable',
            next_attempt_at = $2 WHERE call_id = $1`,
    [call, new Date(h.clock.now().getTime() + 20 * SECOND)],
  );
  const state = async () =>
    (await h.db.query<{ s: string }>('SELECT processing_state AS s FROM calls WHERE id = $1', [call])).rows[0]
      .s;
  const stop = await startWorkers(h.deps, { tickMs: TICK_MS, jobsPollIntervalMs: TICK_MS });
  try {
    await settle();
    assert.equal(await state(), 'queued', 'not before its backoff');
    h.clock.advance(20 * SECOND);
    assert.equal(await eventually(state, (s) => s === 'processed'), 'processed');
  } finally {
    await stop();
  }
});

test(`on ${engine}, rate-limit windows older than the previous UTC hour are deleted within ten minutes`, async () => {
  // Just past the start of an hour, so that one hour and ten minutes later exactly one hour has turned.
  const current = new Date(hourWindow(h.clock.now()).getTime() + HOUR);
  h.clock.set(new Date(current.getTime() + SECOND));
  const bucket = `periodic-jobs-test-${current.getTime()}`;
  await h.db.query(
    'INSERT INTO rate_limit_windows (bucket, window_start, count) VALUES ($1, $2, 1), ($1, $3, 1)',
    [bucket, current, new Date(current.getTime() - HOUR)],
  );
  const windows = async () =>
    (
      await h.db.query<{ w: Date }>(
        'SELECT window_start AS w FROM rate_limit_windows WHERE bucket = $1 ORDER BY window_start',
        [bucket],
      )
    ).rows.map((r) => new Date(r.w).toISOString());
  await withWorkers(async () => {
    await settle();
    assert.equal((await windows()).length, 2, 'the current and previous hour are kept');
    // One hour on, the older window is two hours back; the job runs within its ten minutes.
    h.clock.advance(HOUR + 10 * MINUTE);
    assert.deepEqual(await eventually(windows, (w) => w.length === 1), [current.toISOString()]);
  });
});
