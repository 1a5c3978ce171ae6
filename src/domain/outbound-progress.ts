/**
 * What a carrier's report means for an outbound call's lifecycle: pure, provider-neutral. A
 * telephony adapter turns each callback into an observation (what it proves about the two legs);
 * planOutbound decides, from the call's current state, which moves of the transition table
 * (outbound-lifecycle.ts) to apply — or that the report changes nothing (a duplicate), is stale (an
 * earlier stage reported late, expected with out-of-order callbacks) or impossible (contradicts a
 * final state). Stale and impossible reports are logged by the service, never applied.
 *
 * Rules (docs/capture.md "Outbound calls", docs/decisions.md):
 * - A report of a later stage fast-forwards through the in-progress stages it implies (a customer
 *   leg that rings proves the agent answered and confirmed).
 * - The agent leg's end decides by the stage reached: before the key press it is agent_no_answer
 *   (agent_no_confirmation); with the customer answered it is completed; while the customer was still
 *   ringing (no final word from the customer leg) it is reconciliation_required, which the periodic
 *   check turns into agent_only when no late report arrives within the grace period.
 * - Proof that the customer answered (the customer leg answered or ended normally, the dial ended
 *   answered, a recording of the dial) completes a call in reconciliation_required and repairs an
 *   agent_only call (agent_only → completed, call.outbound.lifecycle_repaired).
 */
import { OUTBOUND_TRANSITIONS, type OutboundLifecycle, transitionOutbound } from './outbound-lifecycle.ts';

/** failure_reason codes of the agent_no_answer state. */
export const AGENT_FAILURE_REASONS = [
  'agent_no_answer',
  'agent_busy',
  'agent_no_confirmation',
  'agent_voicemail',
  'agent_canceled',
  'carrier_failed',
  'no_final_status',
] as const;
/** failure_reason codes of the customer_no_answer state. */
export const CUSTOMER_FAILURE_REASONS = [
  'customer_busy',
  'customer_no_answer',
  'customer_canceled',
  'carrier_failed',
] as const;
/** failure_reason codes of the failed_to_initiate state. */
export const INITIATE_FAILURE_REASONS = [
  'provider_rejected',
  'provider_auth_failed',
  'provider_unavailable',
] as const;

export type AgentFailureReason = (typeof AGENT_FAILURE_REASONS)[number];
export type CustomerFailureReason = (typeof CUSTOMER_FAILURE_REASONS)[number];
export type InitiateFailureReason = (typeof INITIATE_FAILURE_REASONS)[number];
export type FailureReason = AgentFailureReason | CustomerFailureReason | InitiateFailureReason;

export type OutboundObservation =
  /** the agent's phone is being rung (queued, initiated, ringing) */
  | { kind: 'agent_ringing' }
  /** the agent's phone answered (a person or a machine: the key press tells) */
  | { kind: 'agent_answered' }
  /** the agent pressed a key: the customer is dialled now */
  | { kind: 'agent_confirmed' }
  /** the agent's phone answered but the call was not confirmed (no key, or a machine answered) */
  | { kind: 'agent_unconfirmed'; reason: 'agent_no_confirmation' | 'agent_voicemail' }
  /** the agent's phone never answered */
  | {
      kind: 'agent_unreached';
      reason: 'agent_no_answer' | 'agent_busy' | 'agent_canceled' | 'carrier_failed';
    }
  /** the agent leg ended after it was answered; the whole call is over */
  | { kind: 'agent_ended' }
  /** the customer's phone is being rung */
  | { kind: 'customer_ringing' }
  /** the customer answered */
  | { kind: 'customer_answered' }
  /** the customer answered and the customer leg ended */
  | { kind: 'customer_ended' }
  /** the customer's phone never answered */
  | { kind: 'customer_unreached'; reason: CustomerFailureReason }
  /** the periodic check: no report for too long (see the service for the periods) */
  | { kind: 'no_word' };

export type OutboundPlan =
  | { kind: 'unchanged' }
  /** apply these moves in order (each allowed by the table); failureReason goes with a failed last one */
  | { kind: 'apply'; steps: OutboundLifecycle[]; failureReason: FailureReason | null }
  | { kind: 'ignored'; why: 'stale' | 'impossible'; message: string };

