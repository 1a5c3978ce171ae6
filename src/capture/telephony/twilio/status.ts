import type { Deps } from '../../../deps.ts';
import { AppError } from '../../../errors.ts';
import { refuseRecordingIn } from '../../recording-lifecycle.ts';
import type { TelephonyAccount } from '../accounts.ts';
import { claimIgnored } from '../callbacks.ts';
import { lockCallClaiming, str } from './inbound.ts';
import type { FormParams } from './signature.ts';

/**
 * Twilio call statuses in the order a call passes them; the last four are final. A status is
 * applied only when it moves the call forward: a late or repeated one is logged and not applied.
 */
const RANK: Record<string, number> = {
  queued: 0,
  initiated: 1,
  ringing: 2,
  'in-progress': 3,
  completed: 4,
  busy: 4,
  'no-answer': 4,
  failed: 4,
  canceled: 4,
};
export const isFinalCallStatus = (s: string | null) => s !== null && RANK[s] === 4;

/**
 * POST /telephony/twilio/status: the status callback of a service number (and of the legs the
 * service places). Applied at most once per CallSid and status; it records the provider status on
 * the call. An inbound caller who hangs up during the consent announcement never reaches a
 * recording: the call's recording is refused then (recording-url 409), so it settles.
 * An unknown CallSid (a call to a number that is not a service number) is answered and ignored.
 */
export async function callStatusCallback(
  deps: Deps,
  account: TelephonyAccount,
  p: FormParams,
): Promise<void> {
  const callSid = str(p, 'CallSid');
  const status = str(p, 'CallStatus');
  if (!callSid || RANK[status] === undefined) {
    deps.log.warn(
      { call_sid: callSid || null, status },
      'twilio status callback without a known CallSid/CallStatus ignored',
    );
    return;
  }
  await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    // One statement: the call of the CallSid locked and the key claimed as applied when the call is
    // the account's and not erased. Whether the status moves the call forward is known only from the
    // call: a first one that does not says so in this transaction (claimIgnored).
    const { call, first, key } = await lockCallClaiming(tx, {
      where: { callSid },
      callSid,
      organizationId: account.organizationId,
      claim: { kind: 'status', key: `status:${callSid}:${status}`, outcome: 'applied', now },
    });
    if (!call || call.organization_id !== account.organizationId || call.erased_at) return;
    const customerLeg = call.provider_call_sid !== callSid;
    const current = customerLeg ? call.provider_customer_call_status : call.provider_call_status;
    const forward = current === null || (RANK[status] ?? 0) > (RANK[current] ?? -1);
    if (!first) return;
    if (!forward) {
      await claimIgnored(tx, key!, `after ${current}`);
      deps.log.warn(
        { call_id: call.id, call_sid: callSid, status, current },
        'twilio status callback out of order: not applied',
      );
      return;
    }
    await tx.query(
      `UPDATE calls SET ${customerLeg ? 'provider_customer_call_status' : 'provider_call_status'} = $2, updated_at = $3 WHERE id = $1`,
      [call.id, status, now],
    );
    if (call.direction === 'inbound' && isFinalCallStatus(status) && call.recording_consent === 'announced') {
      try {
        await refuseRecordingIn(tx, deps, call.id);
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
      }
    }
  });
}
