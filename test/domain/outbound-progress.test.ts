import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  OUTBOUND_LIFECYCLES,
  type OutboundLifecycle,
  transitionOutbound,
} from '../../src/domain/outbound-lifecycle.ts';
import {
  type OutboundObservation,
  type OutboundPlan,
  outboundPath,
  planOutbound,
} from '../../src/domain/outbound-progress.ts';

const apply = (steps: OutboundLifecycle[], failureReason: string | null = null): OutboundPlan =>
  ({ kind: 'apply', steps, failureReason }) as OutboundPlan;
const O = {
  agentRinging: { kind: 'agent_ringing' },
  agentAnswered: { kind: 'agent_answered' },
  confirmed: { kind: 'agent_confirmed' },
  noKey: { kind: 'agent_unconfirmed', reason: 'agent_no_confirmation' },
  machine: { kind: 'agent_unconfirmed', reason: 'agent_voicemail' },
  agentBusy: { kind: 'agent_unreached', reason: 'agent_busy' },
  agentEnded: { kind: 'agent_ended' },
  customerRinging: { kind: 'customer_ringing' },
  customerAnswered: { kind: 'customer_answered' },
  customerEnded: { kind: 'customer_ended' },
  customerBusy: { kind: 'customer_unreached', reason: 'customer_busy' },
  noWord: { kind: 'no_word' },
} satisfies Record<string, OutboundObservation>;

/** [state, observation, plan]: the table the services apply. */
const TABLE: [OutboundLifecycle, OutboundObservation, OutboundPlan][] = [
  // the happy path, one report per stage
  ['ringing_agent', O.agentRinging, { kind: 'unchanged' }],
  ['ringing_agent', O.agentAnswered, apply(['agent_answered'])],
  ['agent_answered', O.confirmed, apply(['ringing_customer'])],
  ['ringing_customer', O.customerRinging, { kind: 'unchanged' }],
  ['ringing_customer', O.customerAnswered, apply(['in_progress'])],
  ['in_progress', O.customerEnded, apply(['completed'])],
  ['completed', O.agentEnded, { kind: 'unchanged' }],
  ['completed', O.customerAnswered, { kind: 'unchanged' }],
  // later stages fast-forward through the stages they imply
  ['ringing_agent', O.confirmed, apply(['agent_answered', 'ringing_customer'])],
  [
    'ringing_agent',
    O.customerEnded,
    apply(['agent_answered', 'ringing_customer', 'in_progress', 'completed']),
  ],
  ['agent_answered', O.customerBusy, apply(['ringing_customer', 'customer_no_answer'], 'customer_busy')],
  // the agent's failures
  ['ringing_agent', O.agentBusy, apply(['agent_no_answer'], 'agent_busy')],
  ['ringing_agent', O.machine, apply(['agent_no_answer'], 'agent_voicemail')],
  ['agent_answered', O.noKey, apply(['agent_no_answer'], 'agent_no_confirmation')],
  ['agent_answered', O.agentEnded, apply(['agent_no_answer'], 'agent_no_confirmation')],
  ['ringing_agent', O.agentEnded, apply(['agent_no_answer'], 'agent_no_confirmation')],
  // the customer's
  ['ringing_customer', O.customerBusy, apply(['customer_no_answer'], 'customer_busy')],
  // the agent leg ends without the customer leg's final word
  ['ringing_customer', O.agentEnded, apply(['reconciliation_required'])],
  ['in_progress', O.agentEnded, apply(['completed'])],
  ['reconciliation_required', O.customerEnded, apply(['completed'])],
  ['reconciliation_required', O.customerAnswered, apply(['completed'])],
  ['reconciliation_required', O.customerBusy, apply(['customer_no_answer'], 'customer_busy')],
  ['reconciliation_required', O.agentEnded, { kind: 'unchanged' }],
  // the periodic check
  ['ringing_agent', O.noWord, apply(['agent_no_answer'], 'no_final_status')],
  ['agent_answered', O.noWord, apply(['agent_no_answer'], 'no_final_status')],
  ['ringing_customer', O.noWord, apply(['reconciliation_required'])],
  ['in_progress', O.noWord, apply(['reconciliation_required'])],
  ['reconciliation_required', O.noWord, apply(['agent_only'])],
  ['agent_only', O.noWord, { kind: 'unchanged' }],
  // the repair
  ['agent_only', O.customerEnded, apply(['completed'])],
  ['agent_only', O.customerAnswered, apply(['completed'])],
];