/** The main line of an outbound call; its order makes a report "earlier" or "later". */
const MAIN_LINE: readonly OutboundLifecycle[] = [
  'ringing_agent',
  'agent_answered',
  'ringing_customer',
  'in_progress',
  'completed',
];
const IN_PROGRESS: ReadonlySet<OutboundLifecycle> = new Set(MAIN_LINE.slice(0, 4));

/**
 * The furthest main-line stage a call in each state has passed (an index into MAIN_LINE): a late
 * report of a stage up to it is stale; a report of a stage beyond a final state is impossible.
 */
const REACHED: Readonly<Record<OutboundLifecycle, number>> = {
  ringing_agent: 0,
  agent_answered: 1,
  ringing_customer: 2,
  in_progress: 3,
  completed: 4,
  agent_no_answer: 1,
  customer_no_answer: 2,
  agent_only: 3,
  failed_to_initiate: -1,
  reconciliation_required: 3,
};

/** The state an observation points at, given where the call is; null = consistent, nothing to do. */
function target(
  from: OutboundLifecycle,
  obs: OutboundObservation,
): { to: OutboundLifecycle; reason: FailureReason | null } | null {
  switch (obs.kind) {
    case 'agent_ringing':
      return { to: 'ringing_agent', reason: null };
    case 'agent_answered':
      return { to: 'agent_answered', reason: null };
    case 'agent_confirmed':
      return { to: 'ringing_customer', reason: null };
    case 'agent_unconfirmed':
    case 'agent_unreached':
      return { to: 'agent_no_answer', reason: obs.reason };
    case 'agent_ended':
      if (from === 'ringing_agent' || from === 'agent_answered')
        return { to: 'agent_no_answer', reason: 'agent_no_confirmation' };
      if (from === 'ringing_customer') return { to: 'reconciliation_required', reason: null };
      if (from === 'in_progress') return { to: 'completed', reason: null };
      return null; // final or already waiting: the end of the agent leg adds nothing
    case 'customer_ringing':
      return { to: 'ringing_customer', reason: null };
    case 'customer_answered':
      return from === 'agent_only' || from === 'reconciliation_required' || from === 'completed'
        ? { to: 'completed', reason: null }
        : { to: 'in_progress', reason: null };
    case 'customer_ended':
      return { to: 'completed', reason: null };
    case 'customer_unreached':
      return { to: 'customer_no_answer', reason: obs.reason };
    case 'no_word':
      if (from === 'ringing_agent' || from === 'agent_answered')
        return { to: 'agent_no_answer', reason: 'no_final_status' };
      if (from === 'ringing_customer' || from === 'in_progress')
        return { to: 'reconciliation_required', reason: null };
      if (from === 'reconciliation_required') return { to: 'agent_only', reason: null };
      return null;
  }
}

/**
 * The shortest chain of allowed moves from `from` to `to` whose intermediate states are in-progress
 * stages (never through reconciliation_required or a final state); null when there is none.
 */
export function outboundPath(from: OutboundLifecycle, to: OutboundLifecycle): OutboundLifecycle[] | null {
  const queue: OutboundLifecycle[][] = [[from]];
  const seen = new Set<OutboundLifecycle>([from]);
  while (queue.length) {
    const path = queue.shift()!;
    const last = path[path.length - 1];
    for (const next of OUTBOUND_TRANSITIONS[last]) {
      if (next === to) return [...path.slice(1), to];
      if (seen.has(next) || !IN_PROGRESS.has(next)) continue;
      seen.add(next);
      queue.push([...path, next]);
    }
  }
  return null;
}

/** What to do with one observation for a call in state `from`. */
export function planOutbound(from: OutboundLifecycle, obs: OutboundObservation): OutboundPlan {
  const t = target(from, obs);
  if (!t || t.to === from) return { kind: 'unchanged' };
  const steps = outboundPath(from, t.to);
  if (steps) {
    const last = transitionOutbound(steps.length > 1 ? steps[steps.length - 2] : from, t.to);
    const failed = last.kind === 'moved' && last.effects.failed;
    return { kind: 'apply', steps, failureReason: failed ? t.reason : null };
  }
  const stale = IN_PROGRESS.has(t.to) && MAIN_LINE.indexOf(t.to) <= REACHED[from];
  const message = `${obs.kind} reported for an outbound call in ${from} would move it to ${t.to}`;
  return stale
    ? { kind: 'ignored', why: 'stale', message: `${message}: an earlier stage reported late.` }
    : { kind: 'ignored', why: 'impossible', message: `${message}: not a move of the lifecycle.` };
}
