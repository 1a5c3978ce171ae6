import { DAY, HOUR } from '../../clock.ts';
import { inScope, scopeParams } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import { nextSubscriptionState, type SubscriptionState } from '../../domain/subscription-state.ts';
import type { TenantScope } from '../../domain/tenant.ts';
import { AppError, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { encryptSecret } from '../delivery/secret-box.ts';
import { lockSubscription, newSigningSecret } from './subscriptions.ts';
import { enqueueTestEvent, subscriptionInactive } from './test-event.ts';

/**
 * Signing-secret rotation (spec "Authentication" 10-11, "Limits").
 * Standard: a 'pending' secret waits up to 24 h; it can be tested (a webhook.test signed with it);
 * activation makes it 'active' at once and the old one 'retiring' for 1 h, then 'retired'. The
 * service sends exactly one v1 signature, always with the active secret: the 1 h is the receiver's
 * grace window to keep accepting the old secret (for deliveries signed just before activation and
 * still in flight or retried), after which it removes it.
 * Emergency: the new secret is active at once, every older one is retired (no grace), the
 * subscription is paused and its queued deliveries are skipped (resendable); resume by re-verifying.
 */
export const PENDING_ROTATION_TTL_MS = DAY;
export const RETIRING_GRACE_MS = HOUR;

const rotationConflict = (message: string) => new AppError('CONFLICT', message);

async function expireSecrets(tx: Queryable, where: string, params: unknown[], now: Date, reason: string) {
  const { rows } = await tx.query<{ id: string }>(
    `UPDATE webhook_secrets SET status = 'expired', retired_at = $${params.length + 1}
      WHERE status = 'pending' AND ${where} RETURNING id`,
    [...params, now],
  );
  if (rows.length === 0) return 0;
  // Rotation tests still waiting to go out with an expired secret would sign with a dead key.
  await tx.query(
    `UPDATE webhook_deliveries SET status = 'skipped', reason = $2, lease_owner = NULL, lease_expires_at = NULL,
            updated_at = $3
      WHERE secret_id = ANY ($1::uuid[]) AND status = 'pending'`,
    [rows.map((r) => r.id), reason, now],
  );
  return rows.length;
}

export interface StartedRotation {
  rotation_id: string;
  secret: string;
  status: 'pending' | 'active';
  expires_at: string | null;
  state: SubscriptionState;
}

/** `alongside`, when given, runs in the rotation's transaction (the web app keeps the secret for its one-time reveal). */
export async function startRotation(
  deps: Deps,
  r: { scope: TenantScope; subscriptionId: string; emergency: boolean },
  alongside?: (tx: Queryable, started: StartedRotation) => Promise<void>,
): Promise<StartedRotation> {
  const secret = newSigningSecret();
  const ciphertext = encryptSecret(deps.keys.secretEncryptionKey, secret);
  const rotationId = newId();
  return deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const sub = await lockSubscription(tx, r.scope, r.subscriptionId);
    // Only one pending rotation at a time: a new one replaces (expires) an older pending one,
    // since its secret was shown once and may be lost.
    await expireSecrets(tx, 'subscription_id = $1', [sub.id], now, 'rotation_replaced');
    if (!r.emergency) {
      const expiresAt = new Date(now.getTime() + PENDING_ROTATION_TTL_MS);
      await tx.query(
        `INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 'pending', 'standard', $5, $6)`,
        [rotationId, sub.id, r.scope.organizationId, ciphertext, now, expiresAt],
      );
      const started: StartedRotation = {
        rotation_id: rotationId,
        secret,
        status: 'pending',
        expires_at: expiresAt.toISOString(),
        state: sub.state,
      };
      if (alongside) await alongside(tx, started);
      return started;
    }
    await tx.query(
      `UPDATE webhook_secrets SET status = 'retired', retired_at = $2
        WHERE subscription_id = $1 AND status IN ('active', 'retiring')`,
      [sub.id, now],
    );
    await tx.query(
      `INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at, activated_at)
       VALUES ($1, $2, $3, $4, 'active', 'emergency', $5, $5)`,
      [rotationId, sub.id, r.scope.organizationId, ciphertext, now],
    );
    const t = nextSubscriptionState(sub.state, { kind: 'emergency_rotation' });
    if (t.state !== sub.state || t.pausedReason) {
      await tx.query(
        `UPDATE webhook_subscriptions SET state = $2, paused_reason = $3, paused_at = $4, updated_at = $4 WHERE id = $1`,
        [sub.id, t.state, t.pausedReason, now],
      );
    }
    if (t.skipQueued) {
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'skipped', reason = 'emergency_rotation', lease_owner = NULL,
                lease_expires_at = NULL, updated_at = $2
          WHERE subscription_id = $1 AND status = 'pending'`,
        [sub.id, now],
      );
    }
    const started: StartedRotation = {
      rotation_id: rotationId,
      secret,
      status: 'active',
      expires_at: null,
      state: t.state,
    };
    if (alongside) await alongside(tx, started);
    return started;
  });
}

type SecretRow = { id: string; status: string; expires_at: Date | null };

/**
 * Reads the rotation under lock and checks it is a live pending secret. An overdue one is marked
 * expired (that write commits) and the caller gets 409 CONFLICT after the transaction.
 */
async function livePending<T>(
  deps: Deps,
  r: { scope: TenantScope; subscriptionId: string; rotationId: string },
  use: (tx: Queryable, sub: { id: string; state: SubscriptionState }, now: Date) => Promise<T>,
): Promise<T> {
  const outcome = await deps.db.transaction(async (tx): Promise<{ ok: T } | { error: string }> => {
    const now = deps.clock.now();
    const sub = await lockSubscription(tx, r.scope, r.subscriptionId);
    const { rows } = await tx.query<SecretRow>(
      'SELECT id, status, expires_at FROM webhook_secrets WHERE id = $1 AND subscription_id = $2 FOR UPDATE',
      [r.rotationId, sub.id],
    );
    const secret = rows[0];
    if (!secret) throw notFound(`No rotation ${r.rotationId} on this webhook subscription.`);
    if (secret.status === 'pending' && secret.expires_at && secret.expires_at.getTime() <= now.getTime()) {
      await expireSecrets(tx, 'id = $1', [secret.id], now, 'rotation_expired');
      return { error: 'expired' };
    }
    if (secret.status !== 'pending') return { error: secret.status };
    return { ok: await use(tx, sub, now) };
  });
  if ('ok' in outcome) return outcome.ok;
  if (outcome.error === 'expired') {
    throw rotationConflict(
      'This rotation expired: a pending secret must be activated within 24 hours. Start a new rotation.',
    );
  }
  throw rotationConflict(
    `This rotation is ${outcome.error}, not pending; only a pending rotation can be tested or activated.`,
  );
}

/** POST …/rotations/:rid/test — a webhook.test signed with the pending secret (delivery.secret_id). */
export async function testRotation(
  deps: Deps,
  r: { scope: TenantScope; subscriptionId: string; rotationId: string },
): Promise<{ event_id: string; delivery_id: string }> {
  return livePending(deps, r, async (tx, sub, now) => {
    if (sub.state !== 'active') throw subscriptionInactive();
    return enqueueTestEvent(tx, {
      scope: r.scope,
      subscriptionId: sub.id,
      secretId: r.rotationId,
      now,
      publicBaseUrl: deps.config.publicBaseUrl,
    });
  });
}

/** POST …/rotations/:rid/activate — signing switches at once; the old secret retires in 1 h. */
export async function activateRotation(
  deps: Deps,
  r: { scope: TenantScope; subscriptionId: string; rotationId: string },
): Promise<{ rotation_id: string; activated_at: string; previous_secret_retires_at: string | null }> {
  return livePending(deps, r, async (tx, sub, now) => {
    const retiresAt = new Date(now.getTime() + RETIRING_GRACE_MS);
    // A secret still in an earlier grace window retires now: the receiver keeps at most two.
    await tx.query(
      `UPDATE webhook_secrets SET status = 'retired', retired_at = $2 WHERE subscription_id = $1 AND status = 'retiring'`,
      [sub.id, now],
    );
    const prev = await tx.query(
      `UPDATE webhook_secrets SET status = 'retiring', expires_at = $2
        WHERE subscription_id = $1 AND status = 'active' RETURNING id`,
      [sub.id, retiresAt],
    );
    await tx.query(
      `UPDATE webhook_secrets SET status = 'active', activated_at = $2, expires_at = NULL WHERE id = $1`,
      [r.rotationId, now],
    );
    return {
      rotation_id: r.rotationId,
      activated_at: now.toISOString(),
      previous_secret_retires_at: prev.rowCount > 0 ? retiresAt.toISOString() : null,
    };
  });
}

/**
 * Periodic job (worker): pending secrets past their 24 h become 'expired' (their waiting rotation
 * tests are skipped), retiring secrets past their 1 h grace become 'retired'.
 */
export async function expirePendingRotations(
  deps: Pick<Deps, 'db' | 'clock'>,
): Promise<{ expired: number; retired: number }> {
  return deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const expired = await expireSecrets(tx, 'expires_at <= $1', [now], now, 'rotation_expired');
    const retired = await tx.query(
      `UPDATE webhook_secrets SET status = 'retired', retired_at = $1
        WHERE status = 'retiring' AND expires_at <= $1 RETURNING id`,
      [now],
    );
    return { expired, retired: retired.rowCount };
  });
}

export async function listRotations(q: Queryable, scope: TenantScope, subscriptionId: string) {
  const { rows } = await q.query<{
    id: string;
    status: string;
    kind: string;
    created_at: Date;
    expires_at: Date | null;
    activated_at: Date | null;
    retired_at: Date | null;
  }>(
    `SELECT id, status, kind, created_at, expires_at, activated_at, retired_at FROM webhook_secrets
      WHERE subscription_id = $1
        AND EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = $1 AND ${inScope('s', 2, 3)})
      ORDER BY created_at DESC, id DESC`,
    [subscriptionId, ...scopeParams(scope)],
  );
  return rows.map((s) => ({
    rotation_id: s.id,
    status: s.status,
    kind: s.kind,
    created_at: s.created_at.toISOString(),
    expires_at: s.expires_at?.toISOString() ?? null,
    activated_at: s.activated_at?.toISOString() ?? null,
    retired_at: s.retired_at?.toISOString() ?? null,
  }));
}
