import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { inScope, scopeParams } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import type { SubscriptionState, VerificationMode } from '../../domain/subscription-state.ts';
import type { Environment, TenantScope } from '../../domain/tenant.ts';
import { badRequest, notFound, validationError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { resolvesToBlocked } from '../delivery/http-client.ts';
import { encryptSecret } from '../delivery/secret-box.ts';
import { blockedTargetMessage, normaliseHost, validateReceiverUrl } from '../delivery/ssrf.ts';
import { SELECTABLE_EVENT_TYPES, TEST_EVENT_TYPE } from '../outbox/event-types.ts';
import { assertActivationAllowed, type HandshakeResult, performHandshake } from './handshake.ts';

/**
 * Webhook subscriptions of one organization's environment (a TenantScope): create (with the
 * verification handshake), list, read, soft-delete. A test subscription receives only test events,
 * a live one only live events (webhooks/outbox/outbox.ts). The signing secret is returned once, at creation, and stored encrypted.
 */
/**
 * Subscriptions that are not deleted (any state) per account, as a multiple of its active limit:
 * inactive ones cost nothing to keep, but each creation sends a request, so the list stays bounded.
 */
export const TOTAL_SUBSCRIPTIONS_FACTOR = 5;

export interface SubscriptionView {
  subscription_id: string;
  url: string;
  /** the data environment whose events it receives */
  environment: Environment;
  /** empty = every event type */
  event_types: string[];
  verification_mode: VerificationMode;
  state: SubscriptionState;
  paused_reason: string | null;
  paused_at: string | null;
  last_verified_at: string | null;
  consecutive_transient_failures: number;
  consecutive_gone: number;
  created_at: string;
  updated_at: string;
  /** the standard rotation waiting for activation, if any (never the secret) */
  pending_rotation: { rotation_id: string; expires_at: string } | null;
}

/** Signing secrets look like Stripe's: a readable prefix and 32 random bytes (base64). */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const iso = (d: Date | null) => d?.toISOString() ?? null;

const SELECT_VIEW = `
  SELECT s.id, s.url, s.environment, s.event_types, s.verification_mode, s.state, s.paused_reason, s.paused_at, s.last_verified_at,
         s.consecutive_transient_failures, s.consecutive_gone, s.created_at, s.updated_at,
         p.id AS pending_id, p.expires_at AS pending_expires_at
    FROM webhook_subscriptions s
    LEFT JOIN LATERAL (
      SELECT id, expires_at FROM webhook_secrets
       WHERE subscription_id = s.id AND status = 'pending' AND expires_at > $3
       ORDER BY created_at DESC LIMIT 1) p ON true
   WHERE ${inScope('s', 1, 2)} AND s.deleted_at IS NULL AND s.kind = 'webhook'`;

type ViewRow = {
  id: string;
  url: string;
  environment: Environment;
  event_types: string[];
  verification_mode: VerificationMode;
  state: SubscriptionState;
  paused_reason: string | null;
  paused_at: Date | null;
  last_verified_at: Date | null;
  consecutive_transient_failures: number;
  consecutive_gone: number;
  created_at: Date;
  updated_at: Date;
  pending_id: string | null;
  pending_expires_at: Date | null;
};

function toView(r: ViewRow): SubscriptionView {
  return {
    subscription_id: r.id,
    url: r.url,
    environment: r.environment,
    event_types: r.event_types,
    verification_mode: r.verification_mode,
    state: r.state,
    paused_reason: r.paused_reason,
    paused_at: iso(r.paused_at),
    last_verified_at: iso(r.last_verified_at),
    consecutive_transient_failures: r.consecutive_transient_failures,
    consecutive_gone: r.consecutive_gone,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    pending_rotation:
      r.pending_id && r.pending_expires_at
        ? { rotation_id: r.pending_id, expires_at: r.pending_expires_at.toISOString() }
        : null,
  };
}

export async function listSubscriptions(
  q: Queryable,
  scope: TenantScope,
  now: Date,
): Promise<SubscriptionView[]> {
  const { rows } = await q.query<ViewRow>(`${SELECT_VIEW} ORDER BY s.created_at DESC, s.id DESC`, [
    ...scopeParams(scope),
    now,
  ]);
  return rows.map(toView);
}

export async function getSubscription(
  q: Queryable,
  scope: TenantScope,
  id: string,
  now: Date,
): Promise<SubscriptionView | null> {
  const { rows } = await q.query<ViewRow>(`${SELECT_VIEW} AND s.id = $4`, [...scopeParams(scope), now, id]);
  return rows[0] ? toView(rows[0]) : null;
}

/** Checks the selection: known, selectable types only; duplicates dropped; empty = all types. */
export function checkEventTypes(types: readonly string[] | undefined): string[] {
  for (const t of types ?? []) {
    if (t === TEST_EVENT_TYPE) {
      throw badRequest(
        `Event type "${t}" cannot be selected: it is sent only by the Test action, to that subscription, whatever its selection.`,
      );
    }
    if (!SELECTABLE_EVENT_TYPES.includes(t)) {
      throw badRequest(
        `Unknown event type "${t}" in "event_types"; known types: ${SELECTABLE_EVENT_TYPES.join(', ')}.`,
      );
    }
  }
  return [...new Set(types ?? [])];
}

/**
 * 400 BAD_REQUEST naming the problem (scheme, credentials, blocked address, length). Unless private
 * targets are allowed, a host name is resolved too (bounded wait) and refused when any of its
 * addresses is not public; the HTTP client checks again at every connection (DNS can change).
 */
export async function checkReceiverUrl(deps: Deps, url: string): Promise<string> {
  const allowPrivateTargets = deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS;
  const r = validateReceiverUrl(url, { allowPrivateTargets });
  if (!r.ok) throw badRequest(`Field "url" is not acceptable: ${r.message}`);
  const host = normaliseHost(r.url.hostname);
  if (!allowPrivateTargets && isIP(host) === 0) {
    const blocked = await resolvesToBlocked(host, deps.dnsLookup);
    if (blocked !== null)
      throw badRequest(`Field "url" is not acceptable: ${blockedTargetMessage(host, blocked)}`);
  }
  return url;
}

/**
 * Creates a subscription. The handshake runs before anything is written, so the row, its secret
 * and its state are written in one transaction together with the limit check: a refused creation
 * (limit reached) leaves nothing behind, and a failed handshake leaves an inactive subscription.
 */
export interface CreatedSubscription {
  subscription_id: string;
  secret: string;
  state: SubscriptionState;
  verification: HandshakeResult;
}

/**
 * `alongside`, when given, runs in the transaction that inserts the subscription and its secret (the
 * web app keeps the secret for its one-time reveal there: no subscription is made whose secret
 * cannot be shown).
 */
export async function createSubscription(
  deps: Deps,
  scope: TenantScope,
  input: { url: string; eventTypes?: string[]; verificationMode?: VerificationMode },
  alongside?: (tx: Queryable, created: CreatedSubscription) => Promise<void>,
): Promise<CreatedSubscription> {
  const eventTypes = checkEventTypes(input.eventTypes);
  const mode = input.verificationMode ?? 'permissive';
  const url = await checkReceiverUrl(deps, input.url);
  // Fail fast, before sending anything, when the account is already at its limit.
  await deps.db.transaction(async (tx) => {
    const max = await assertActivationAllowed(tx, scope, null);
    const { rows } = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_subscriptions
        WHERE ${inScope(null, 1, 2)} AND deleted_at IS NULL AND kind = 'webhook'`,
      scopeParams(scope),
    );
    const total = max * TOTAL_SUBSCRIPTIONS_FACTOR;
    if ((rows[0]?.n ?? 0) >= Math.max(total, 1)) {
      throw validationError(
        `Your account already has ${rows[0]?.n} webhook subscriptions (at most ${total}, active or not); delete unused ones first.`,
      );
    }
  });
  const verification = await performHandshake(deps, { url, mode });
  const secret = newSigningSecret();
  const id = newId();
  const state: SubscriptionState = verification.accepted ? 'active' : 'inactive';
  await deps.db.transaction(async (tx) => {
    if (verification.accepted) await assertActivationAllowed(tx, scope, null);
    const now = deps.clock.now();
    await tx.query(
      `INSERT INTO webhook_subscriptions (id, organization_id, environment, url, event_types, verification_mode, state,
         last_verified_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
      [id, ...scopeParams(scope), url, eventTypes, mode, state, verification.accepted ? now : null, now],
    );
    await tx.query(
      `INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at, activated_at)
       VALUES ($1, $2, $3, $4, 'active', 'initial', $5, $5)`,
      [newId(), id, scope.organizationId, encryptSecret(deps.keys.secretEncryptionKey, secret), now],
    );
    if (alongside) await alongside(tx, { subscription_id: id, secret, state, verification });
  });
  return { subscription_id: id, secret, state, verification };
}

/**
 * Soft delete: the row stays for the delivery log's foreign keys; its waiting deliveries become
 * skipped ('subscription_deleted') and its secrets are retired. Returns false when not found.
 */
export async function deleteSubscription(deps: Deps, scope: TenantScope, id: string): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const del = await tx.query(
      `UPDATE webhook_subscriptions SET deleted_at = $4, updated_at = $4
        WHERE id = $1 AND ${inScope(null, 2, 3)} AND deleted_at IS NULL AND kind = 'webhook' RETURNING id`,
      [id, ...scopeParams(scope), now],
    );
    if (del.rowCount === 0) return false;
    await retireSubscription(tx, id, now);
    return true;
  });
}

