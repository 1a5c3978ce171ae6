import type { Queryable } from '../../../db/types.ts';
import type { Deps } from '../../../deps.ts';
import type { SimulatedScenario } from '../../../domain/simulated-call.ts';
import { enqueueStage } from '../../jobs/enqueue.ts';
import type { TelephonyAccount } from '../accounts.ts';

/**
 * What the simulated carrier keeps: its "account" (the credentials its callbacks are checked
 * against, never stored), the legs' and the recording's sids (derived from the call id, so a
 * replayed step names the same ones), the simulated store (its recordings, under `simulated/` in
 * the service's blob store, until the download stage moves them to the call), and the row of each
 * simulated call (simulated_calls: scenario, script, progress).
 */
export const SIMULATED_ACCOUNT_SID = 'simulated';

/** The account the simulated carrier's callbacks are applied as (telephony_provider 'simulated'). */
export const simulatedAccount = (organizationId: string): TelephonyAccount => ({
  organizationId,
  provider: 'simulated',
  accountSid: SIMULATED_ACCOUNT_SID,
  authToken: '',
});

const hex = (callId: string) => callId.replace(/-/g, '');
/** The parent leg (the agent of an outbound call, the caller of an inbound one). */
export const parentSid = (callId: string) => `SIMCA${hex(callId)}`;
/** The child leg (the customer of an outbound call, the agent rung for an inbound one). */
export const childSid = (callId: string) => `SIMCB${hex(callId)}`;
export const recordingSidOf = (callId: string) => `SIMRE${hex(callId)}`;

/** Where the simulated carrier keeps a call's recording until the download stage stores it. */
export const simulatedRecordingKey = (organizationId: string, callId: string) =>
  `simulated/${organizationId}/${callId}.mp3`;
/** The recording URL the simulated carrier announces: its own store, never fetched over HTTP. */
export const SIMULATED_URL_PREFIX = 'simulated:';

/**
 * Stores a simulated call's row and queues its first step (the `simulate` stage, due now), in the
 * transaction that stores the call: a stored test call is always played, even across a restart.
 */
export async function startSimulation(
  tx: Queryable,
  deps: Deps,
  s: {
    callId: string;
    organizationId: string;
    scenario: SimulatedScenario;
    script: string;
    targetSeconds: number | null;
  },
): Promise<void> {
  const now = deps.clock.now();
  await tx.query(
    `INSERT INTO simulated_calls (call_id, organization_id, scenario, script, target_seconds, step, started_at)
     VALUES ($1, $2, $3, $4, $5, 0, $6)`,
    [s.callId, s.organizationId, s.scenario, s.script, s.targetSeconds, now],
  );
  await enqueueStage(tx, { organizationId: s.organizationId, callId: s.callId, stage: 'simulate', now });
}
