import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type HandshakeReply,
  handshakeAccepted,
  nextSubscriptionState,
  type SubscriptionState,
  type SubscriptionTrigger,
} from '../../src/domain/subscription-state.ts';

// [from, trigger, to, pausedReason (undefined = unchanged), resetCounters, wakeQueue, skipQueued]
type Row = [
  SubscriptionState,
  SubscriptionTrigger,
  SubscriptionState,
  string | null | undefined,
  boolean,
  boolean,
  boolean,
];
const table: Row[] = [
  ['inactive', { kind: 'handshake', accepted: true }, 'active', null, true, true, false],
  ['inactive', { kind: 'handshake', accepted: false }, 'inactive', undefined, false, false, false],
  ['paused', { kind: 'handshake', accepted: true }, 'active', null, true, true, false],
  ['paused', { kind: 'handshake', accepted: false }, 'paused', undefined, false, false, false],
  ['active', { kind: 'handshake', accepted: true }, 'active', undefined, false, false, false],
  ['active', { kind: 'handshake', accepted: false }, 'active', undefined, false, false, false],
  ['active', { kind: 'delivery_rejected', status: 401 }, 'paused', 'receiver_rejected', false, false, false],
  ['active', { kind: 'delivery_rejected', status: 403 }, 'paused', 'receiver_rejected', false, false, false],
  ['active', { kind: 'delivery_rejected', status: 422 }, 'paused', 'receiver_rejected', false, false, false],
  ['active', { kind: 'delivery_rejected', status: 400 }, 'active', undefined, false, false, false],
  ['paused', { kind: 'delivery_rejected', status: 401 }, 'paused', undefined, false, false, false],
  ['active', { kind: 'delivery_gone', consecutiveGone: 1 }, 'active', undefined, false, false, false],
  ['active', { kind: 'delivery_gone', consecutiveGone: 2 }, 'paused', 'receiver_gone', false, false, false],
  [
    'active',
    { kind: 'transient_failure', consecutiveFailures: 49 },
    'active',
    undefined,
    false,
    false,
    false,
  ],
  [
    'active',
    { kind: 'transient_failure', consecutiveFailures: 50 },
    'paused',
    'transient_failures',
    false,
    false,
    false,
  ],
  [
    'inactive',
    { kind: 'transient_failure', consecutiveFailures: 50 },
    'inactive',
    undefined,
    false,
    false,
    false,
  ],
  ['active', { kind: 'emergency_rotation' }, 'paused', 'emergency_rotation', false, false, true],
  ['paused', { kind: 'emergency_rotation' }, 'paused', 'emergency_rotation', false, false, true],
  ['inactive', { kind: 'emergency_rotation' }, 'inactive', undefined, false, false, false],
];

for (const [from, trigger, to, reason, reset, wake, skip] of table) {
  test(`${from} + ${JSON.stringify(trigger)} → ${to}`, () => {
    assert.deepEqual(nextSubscriptionState(from, trigger), {
      state: to,
      pausedReason: reason,
      resetCounters: reset,
      wakeQueue: wake,
      skipQueued: skip,
    });
  });
}

const ok = (status: number, body = ''): HandshakeReply => ({ kind: 'response', status, body });
// [mode, reply, accepted]
const handshakes: [string, 'permissive' | 'strict', HandshakeReply, boolean][] = [
  ['permissive 200 with any body', 'permissive', ok(200, 'hello'), true],
  ['permissive 204 without body', 'permissive', ok(204), true],
  ['permissive 299', 'permissive', ok(299), true],
  ['permissive 301 redirect', 'permissive', ok(301), false],
  ['permissive 500', 'permissive', ok(500), false],
  ['permissive network error', 'permissive', { kind: 'error' }, false],
  ['strict exact echo', 'strict', ok(200, '{"challenge":"abc"}'), true],
  ['strict echo with extra keys', 'strict', ok(201, '{"ok":true,"challenge":"abc"}'), true],
  ['strict wrong echo', 'strict', ok(200, '{"challenge":"abd"}'), false],
  ['strict echo with different case', 'strict', ok(200, '{"challenge":"ABC"}'), false],
  ['strict non-JSON body', 'strict', ok(200, 'abc'), false],
  ['strict empty body', 'strict', ok(204), false],
  ['strict JSON array', 'strict', ok(200, '["abc"]'), false],
  ['strict correct echo but 500', 'strict', ok(500, '{"challenge":"abc"}'), false],
];
for (const [name, mode, reply, accepted] of handshakes) {
  test(`handshake: ${name} is ${accepted ? 'accepted' : 'refused'}`, () => {
    assert.equal(handshakeAccepted(mode, 'abc', reply), accepted);
  });
}