/** What a soft delete does besides the row's deleted_at: skip its waiting deliveries, retire its secrets. */
export async function retireSubscription(tx: Queryable, id: string, now: Date): Promise<void> {
  await tx.query(
    `UPDATE webhook_deliveries SET status = 'skipped', reason = 'subscription_deleted', lease_owner = NULL,
              lease_expires_at = NULL, updated_at = $2
        WHERE subscription_id = $1 AND status = 'pending'`,
    [id, now],
  );
  await tx.query(
    `UPDATE webhook_secrets SET status = CASE WHEN status = 'pending' THEN 'expired' ELSE 'retired' END,
              retired_at = $2
        WHERE subscription_id = $1 AND status IN ('pending', 'active', 'retiring')`,
    [id, now],
  );
}

/** The subscription row for a service, locked; 404 when missing, deleted or outside the scope. */
export async function lockSubscription(
  tx: Queryable,
  scope: TenantScope,
  id: string,
): Promise<{ id: string; state: SubscriptionState; url: string; verification_mode: VerificationMode }> {
  const { rows } = await tx.query<{
    id: string;
    state: SubscriptionState;
    url: string;
    verification_mode: VerificationMode;
  }>(
    `SELECT id, state, url, verification_mode FROM webhook_subscriptions
      WHERE id = $1 AND ${inScope(null, 2, 3)} AND deleted_at IS NULL AND kind = 'webhook' FOR UPDATE`,
    [id, ...scopeParams(scope)],
  );
  if (!rows[0]) throw notFound(`No webhook subscription ${id} in your organization.`);
  return rows[0];
}