for (const [from, obs, plan] of TABLE) {
  test(`${from} + ${JSON.stringify(obs)} → ${JSON.stringify(plan)}`, () => {
    assert.deepEqual(planOutbound(from, obs), plan);
  });
}

test('late reports of an earlier stage are stale, never applied', () => {
  for (const [from, obs] of [
    ['agent_answered', O.agentRinging],
    ['ringing_customer', O.agentAnswered],
    ['in_progress', O.customerRinging],
    ['completed', O.customerRinging],
    ['customer_no_answer', O.agentAnswered],
    ['agent_only', O.customerRinging],
    ['reconciliation_required', O.confirmed],
  ] as [OutboundLifecycle, OutboundObservation][]) {
    const plan = planOutbound(from, obs);
    assert.equal(plan.kind, 'ignored', `${from} ${obs.kind}`);
    if (plan.kind === 'ignored') {
      assert.equal(plan.why, 'stale', `${from} ${obs.kind}`);
      assert.match(
        plan.message,
        new RegExp(`^${obs.kind} reported for an outbound call in ${from} would move it to `),
      );
    }
  }
});

test('reports contradicting a final state are impossible, never applied', () => {
  for (const [from, obs, to] of [
    ['completed', O.customerBusy, 'customer_no_answer'],
    ['agent_only', O.customerBusy, 'customer_no_answer'],
    ['customer_no_answer', O.customerEnded, 'completed'],
    ['agent_no_answer', O.confirmed, 'ringing_customer'],
    ['in_progress', O.agentBusy, 'agent_no_answer'],
  ] as [OutboundLifecycle, OutboundObservation, string][]) {
    assert.deepEqual(planOutbound(from, obs), {
      kind: 'ignored',
      why: 'impossible',
      message: `${obs.kind} reported for an outbound call in ${from} would move it to ${to}: not a move of the lifecycle.`,
    });
  }
});

test('every plan, from every state and observation, is a chain of moves the table allows', () => {
  const observations: OutboundObservation[] = [
    ...Object.values(O),
    { kind: 'agent_unreached', reason: 'carrier_failed' },
    { kind: 'customer_unreached', reason: 'customer_no_answer' },
  ];
  for (const from of OUTBOUND_LIFECYCLES) {
    for (const obs of observations) {
      const plan = planOutbound(from, obs);
      if (plan.kind !== 'apply') continue;
      let at = from;
      for (const step of plan.steps) {
        assert.equal(transitionOutbound(at, step).kind, 'moved', `${from} ${obs.kind}: ${at} → ${step}`);
        at = step;
      }
      const failed = ['agent_no_answer', 'customer_no_answer', 'failed_to_initiate'].includes(at);
      assert.equal(plan.failureReason !== null, failed, `${from} ${obs.kind}: reason only with a failed end`);
    }
  }
});

test('outboundPath never passes through reconciliation_required or a final state', () => {
  assert.deepEqual(outboundPath('ringing_agent', 'in_progress'), [
    'agent_answered',
    'ringing_customer',
    'in_progress',
  ]);
  assert.equal(outboundPath('reconciliation_required', 'in_progress'), null);
  assert.equal(outboundPath('agent_only', 'customer_no_answer'), null);
  assert.deepEqual(outboundPath('agent_only', 'completed'), ['completed']);
});
