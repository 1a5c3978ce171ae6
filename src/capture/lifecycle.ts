import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import {
  attemptHasRecording,
  FAILED_OUTBOUND_STATES,
  INITIAL_OUTBOUND_LIFECYCLE,
  isOutboundLifecycle,
  type OutboundEffects,
  type OutboundLifecycle,
  transitionOutbound,
} from '../domain/outbound-lifecycle.ts';
import { badRequest, validationError } from '../errors.ts';
import {
  attemptedFactKey,
  callFailedData,
  failedFactKey,
  lifecycleRepairedData,
  outboundAttemptedData,
  repairedFactKey,
} from '../webhooks/outbox/event-data/outbound.ts';
import { emitEvent } from '../webhooks/outbox/outbox.ts';
import { type IngestCall, lockLiveCall, organizationOwner } from './call-record.ts';
import { completeIfReady } from './completion.ts';

/**
 * POST /admin/v1/calls/{id}/lifecycle: applies the pure state machine (domain/outbound-lifecycle.ts)
 * and, in the same transaction, the writes and events its verdict names:
 * - a final state emits call.outbound.attempted; a failed one also call.failed;
 * - the repair agent_only → completed emits call.outbound.lifecycle_repaired and a second
 *   call.outbound.attempted (outbound_lifecycle completed, has_recording per mode): the attempt's
 *   final outcome is a different fact, and receivers that upsert attempts by call_id end up right;
 * - ending without a conversation makes the recording not_captured (recording-url answers 410), which
 *   also settles a processing run waiting for that recording.
 */
export async function applyLifecycle(
  deps: Deps,
  callId: string,
  input: { state: OutboundLifecycle; failureReason: string | null },
): Promise<{ call_id: string; outbound_lifecycle: OutboundLifecycle }> {
  return deps.db.transaction(async (tx) => {
    const call = await lockLiveCall(tx, callId);
    if (call.direction !== 'outbound') {
      throw validationError('Only outbound calls have an outbound lifecycle; this call is inbound.');
    }
    const from =
      call.outbound_lifecycle && isOutboundLifecycle(call.outbound_lifecycle)
        ? call.outbound_lifecycle
        : INITIAL_OUTBOUND_LIFECYCLE;
    const to = input.state;
    if (input.failureReason !== null && !FAILED_OUTBOUND_STATES.has(to)) {
      throw badRequest(
        `Field "failure_reason" applies only to the states ${[...FAILED_OUTBOUND_STATES].join(', ')}; omit it for ${to}.`,
        'failure_reason',
      );
    }
    const verdict = transitionOutbound(from, to);
    if (verdict.kind === 'rejected') throw validationError(verdict.message);
    if (verdict.kind === 'unchanged') return { call_id: call.id, outbound_lifecycle: from };
    await applyOutboundMove(tx, deps, call, to, verdict.effects, input.failureReason);
    return { call_id: call.id, outbound_lifecycle: to };
  });
}

/** Calls created through the API always have an agent; older rows fall back to the owner. */
async function attemptData(tx: Queryable, call: IngestCall, state: OutboundLifecycle, now: Date) {
  return outboundAttemptedData({
    callId: call.id,
    agentUserId: call.agent_user_id ?? (await organizationOwner(tx, call.organization_id)) ?? '',
    customerPhone: call.customer_phone ?? call.customer_phone_e164 ?? '',
    customerPhoneE164: call.customer_phone_e164 ?? '',
    outboundLifecycle: state,
    // recording length; unknown until the audio arrives, and there is none when initiation failed
    duration: state === 'failed_to_initiate' ? null : call.duration,
    attemptedAt: now,
    hasRecording: attemptHasRecording(state, call.recording_mode),
  });
}

/**
 * One move of the outbound lifecycle the table allowed (transitionOutbound's effects), inside the
 * caller's transaction with the call locked: the state, failure_reason (kept only for a failed
 * state), the recording that can no longer be captured, when the attempt first ended and when it
 * was repaired (the call page's timeline, capture/call-page.ts), and the events the effects name. Shared by
 * the operator route and the telephony adapters.
 */
export async function applyOutboundMove(
  tx: Queryable,
  deps: Deps,
  call: IngestCall,
  to: OutboundLifecycle,
  effects: OutboundEffects,
  failureReason: string | null,
): Promise<void> {
  const now = deps.clock.now();
  await tx.query(
    `UPDATE calls SET outbound_lifecycle = $2, failure_reason = $3,
            recording_state = CASE WHEN $4::boolean AND recording_state IN ('pending', 'refused')
                                   THEN 'not_captured' ELSE recording_state END,
            outbound_ended_at = CASE WHEN $6::boolean THEN coalesce(outbound_ended_at, $5) ELSE outbound_ended_at END,
            outbound_repaired_at = CASE WHEN $7::boolean THEN $5 ELSE outbound_repaired_at END,
            updated_at = $5
      WHERE id = $1`,
    [
      call.id,
      to,
      effects.failed ? failureReason : null,
      effects.recordingNotCaptured,
      now,
      effects.attempted,
      effects.repaired,
    ],
  );
  const emit = (eventType: string, factKey: string, data: Record<string, unknown>) =>
    emitEvent(tx, {
      organizationId: call.organization_id,
      environment: call.environment,
      eventType,
      resourceId: call.id,
      callId: call.id,
      factKey,
      data,
      createdAt: now,
    });
  if (effects.repaired) {
    await emit(
      'call.outbound.lifecycle_repaired',
      repairedFactKey(call.id),
      lifecycleRepairedData(call.id, now),
    );
  }
  if (effects.attempted) {
    await emit(
      'call.outbound.attempted',
      attemptedFactKey(call.id, to),
      await attemptData(tx, call, to, now),
    );
  }
  if (effects.failed) {
    await emit('call.failed', failedFactKey(call.id, to), callFailedData(call.id, to, failureReason));
  }
  if (effects.recordingNotCaptured) await completeIfReady(tx, deps, call.id);
}
