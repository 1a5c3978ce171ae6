import type { Queryable } from '../../db/types.ts';

/**
 * At most once: a provider callback records its dedupe key in the transaction that applies it (or
 * that decides not to). A second delivery of the same callback finds the key and changes nothing.
 * Answers false when the key was already recorded.
 */
export async function claimCallback(
  tx: Queryable,
  c: {
    provider: 'twilio';
    key: string;
    organizationId: string;
    callId: string | null;
    kind: string;
    outcome: 'applied' | 'ignored';
    detail?: string | null;
    now: Date;
  },
): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO telephony_callbacks (provider, dedupe_key, organization_id, call_id, kind, outcome, detail, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (provider, dedupe_key) DO NOTHING`,
    [c.provider, c.key, c.organizationId, c.callId, c.kind, c.outcome, c.detail ?? null, c.now],
  );
  return r.rowCount === 1;
}

/** Whether a callback with this key was already recorded. */
export async function callbackSeen(q: Queryable, provider: 'twilio', key: string): Promise<boolean> {
  const r = await q.query('SELECT 1 FROM telephony_callbacks WHERE provider = $1 AND dedupe_key = $2', [
    provider,
    key,
  ]);
  return r.rowCount > 0;
}

/**
 * A callback's dedupe key claimed in the statement that locks its call (lockCallClaiming in
 * ./twilio/inbound.ts): the row is written only when the call is the account's, not erased, and the
 * CallSid its own. `key`: the key itself, or [before, after] around the call's provider_call_sid
 * (known only once the call is read; a call without one writes 'null' there, as a JS template did).
 * `outcome`/`detail`: what is recorded when the key is new; a callback that decides only after
 * reading the call claims 'applied' and, should it not apply it, calls claimIgnored in the same
 * transaction (the row then reads as if it had been written 'ignored').
 */
export interface CallbackClaim {
  kind: string;
  key: string | [before: string, after: string];
  outcome: 'applied' | 'ignored';
  detail?: string | null;
  now: Date;
}

/** The claim this transaction just wrote (lockCallClaiming's `first`) turns out ignored: its outcome and why. */
export async function claimIgnored(tx: Queryable, key: string, detail: string | null): Promise<void> {
  await tx.query(
    `UPDATE telephony_callbacks SET outcome = 'ignored', detail = $3 WHERE provider = $1 AND dedupe_key = $2`,
    ['twilio', key, detail],
    { name: 'twilio_claim_ignored_v1' },
  );
}
