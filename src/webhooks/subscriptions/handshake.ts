import { randomBytes } from 'node:crypto';
import { SECOND } from '../../clock.ts';
import { inScope, scopeParams } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import {
  handshakeAccepted,
  nextSubscriptionState,
  type SubscriptionState,
  type VerificationMode,
} from '../../domain/subscription-state.ts';
import type { TenantScope } from '../../domain/tenant.ts';
import { notFound, validationError } from '../../errors.ts';
import { createWebhookClient } from '../delivery/http-client.ts';

/**
 * The verification handshake (spec "Verification handshake"): an unsigned POST whose body has
 * exactly the two keys event_type and challenge. permissive: any 2xx accepts; strict: a 2xx whose
 * JSON body echoes the challenge. It never creates an event, a delivery or any business record.
 */
export const VERIFY_EVENT_TYPE = 'webhook.subscription.verify';
/** The console waits for the receiver while the user watches: ten seconds, then the handshake fails. */
export const HANDSHAKE_TIMEOUT_MS = 10 * SECOND;
/** Enough for {"challenge": "<43 chars>"} and some wrapping; larger replies fail a strict check. */
export const HANDSHAKE_MAX_RESPONSE_BYTES = 4096;

export interface HandshakeResult {
  accepted: boolean;
  /** the receiver's HTTP status, null when no response came */
  response_status: number | null;
  /** e.g. timeout, connection_refused, blocked_target; null when a response came */
  error_class: string | null;
  duration_ms: number;
}

export async function performHandshake(
  deps: Deps,
  target: { url: string; mode: VerificationMode },
): Promise<HandshakeResult> {
  const challenge = randomBytes(32).toString('base64url');
  const body = JSON.stringify({ event_type: VERIFY_EVENT_TYPE, challenge });
  const client = createWebhookClient({
    allowPrivateTargets: deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    timeoutMs: HANDSHAKE_TIMEOUT_MS,
    maxResponseBytes: HANDSHAKE_MAX_RESPONSE_BYTES,
    lookup: deps.dnsLookup,
  });
  try {
    const r = await client.post(target.url, body, { 'content-type': 'application/json' });
    if (r.kind === 'error') {
      return { accepted: false, response_status: null, error_class: r.errorClass, duration_ms: r.durationMs };
    }
    const accepted = handshakeAccepted(target.mode, challenge, {
      kind: 'response',
      status: r.status,
      body: r.snippet ?? '',
    });
    return { accepted, response_status: r.status, error_class: null, duration_ms: r.durationMs };
  } finally {
    await client.close();
  }
}

/** Serialises activations of one organization (the active-subscription limit); returns the limit. */
export async function lockActivationSlot(q: Queryable, organizationId: string): Promise<number> {
  const { rows } = await q.query<{ max_active_subscriptions: number }>(
    'SELECT max_active_subscriptions FROM organizations WHERE id = $1 FOR UPDATE',
    [organizationId],
  );
  if (!rows[0]) throw notFound(`No organization ${organizationId}.`);
  return rows[0].max_active_subscriptions;
}

const limitMessage = (max: number) =>
  `Your account already has ${max} active webhook subscriptions, the most it may have; delete one before adding or re-verifying another.`;

/**
 * 422 VALIDATION_ERROR when one more active subscription would exceed the account's limit
 * (organizations.max_active_subscriptions), counted per data environment (the same limit in each,
 * docs/decisions.md "Environments"). Locks the organization row first, so two activations cannot
 * both take the last slot. Returns the limit.
 */
export async function assertActivationAllowed(q: Queryable, scope: TenantScope, exceptId: string | null) {
  const max = await lockActivationSlot(q, scope.organizationId);
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_subscriptions
      WHERE ${inScope(null, 1, 2)} AND deleted_at IS NULL AND state = 'active' AND kind = 'webhook'
        AND ($3::uuid IS NULL OR id <> $3)`,
    [...scopeParams(scope), exceptId],
  );
  if ((rows[0]?.n ?? 0) >= max) throw validationError(limitMessage(max));
  return max;
}

/** Wakes the delivery workers (LISTEN webhook_deliveries); call inside the writing transaction. */
export async function wakeWorkers(q: Queryable): Promise<void> {
  await q.query(`SELECT pg_notify('webhook_deliveries', '')`);
}

/**
 * Applies a handshake outcome to an existing subscription (re-verification). On success a paused
 * or inactive subscription becomes active: counters reset, paused_reason cleared, and the workers
 * are woken so its waiting deliveries go out. The active limit is checked first (422).
 */
export async function applyHandshake(
  tx: Queryable,
  s: {
    scope: TenantScope;
    subscriptionId: string;
    from: SubscriptionState;
    accepted: boolean;
    now: Date;
  },
): Promise<SubscriptionState> {
  const t = nextSubscriptionState(s.from, { kind: 'handshake', accepted: s.accepted });
  if (s.accepted) {
    await tx.query('UPDATE webhook_subscriptions SET last_verified_at = $2 WHERE id = $1', [
      s.subscriptionId,
      s.now,
    ]);
  }
  if (t.state === s.from) return t.state;
  if (t.state === 'active') await assertActivationAllowed(tx, s.scope, s.subscriptionId);
  await tx.query(
    `UPDATE webhook_subscriptions
        SET state = $2,
            paused_reason = CASE WHEN $3::boolean THEN NULL ELSE paused_reason END,
            paused_at = CASE WHEN $3::boolean THEN NULL ELSE paused_at END,
            consecutive_transient_failures = CASE WHEN $4::boolean THEN 0 ELSE consecutive_transient_failures END,
            consecutive_gone = CASE WHEN $4::boolean THEN 0 ELSE consecutive_gone END,
            updated_at = $5
      WHERE id = $1`,
    [s.subscriptionId, t.state, t.pausedReason === null, t.resetCounters, s.now],
  );
  if (t.wakeQueue) await wakeWorkers(tx);
  return t.state;
}

/**
 * POST …/verify: a fresh handshake against the stored URL and mode, then the transition. The
 * network call runs outside any transaction; the state is re-read under lock afterwards.
 */
export async function verifySubscription(
  deps: Deps,
  scope: TenantScope,
  id: string,
): Promise<{ state: SubscriptionState; verification: HandshakeResult }> {
  const { rows } = await deps.db.query<{ url: string; verification_mode: VerificationMode }>(
    `SELECT url, verification_mode FROM webhook_subscriptions
      WHERE id = $1 AND ${inScope(null, 2, 3)} AND deleted_at IS NULL AND kind = 'webhook'`,
    [id, ...scopeParams(scope)],
  );
  const sub = rows[0];
  if (!sub) throw notFound(`No webhook subscription ${id} in your organization.`);
  const verification = await performHandshake(deps, { url: sub.url, mode: sub.verification_mode });
  const state = await deps.db.transaction(async (tx) => {
    const cur = await tx.query<{ state: SubscriptionState }>(
      `SELECT state FROM webhook_subscriptions
        WHERE id = $1 AND ${inScope(null, 2, 3)} AND deleted_at IS NULL AND kind = 'webhook' FOR UPDATE`,
      [id, ...scopeParams(scope)],
    );
    if (!cur.rows[0]) throw notFound(`No webhook subscription ${id} in your organization.`);
    return applyHandshake(tx, {
      scope,
      subscriptionId: id,
      from: cur.rows[0].state,
      accepted: verification.accepted,
      now: deps.clock.now(),
    });
  });
  return { state, verification };
}
