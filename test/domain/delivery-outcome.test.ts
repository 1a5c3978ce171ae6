import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AttemptResult,
  classifyReply,
  decideAttempt,
  MAX_ATTEMPTS,
  retryDelayMs,
} from '../../src/domain/delivery-outcome.ts';

const MIN = 60_000;
const now = new Date('2026-06-15T10:00:00.000Z');
const fresh = { consecutiveTransientFailures: 0, consecutiveGone: 0 };
const res = (status: number): AttemptResult => ({ kind: 'response', status });
const err = (errorClass: string): AttemptResult => ({ kind: 'error', errorClass });

// [result, class]
const classes: [AttemptResult, string][] = [
  [res(200), 'success'],
  [res(201), 'success'],
  [res(204), 'success'],
  [res(299), 'success'],
  [res(301), 'transient'],
  [res(302), 'transient'],
  [res(304), 'transient'],
  [res(400), 'transient'],
  [res(401), 'rejected'],
  [res(403), 'rejected'],
  [res(404), 'transient'],
  [res(408), 'transient'],
  [res(410), 'gone'],
  [res(422), 'rejected'],
  [res(429), 'transient'],
  [res(500), 'transient'],
  [res(503), 'transient'],
  [res(100), 'transient'],
  [err('timeout'), 'transient'],
  [err('connection'), 'transient'],
  [err('dns'), 'transient'],
  [err('tls'), 'transient'],
  [err('blocked_address'), 'transient'],
  [err('invalid_url'), 'transient'],
];
for (const [r, expected] of classes) {
  const name = r.kind === 'response' ? `HTTP ${r.status}` : `error ${r.errorClass}`;
  test(`${name} is classified ${expected}`, () => assert.equal(classifyReply(r), expected));
}

test('retry delays are 2 min, 5 min exactly, then 30 min and 2 h with 0 to +10 % jitter, and none after the fifth attempt', () => {
  assert.equal(
    retryDelayMs(1, () => 0.99),
    2 * MIN,
  );
  assert.equal(
    retryDelayMs(2, () => 0.99),
    5 * MIN,
  );
  assert.equal(
    retryDelayMs(3, () => 0),
    30 * MIN,
  );
  assert.equal(
    retryDelayMs(3, () => 0.5),
    31.5 * MIN,
  );
  assert.ok(retryDelayMs(3, () => 0.999999)! < 33 * MIN);
  assert.equal(
    retryDelayMs(4, () => 0),
    120 * MIN,
  );
  assert.equal(
    retryDelayMs(4, () => 0.5),
    126 * MIN,
  );
  assert.ok(retryDelayMs(4, () => 0.999999)! < 132 * MIN);
  assert.equal(
    retryDelayMs(5, () => 0.5),
    null,
  );
  assert.equal(MAX_ATTEMPTS, 5);
});

test('a broken jitter source cannot make a retry earlier than the nominal delay', () => {
  assert.equal(
    retryDelayMs(3, () => -5),
    30 * MIN,
  );
  assert.equal(
    retryDelayMs(4, () => 7),
    132 * MIN,
  );
});

const decide = (
  result: AttemptResult,
  o: { attempt?: number; counters?: typeof fresh; state?: 'active' | 'paused' | 'inactive' } = {},
) =>
  decideAttempt({
    result,
    attemptNumber: o.attempt ?? 1,
    now,
    counters: o.counters ?? fresh,
    subscriptionState: o.state ?? 'active',
    random: () => 0,
  });

test('a 2xx delivers and resets both counters', () => {
  const d = decide(res(200), { counters: { consecutiveTransientFailures: 49, consecutiveGone: 1 } });
  assert.deepEqual(d, { reply: 'success', delivery: { status: 'delivered' }, counters: fresh, pause: null });
});

for (const code of [401, 403, 422]) {
  test(`a ${code} dead-letters the delivery at once and pauses an active subscription`, () => {
    const d = decide(res(code), { counters: { consecutiveTransientFailures: 3, consecutiveGone: 0 } });
    assert.deepEqual(d.delivery, { status: 'dead_lettered', reason: `receiver_rejected_${code}` });
    assert.deepEqual(d.pause, { reason: 'receiver_rejected' });
    assert.deepEqual(d.counters, fresh);
  });
}

test('a 401 for an already paused subscription dead-letters but does not pause again (no second e-mail)', () => {
  const d = decide(res(401), { state: 'paused' });
  assert.equal(d.delivery.status, 'dead_lettered');
  assert.equal(d.pause, null);
});

test('a first 410 is retried in 2 min and counts once', () => {
  const d = decide(res(410));
  assert.deepEqual(d.delivery, {
    status: 'pending',
    nextAttemptAt: new Date(now.getTime() + 2 * MIN),
    reason: 'http_410',
  });
  assert.deepEqual(d.counters, { consecutiveTransientFailures: 1, consecutiveGone: 1 });
  assert.equal(d.pause, null);
});

test('a second consecutive 410 pauses the subscription; the delivery keeps its retry', () => {
  const d = decide(res(410), {
    attempt: 2,
    counters: { consecutiveTransientFailures: 1, consecutiveGone: 1 },
  });
  assert.deepEqual(d.pause, { reason: 'receiver_gone' });
  assert.equal(d.delivery.status, 'pending');
  assert.deepEqual(d.counters, fresh);
});

test('any other failure resets the consecutive 410 count', () => {
  const d = decide(res(500), { counters: { consecutiveTransientFailures: 1, consecutiveGone: 1 } });
  assert.deepEqual(d.counters, { consecutiveTransientFailures: 2, consecutiveGone: 0 });
});

test('the 50th consecutive transient failure pauses; the 49th does not', () => {
  assert.equal(
    decide(err('timeout'), { counters: { consecutiveTransientFailures: 48, consecutiveGone: 0 } }).pause,
    null,
  );
  const d = decide(err('timeout'), { counters: { consecutiveTransientFailures: 49, consecutiveGone: 0 } });
  assert.deepEqual(d.pause, { reason: 'transient_failures' });
  assert.deepEqual(d.counters, fresh);
});

test('a paused subscription keeps counting but is not paused again', () => {
  const d = decide(res(503), {
    state: 'paused',
    counters: { consecutiveTransientFailures: 60, consecutiveGone: 0 },
  });
  assert.equal(d.pause, null);
  assert.equal(d.counters.consecutiveTransientFailures, 61);
});

test('the fifth failed attempt dead-letters with reason max_attempts', () => {
  const d = decide(res(503), { attempt: 5 });
  assert.deepEqual(d.delivery, { status: 'dead_lettered', reason: 'max_attempts' });
});

test('timeouts and connection errors are labelled by their error class', () => {
  assert.deepEqual(decide(err('connection')).delivery, {
    status: 'pending',
    nextAttemptAt: new Date(now.getTime() + 2 * MIN),
    reason: 'connection',
  });
});
