/**
 * The outbound call lifecycle (spec "States and transitions"): a pure state machine. Services apply
 * its verdict inside the transaction that stores the new state and emits the events it names.
 *
 * The spec fixes the value sets, which states are final, which trigger call.failed, and one move
 * (agent_only → completed, the repair). The other moves are ours (docs/decisions.md):
 * - a new outbound call starts in ringing_agent (creating it is the dial attempt);
 * - in-progress stages advance in order; each can end in the failure that fits that stage;
 * - any non-final state can fall into reconciliation_required (the carrier stopped reporting), and
 *   reconciliation_required resolves into any final state;
 * - final states are terminal, except the repair agent_only → completed;
 * - agent_answered → agent_no_answer: the agent's phone answered but nobody confirmed the call with a
 *   key press (a voicemail, or the agent hung up) — failure_reason agent_no_confirmation;
 * - re-reporting the current state is a no-op, not an error (carrier callbacks are retried).
 */

export const OUTBOUND_LIFECYCLES = [
  'ringing_agent',
  'agent_answered',
  'ringing_customer',
  'in_progress',
  'completed',
  'agent_no_answer',
  'customer_no_answer',
  'agent_only',
  'failed_to_initiate',
  'reconciliation_required',
] as const;
export type OutboundLifecycle = (typeof OUTBOUND_LIFECYCLES)[number];

export const INITIAL_OUTBOUND_LIFECYCLE: OutboundLifecycle = 'ringing_agent';

/** Final outbound states: reaching one emits call.outbound.attempted. */
export const FINAL_OUTBOUND_STATES: ReadonlySet<OutboundLifecycle> = new Set([
  'completed',
  'agent_only',
  'agent_no_answer',
  'customer_no_answer',
  'failed_to_initiate',
]);

/** Final states that also emit call.failed; the call ended without a conversation. */
export const FAILED_OUTBOUND_STATES: ReadonlySet<OutboundLifecycle> = new Set([
  'agent_no_answer',
  'customer_no_answer',
  'failed_to_initiate',
]);

const FINALS = [...FINAL_OUTBOUND_STATES];

/** Allowed moves (besides staying put). */
export const OUTBOUND_TRANSITIONS: Readonly<Record<OutboundLifecycle, readonly OutboundLifecycle[]>> = {
  ringing_agent: ['agent_answered', 'agent_no_answer', 'failed_to_initiate', 'reconciliation_required'],
  // agent_answered → agent_no_answer: the agent picked up but never confirmed with a key press
  // (voicemail, hung up, no key): failure_reason agent_no_confirmation.
  agent_answered: ['ringing_customer', 'agent_no_answer', 'reconciliation_required'],
  ringing_customer: ['in_progress', 'customer_no_answer', 'agent_only', 'reconciliation_required'],
  in_progress: ['completed', 'agent_only', 'reconciliation_required'],
  agent_only: ['completed'],
  reconciliation_required: FINALS,
  completed: [],
  agent_no_answer: [],
  customer_no_answer: [],
  failed_to_initiate: [],
};

export function isOutboundLifecycle(s: string): s is OutboundLifecycle {
  return (OUTBOUND_LIFECYCLES as readonly string[]).includes(s);
}

/** What a transition causes; the service turns each flag into a write or an event. */
export interface OutboundEffects {
  /** emit call.outbound.attempted with the new state */
  attempted: boolean;
  /** emit call.failed */
  failed: boolean;
  /** emit call.outbound.lifecycle_repaired (agent_only → completed) */
  repaired: boolean;
  /** the call ended without a conversation: its recording can no longer be captured */
  recordingNotCaptured: boolean;
}

export type OutboundVerdict =
  | { kind: 'unchanged' }
  | { kind: 'moved'; effects: OutboundEffects }
  | { kind: 'rejected'; message: string };

export function transitionOutbound(from: OutboundLifecycle, to: OutboundLifecycle): OutboundVerdict {
  if (from === to) return { kind: 'unchanged' };
  if (!OUTBOUND_TRANSITIONS[from].includes(to)) {
    const allowed = OUTBOUND_TRANSITIONS[from];
    const hint = allowed.length ? `allowed from ${from}: ${allowed.join(', ')}` : `${from} is final`;
    return { kind: 'rejected', message: `An outbound call cannot move from ${from} to ${to} (${hint}).` };
  }
  return {
    kind: 'moved',
    effects: {
      attempted: FINAL_OUTBOUND_STATES.has(to),
      failed: FAILED_OUTBOUND_STATES.has(to),
      repaired: from === 'agent_only' && to === 'completed',
      recordingNotCaptured: FAILED_OUTBOUND_STATES.has(to),
    },
  };
}

/** has_recording of call.outbound.attempted: only a completed call not run in no_recording mode. */
export function attemptHasRecording(
  state: OutboundLifecycle,
  recordingMode: 'normal' | 'no_recording',
): boolean {
  return state === 'completed' && recordingMode === 'normal';
}
