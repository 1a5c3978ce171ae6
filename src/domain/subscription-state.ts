/**
 * Webhook subscription states (spec "Webhook subscription states") as one pure function, plus the
 * rule that judges a verification handshake reply. Services apply the result inside a transaction.
 *
 * | from     | trigger                              | to       | effect                       |
 * | inactive | handshake accepted                   | active   | reset counters               |
 * | inactive | handshake refused                    | inactive |                              |
 * | paused   | handshake accepted (re-verification) | active   | reset counters, wake queue   |
 * | paused   | handshake refused                    | paused   |                              |
 * | active   | handshake (either outcome)           | active   | none (no demotion rule)      |
 * | active   | delivery reply 401, 403 or 422       | paused   | dead-letter, no retries      |
 * | active   | 2nd consecutive 410                  | paused   |                              |
 * | active   | 50th consecutive transient failure   | paused   |                              |
 * | active   | emergency secret rotation            | paused   | skip queued deliveries       |
 * | paused   | emergency secret rotation            | paused   | skip queued, reason replaced |
 * | inactive | emergency secret rotation            | inactive | (nothing is queued)          |
 * Anything else leaves the state as it is.
 */
export type SubscriptionState = 'inactive' | 'active' | 'paused';
export type VerificationMode = 'permissive' | 'strict';

export const SUBSCRIPTION_STATES: readonly SubscriptionState[] = ['inactive', 'active', 'paused'];
export const VERIFICATION_MODES: readonly VerificationMode[] = ['permissive', 'strict'];

/** Consecutive 410 replies that pause a subscription. */
export const GONE_PAUSE_THRESHOLD = 2;
/** Consecutive transient failures that pause a subscription. */
export const TRANSIENT_PAUSE_THRESHOLD = 50;

/** Values of webhook_subscriptions.paused_reason. */
export const PAUSED_REASONS = {
  rejected: 'receiver_rejected',
  gone: 'receiver_gone',
  transient: 'transient_failures',
  emergencyRotation: 'emergency_rotation',
} as const;
export type PausedReason = (typeof PAUSED_REASONS)[keyof typeof PAUSED_REASONS];

export type SubscriptionTrigger =
  | { kind: 'handshake'; accepted: boolean }
  | { kind: 'delivery_rejected'; status: number }
  /** consecutiveGone counts this 410 too */
  | { kind: 'delivery_gone'; consecutiveGone: number }
  /** consecutiveFailures counts this failure too */
  | { kind: 'transient_failure'; consecutiveFailures: number }
  | { kind: 'emergency_rotation' };

export interface SubscriptionTransition {
  state: SubscriptionState;
  /** null clears it, undefined leaves it unchanged */
  pausedReason: PausedReason | null | undefined;
  /** reset consecutive_transient_failures and consecutive_gone */
  resetCounters: boolean;
  /** put the subscription's waiting deliveries back in front of the workers (pg_notify) */
  wakeQueue: boolean;
  /** mark every pending delivery skipped */
  skipQueued: boolean;
}

const stay = (state: SubscriptionState): SubscriptionTransition => ({
  state,
  pausedReason: undefined,
  resetCounters: false,
  wakeQueue: false,
  skipQueued: false,
});

const pause = (reason: PausedReason, skipQueued = false): SubscriptionTransition => ({
  state: 'paused',
  pausedReason: reason,
  resetCounters: false,
  wakeQueue: false,
  skipQueued,
});

export function nextSubscriptionState(
  from: SubscriptionState,
  t: SubscriptionTrigger,
): SubscriptionTransition {
  switch (t.kind) {
    case 'handshake':
      if (from === 'active' || !t.accepted) return stay(from);
      return { state: 'active', pausedReason: null, resetCounters: true, wakeQueue: true, skipQueued: false };
    case 'delivery_rejected':
      return from === 'active' && [401, 403, 422].includes(t.status)
        ? pause(PAUSED_REASONS.rejected)
        : stay(from);
    case 'delivery_gone':
      return from === 'active' && t.consecutiveGone >= GONE_PAUSE_THRESHOLD
        ? pause(PAUSED_REASONS.gone)
        : stay(from);
    case 'transient_failure':
      return from === 'active' && t.consecutiveFailures >= TRANSIENT_PAUSE_THRESHOLD
        ? pause(PAUSED_REASONS.transient)
        : stay(from);
    case 'emergency_rotation':
      return from === 'inactive' ? stay(from) : pause(PAUSED_REASONS.emergencyRotation, true);
  }
}

/** What came back from the receiver for a handshake POST. */
export type HandshakeReply = { kind: 'response'; status: number; body: string } | { kind: 'error' };

/**
 * permissive: any 2xx accepts (body ignored). strict: a 2xx whose body is a JSON object with a
 * "challenge" string equal to the one sent (other keys are ignored). Everything else refuses.
 */
export function handshakeAccepted(mode: VerificationMode, challenge: string, reply: HandshakeReply): boolean {
  if (reply.kind !== 'response' || reply.status < 200 || reply.status > 299) return false;
  if (mode === 'permissive') return true;
  try {
    const parsed: unknown = JSON.parse(reply.body);
    return (
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      (parsed as { challenge?: unknown }).challenge === challenge
    );
  } catch {
    return false;
  }
}
