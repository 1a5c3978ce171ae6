import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  attemptHasRecording,
  FAILED_OUTBOUND_STATES,
  FINAL_OUTBOUND_STATES,
  OUTBOUND_LIFECYCLES,
  type OutboundLifecycle,
  transitionOutbound,
} from '../../src/domain/outbound-lifecycle.ts';

const none = { attempted: false, failed: false, repaired: false, recordingNotCaptured: false };
const attempted = { ...none, attempted: true };
const failedEnd = { attempted: true, failed: true, repaired: false, recordingNotCaptured: true };

/** Every allowed move and what it causes; every pair not listed here must be rejected. */
const ALLOWED: [OutboundLifecycle, OutboundLifecycle, typeof none][] = [
  ['ringing_agent', 'agent_answered', none],
  ['ringing_agent', 'agent_no_answer', failedEnd],
  ['ringing_agent', 'failed_to_initiate', failedEnd],
  ['ringing_agent', 'reconciliation_required', none],
  ['agent_answered', 'ringing_customer', none],
  ['agent_answered', 'agent_no_answer', failedEnd],
  ['agent_answered', 'reconciliation_required', none],
  ['ringing_customer', 'in_progress', none],
  ['ringing_customer', 'customer_no_answer', failedEnd],
  ['ringing_customer', 'agent_only', attempted],
  ['ringing_customer', 'reconciliation_required', none],
  ['in_progress', 'completed', attempted],
  ['in_progress', 'agent_only', attempted],
  ['in_progress', 'reconciliation_required', none],
  ['agent_only', 'completed', { ...attempted, repaired: true }],
  ['reconciliation_required', 'completed', attempted],
  ['reconciliation_required', 'agent_only', attempted],
  ['reconciliation_required', 'agent_no_answer', failedEnd],
  ['reconciliation_required', 'customer_no_answer', failedEnd],
  ['reconciliation_required', 'failed_to_initiate', failedEnd],
];

for (const [from, to, effects] of ALLOWED) {
  test(`${from} → ${to} is allowed and causes ${JSON.stringify(effects)}`, () => {
    assert.deepEqual(transitionOutbound(from, to), { kind: 'moved', effects });
  });
}

test('every pair of different states not in the table is rejected with a message naming both states', () => {
  const allowed = new Set(ALLOWED.map(([f, t]) => `${f}>${t}`));
  let rejected = 0;
  for (const from of OUTBOUND_LIFECYCLES) {
    for (const to of OUTBOUND_LIFECYCLES) {
      if (from === to || allowed.has(`${from}>${to}`)) continue;
      const v = transitionOutbound(from, to);
      assert.equal(v.kind, 'rejected', `${from} → ${to}`);
      if (v.kind === 'rejected') assert.match(v.message, new RegExp(`from ${from} to ${to}`));
      rejected++;
    }
  }
  assert.equal(rejected, 10 * 9 - ALLOWED.length);
});

test('reporting the current state again is unchanged, never an error', () => {
  for (const s of OUTBOUND_LIFECYCLES) assert.deepEqual(transitionOutbound(s, s), { kind: 'unchanged' });
});

test('final states are terminal except the repair agent_only → completed', () => {
  assert.equal(transitionOutbound('completed', 'agent_only').kind, 'rejected');
  assert.equal(transitionOutbound('customer_no_answer', 'in_progress').kind, 'rejected');
  assert.equal(transitionOutbound('agent_no_answer', 'reconciliation_required').kind, 'rejected');
});

test('failed_to_initiate is reachable only from the initial state and reconciliation_required', () => {
  const from = OUTBOUND_LIFECYCLES.filter(
    (s) => transitionOutbound(s, 'failed_to_initiate').kind === 'moved',
  );
  assert.deepEqual(from, ['ringing_agent', 'reconciliation_required']);
});

test('the value sets are the spec’s: five final states, three of them failed', () => {
  assert.deepEqual([...FINAL_OUTBOUND_STATES].sort(), [
    'agent_no_answer',
    'agent_only',
    'completed',
    'customer_no_answer',
    'failed_to_initiate',
  ]);
  assert.deepEqual([...FAILED_OUTBOUND_STATES].sort(), [
    'agent_no_answer',
    'customer_no_answer',
    'failed_to_initiate',
  ]);
});

test('has_recording is true only for completed calls in normal recording mode', () => {
  assert.equal(attemptHasRecording('completed', 'normal'), true);
  assert.equal(attemptHasRecording('completed', 'no_recording'), false);
  assert.equal(attemptHasRecording('agent_only', 'normal'), false);
  assert.equal(attemptHasRecording('customer_no_answer', 'normal'), false);
});
