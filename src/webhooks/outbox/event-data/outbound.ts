/**
 * data of the outbound lifecycle events: call.outbound.attempted, call.failed,
 * call.outbound.lifecycle_repaired. Pure builders, exactly the spec's keys.
 *
 * Fact keys: an attempt ends in a given final state at most once per call ("<call id>:<state>"), so
 * the repair agent_only → completed yields a second, distinct call.outbound.attempted; a call fails
 * at most once and is repaired at most once ("<call id>:<state>", "<call id>").
 */

import type {
  CallFailedData,
  CallOutboundAttemptedData,
  CallOutboundLifecycleRepairedData,
  FailedOutboundLifecycle,
  FinalOutboundLifecycle,
} from '../event-schemas.ts';

export const attemptedFactKey = (callId: string, state: string): string => `${callId}:${state}`;
export const failedFactKey = (callId: string, state: string): string => `${callId}:${state}`;
export const repairedFactKey = (callId: string): string => callId;

export function outboundAttemptedData(a: {
  callId: string;
  agentUserId: string;
  customerPhone: string;
  customerPhoneE164: string;
  outboundLifecycle: string;
  duration: number | null;
  attemptedAt: Date;
  hasRecording: boolean;
}): CallOutboundAttemptedData {
  return {
    call_id: a.callId,
    agent_user_id: a.agentUserId,
    customer_phone: a.customerPhone,
    customer_phone_e164: a.customerPhoneE164,
    // Only final states emit this event (lifecycle.ts decides); the catalogue validates it in tests.
    outbound_lifecycle: a.outboundLifecycle as FinalOutboundLifecycle,
    duration: a.duration,
    attempted_at: a.attemptedAt.toISOString(),
    has_recording: a.hasRecording,
  };
}

export function callFailedData(
  callId: string,
  outboundLifecycle: string,
  failureReason: string | null,
): CallFailedData {
  // Only the failing final states emit call.failed (lifecycle.ts decides).
  const stage = outboundLifecycle as FailedOutboundLifecycle;
  return { call_id: callId, outbound_lifecycle: stage, failure_reason: failureReason };
}

export function lifecycleRepairedData(callId: string, repairedAt: Date): CallOutboundLifecycleRepairedData {
  return {
    call_id: callId,
    previous_lifecycle: 'agent_only' as const,
    new_lifecycle: 'completed' as const,
    repaired_at: repairedAt.toISOString(),
  };
}
