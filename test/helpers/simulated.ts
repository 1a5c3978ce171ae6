/**
 * The simulated carrier end to end: an organization without any telephony (no account, no service
 * number), a signed-webhook receiver, and `playOut` — the durable jobs run as a worker runs them,
 * the fake clock moved to each step of the simulated call as it falls due, then every event
 * delivered and read back verified at the receiver.
 */
import assert from 'node:assert/strict';
import { verifyWebhook } from '../../sdk/src/webhooks/verify.ts';
import { captureStageHandlers } from '../../src/capture/jobs/stages/index.ts';
import { telephonyStageHandlers } from '../../src/capture/telephony/download-stage.ts';
import { insertApiKey, insertOrg } from './fixtures.ts';
import type { Harness } from './harness.ts';
import { settleJobs } from './jobs.ts';
import type { TelephonyEnv } from './telephony.ts';
import { drain, insertSubscription } from './webhooks.ts';

export interface SimOrg {
  orgId: string;
  ownerId: string;
  apiKey: string;
  secret: string;
}

/** A US organization with no telephony account and no service number, a test API key and a test subscription. */
export async function simOrg(t: TelephonyEnv): Promise<SimOrg> {
  const { orgId, ownerId } = await insertOrg(t.h.db, { country: 'US' });
  const { key } = await insertApiKey(t.h.db, {
    orgId,
    userId: ownerId,
    environment: 'test',
    scopes: ['read.calls', 'read.recordings', 'write.calls'],
  });
  const sub = await insertSubscription(t.h.deps, { orgId, url: t.receiver.url, environment: 'test' });
  return { orgId, ownerId, apiKey: key, secret: sub.secret };
}

const handlers = () => ({ ...captureStageHandlers(), ...telephonyStageHandlers() });

/**
 * Plays a call to its end: runs the due processing jobs, and while the call's simulate job waits,
 * moves the fake clock to its next step. Answers how many seconds of (fake) time it took.
 */
export async function playOut(h: Pick<Harness, 'deps' | 'clock'>, callId: string): Promise<number> {
  const { deps } = h;
  const start = deps.clock.now().getTime();
  for (let round = 0; round < 100; round++) {
    await settleJobs(deps, { handlers: handlers() });
    const { rows } = await deps.db.query<{ next: Date | null }>(
      `SELECT min(next_attempt_at) AS next FROM processing_jobs
        WHERE call_id = $1 AND state IN ('pending', 'waiting')`,
      [callId],
    );
    const next = rows[0]?.next;
    if (!next) return (deps.clock.now().getTime() - start) / 1000;
    h.clock.set(new Date(Math.max(new Date(next).getTime(), deps.clock.now().getTime())));
  }
  throw new Error(`call ${callId} did not finish playing`);
}

/** Delivers every due event and answers the call's events at the receiver (SDK-verified), in arrival order. */
export async function simEvents(t: TelephonyEnv, org: SimOrg, callId: string) {
  await drain(t.h.deps);
  const out = [];
  for (const r of t.receiver.requests) {
    let e: ReturnType<typeof verifyWebhook>;
    try {
      e = verifyWebhook(r.body, r.headers, org.secret, { now: () => t.h.clock.now().getTime() });
    } catch {
      continue; // another organization's subscription
    }
    if ((e.data as { call_id?: string }).call_id === callId) out.push(e);
  }
  return out;
}

/** The stored outcome of a simulated call. */
export async function simRow(t: TelephonyEnv, id: string) {
  const { rows } = await t.h.db.query<Record<string, unknown>>(
    `SELECT outbound_lifecycle, failure_reason, recording_state, telephony_provider, recording_channels,
            processing_state, voicemail, customer_phone_e164, company_phone_e164, agent_phone_e164
       FROM calls WHERE id = $1`,
    [id],
  );
  assert.ok(rows[0], `call ${id}`);
  return rows[0];
}
