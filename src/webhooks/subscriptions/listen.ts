/**
 * `callcap listen` sessions (docs/cli.md "listen", docs/decisions.md "callcap listen"): while a CLI
 * stream is connected, a webhook subscription of kind 'cli' like any other for the outbox — the
 * fan-out, the reconciliation and resends create its deliveries with the same event ids — whose
 * deliveries are always held (migration 0010), so the delivery worker never claims or POSTs them.
 * The stream itself claims them by subscription under a lease of its own, signs the stored body with
 * the session's secret exactly as the worker would, and marks each delivered when the CLI
 * acknowledges it. An unacknowledged delivery becomes due again when its lease expires (or at once
 * when the CLI reconnects to the session): at-least-once, same event_id.
 *
 * A session not seen (no connected stream refreshing listen_seen_at) for LISTEN_GRACE_MS is deleted
 * like a console subscription: its waiting deliveries are skipped and its secret retired.
 */
import { inScope, scopeParams } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import type { Environment, TenantScope } from '../../domain/tenant.ts';
import { AppError, badRequest, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { carriesCallContent } from '../delivery/attempt.ts';
import { decryptSecret, encryptSecret } from '../delivery/secret-box.ts';
import { deliveryHeaders } from '../delivery/signing.ts';
import { completeDeliveries } from '../delivery/sql/complete-delivery.ts';
import { SELECTABLE_EVENT_TYPES, TEST_EVENT_TYPE } from '../outbox/event-types.ts';
import { wakeWorkers } from './handshake.ts';
import { checkEventTypes, newSigningSecret, retireSubscription } from './subscriptions.ts';
import { enqueueTestEvent } from './test-event.ts';

/** A session whose stream dropped is kept this long, so a reconnect resumes it (nothing lost). */
export const LISTEN_GRACE_MS = 60_000;
/** How long a delivery sent on a stream waits for its acknowledgement before it is sent again. */
export const LISTEN_LEASE_MS = 30_000;
/** How often a connected stream refreshes listen_seen_at (and sends a keep-alive comment). */
export const LISTEN_HEARTBEAT_MS = 10_000;
/** Deliveries claimed per round trip of a stream. */
export const LISTEN_CLAIM_BATCH = 50;
/** The url column of a cli subscription: never fetched (the worker never claims its deliveries). */
export const LISTEN_URL = 'cli:listen';

export const leaseOwnerOf = (streamId: string) => `listen:${streamId}`;

export interface ListenSession {
  subscription_id: string;
  /** shown once, when the session is created; null on a resume (the CLI kept it) */
  secret: string | null;
  event_types: string[];
  resumed: boolean;
}

/** One delivery as a stream sends it: the exact body and the headers the worker would have sent. */
export interface ListenDelivery {
  delivery_id: string;
  event_id: string;
  event_type: string;
  headers: Record<string, string>;
  body: string;
}

export const noListenSession = () =>
  new AppError(
    'CONFLICT',
    'No `callcap listen` session of your organization is connected; start one with "callcap listen --forward-to <url>" first.',
  );

const sessionGone = (id: string) =>
  notFound(
    `No listen session ${id} in your organization (it ended, or was idle longer than the grace period).`,
  );

/** Opens a session, or resumes resumeId (its pending deliveries become due again at once). */
export async function openListenSession(
  deps: Pick<Deps, 'db' | 'clock' | 'keys'>,
  scope: TenantScope,
  input: { eventTypes?: string[]; resumeId?: string },
): Promise<ListenSession> {
  await expireListenSessions(deps);
  const now = deps.clock.now();
  if (input.resumeId !== undefined) {
    const resumeId = input.resumeId;
    return deps.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ event_types: string[] }>(
        `UPDATE webhook_subscriptions SET listen_seen_at = $4, updated_at = $4
          WHERE id = $1 AND ${inScope(null, 2, 3)} AND kind = 'cli' AND deleted_at IS NULL
          RETURNING event_types`,
        [resumeId, ...scopeParams(scope), now],
      );
      if (!rows[0]) throw sessionGone(resumeId);
      await tx.query(
        `UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL, updated_at = $2
          WHERE subscription_id = $1 AND status = 'pending' AND lease_owner IS NOT NULL`,
        [resumeId, now],
      );
      return { subscription_id: resumeId, secret: null, event_types: rows[0].event_types, resumed: true };
    });
  }
  const eventTypes = checkEventTypes(input.eventTypes);
  const secret = newSigningSecret();
  const id = newId();
  await deps.db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO webhook_subscriptions (id, organization_id, environment, url, event_types, verification_mode,
         state, kind, last_verified_at, listen_seen_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'permissive', 'active', 'cli', $6, $6, $6, $6)`,
      [id, ...scopeParams(scope), LISTEN_URL, eventTypes, now],
    );
    await tx.query(
      `INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at, activated_at)
       VALUES ($1, $2, $3, $4, 'active', 'initial', $5, $5)`,
      [newId(), id, scope.organizationId, encryptSecret(deps.keys.secretEncryptionKey, secret), now],
    );
  });
  return { subscription_id: id, secret, event_types: eventTypes, resumed: false };
}

/** Refreshes listen_seen_at; false when the session is gone (the stream should end). */
export async function touchListenSession(db: Queryable, id: string, now: Date): Promise<boolean> {
  const r = await db.query(
    `UPDATE webhook_subscriptions SET listen_seen_at = $2
      WHERE id = $1 AND kind = 'cli' AND deleted_at IS NULL`,
    [id, now],
  );
  return r.rowCount > 0;
}

/** A stream that ends hands its unacknowledged deliveries back (due again at once). */
export async function releaseListenLeases(db: Queryable, subscriptionId: string, owner: string, now: Date) {
  await db.query(
    `UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL, updated_at = $3
      WHERE subscription_id = $1 AND status = 'pending' AND lease_owner = $2`,
    [subscriptionId, owner, now],
  );
}

const CLAIM_SQL = `
WITH due AS (
  SELECT d.id FROM webhook_deliveries d
   WHERE d.subscription_id = $1 AND d.status = 'pending'
     AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $2)
   ORDER BY d.created_at, d.id
   LIMIT $5
   FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE webhook_deliveries d SET lease_owner = $3, lease_expires_at = $4, updated_at = $2
    FROM due WHERE d.id = due.id
  RETURNING d.id, d.event_id, d.event_type, d.secret_id, d.created_at
)
SELECT c.id, c.event_id, c.event_type, e.body, e.environment, k.ciphertext
  FROM claimed c
  JOIN events e ON e.id = c.event_id
  LEFT JOIN LATERAL (
    SELECT k.ciphertext FROM webhook_secrets k
     WHERE k.subscription_id = $1 AND k.status = 'active'
     ORDER BY k.activated_at DESC NULLS LAST, k.created_at DESC LIMIT 1) k ON true
 ORDER BY c.created_at, c.id`;

/**
 * Leases the session's due deliveries to one stream (owner) and answers them signed: the same
 * headers and bytes as a POST of the worker (src/webhooks/delivery/attempt.ts), with a fresh
 * timestamp. A session with no readable secret answers nothing (logged by the caller's absence).
 */
export async function claimListenDeliveries(
  deps: Pick<Deps, 'db' | 'clock' | 'keys'>,
  p: { subscriptionId: string; owner: string; limit?: number },
): Promise<ListenDelivery[]> {
  const now = deps.clock.now();
  const { rows } = await deps.db.query<{
    id: string;
    event_id: string;
    event_type: string;
    body: string;
    environment: Environment;
    ciphertext: string | null;
  }>(CLAIM_SQL, [
    p.subscriptionId,
    now,
    p.owner,
    new Date(now.getTime() + LISTEN_LEASE_MS),
    p.limit ?? LISTEN_CLAIM_BATCH,
  ]);
  const box = rows[0]?.ciphertext;
  if (!box) return [];
  const secret = decryptSecret(deps.keys.secretEncryptionKey, box);
  const timestampSeconds = Math.floor(now.getTime() / 1000);
  return rows.map((r) => ({
    delivery_id: r.id,
    event_id: r.event_id,
    event_type: r.event_type,
    headers: deliveryHeaders({
      secret,
      body: r.body,
      timestampSeconds,
      eventId: r.event_id,
      eventType: r.event_type,
      environment: r.environment,
    }),
    body: r.body,
  }));
}

export interface ListenAck {
  delivery_id: string;
  /** the local receiver's reply status; null when it did not answer */
  status: number | null;
  duration_ms: number;
}

/**
 * The CLI received (and forwarded) these deliveries: each is marked delivered with one attempt row
 * (the local reply status as its response status), only while the acknowledging stream still holds
 * its lease — an ack arriving after the delivery was handed to another stream changes nothing.
 * Call events other than deletions record the call's reach, as a 2xx of the worker does.
 */
export async function ackListenDeliveries(
  deps: Pick<Deps, 'db' | 'clock'>,
  p: { scope: TenantScope; subscriptionId: string; streamId: string; acks: readonly ListenAck[] },
): Promise<number> {
  const ids = p.acks.map((a) => a.delivery_id);
  const { rows } = await deps.db.query<{
    id: string;
    attempts: number;
    event_type: string;
    call_id: string | null;
    secret_id: string | null;
  }>(
    `SELECT d.id, d.attempts, d.event_type, e.call_id,
            (SELECT k.id FROM webhook_secrets k WHERE k.subscription_id = d.subscription_id AND k.status = 'active'
              ORDER BY k.activated_at DESC NULLS LAST LIMIT 1) AS secret_id
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = ANY ($1::uuid[]) AND d.subscription_id = $2 AND ${inScope('s', 3, 5)}
        AND s.kind = 'cli' AND s.deleted_at IS NULL AND d.status = 'pending' AND d.lease_owner = $4`,
    [ids, p.subscriptionId, p.scope.organizationId, leaseOwnerOf(p.streamId), p.scope.environment],
  );
  if (rows.length === 0) return 0;
  const now = deps.clock.now();
  const byId = new Map(p.acks.map((a) => [a.delivery_id, a]));
  return completeDeliveries(deps.db, {
    owner: leaseOwnerOf(p.streamId),
    now,
    items: rows.map((r) => {
      const ack = byId.get(r.id) as ListenAck;
      return {
        deliveryId: r.id,
        subscriptionId: p.subscriptionId,
        organizationId: p.scope.organizationId,
        attemptNumber: r.attempts + 1,
        startedAt: now,
        durationMs: ack.duration_ms,
        status: ack.status as number,
        snippet: '',
        secretId: r.secret_id as string,
        signatureTimestamp: Math.floor(now.getTime() / 1000),
        reachCallId: r.call_id && carriesCallContent(r.event_type) ? r.call_id : null,
      };
    }),
  });
}

/** Ends a session now (the CLI quit): deleted like a console subscription. False when not found. */
export async function endListenSession(
  deps: Pick<Deps, 'db' | 'clock'>,
  scope: TenantScope,
  id: string,
): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const del = await tx.query(
      `UPDATE webhook_subscriptions SET deleted_at = $4, updated_at = $4
        WHERE id = $1 AND ${inScope(null, 2, 3)} AND kind = 'cli' AND deleted_at IS NULL RETURNING id`,
      [id, ...scopeParams(scope), now],
    );
    if (del.rowCount === 0) return false;
    await retireSubscription(tx, id, now);
    return true;
  });
}

/** Deletes every session not seen for LISTEN_GRACE_MS (their streams dropped and did not come back). */
export async function expireListenSessions(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const now = deps.clock.now();
  const { rows } = await deps.db.query<{ id: string }>(
    `SELECT id FROM webhook_subscriptions
      WHERE kind = 'cli' AND deleted_at IS NULL AND listen_seen_at < $1 ORDER BY id`,
    [new Date(now.getTime() - LISTEN_GRACE_MS)],
  );
  let n = 0;
  for (const { id } of rows) {
    const gone = await deps.db.transaction(async (tx) => {
      const del = await tx.query(
        `UPDATE webhook_subscriptions SET deleted_at = $2, updated_at = $2
          WHERE id = $1 AND kind = 'cli' AND deleted_at IS NULL AND listen_seen_at < $3 RETURNING id`,
        [id, now, new Date(now.getTime() - LISTEN_GRACE_MS)],
      );
      if (del.rowCount === 0) return false;
      await retireSubscription(tx, id, now);
      return true;
    });
    if (gone) n++;
  }
  return n;
}

/**
 * `callcap trigger <event_type>` (docs/cli.md "trigger"): webhook.test sends a fresh test event (the
 * console's Test action) to every connected listen session of the organization; any other type
 * sends the organization's most recent event of that type again, with its own event_id (a resend:
 * 404 when there is none yet). Sessions are reached whatever their --events filter.
 */
export async function triggerListenEvent(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  p: { scope: TenantScope; eventType: string },
): Promise<{ event_id: string; event_type: string; sessions: number }> {
  if (p.eventType !== TEST_EVENT_TYPE && !SELECTABLE_EVENT_TYPES.includes(p.eventType)) {
    throw badRequest(
      `Unknown event type "${p.eventType}"; known types: ${[TEST_EVENT_TYPE, ...SELECTABLE_EVENT_TYPES].join(', ')}.`,
      'event_type',
    );
  }
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const { rows: sessions } = await tx.query<{ id: string }>(
      `SELECT id FROM webhook_subscriptions
        WHERE ${inScope(null, 1, 2)} AND kind = 'cli' AND deleted_at IS NULL AND listen_seen_at >= $3
        ORDER BY id FOR SHARE`,
      [...scopeParams(p.scope), new Date(now.getTime() - LISTEN_GRACE_MS)],
    );
    if (sessions.length === 0) throw noListenSession();
    if (p.eventType === TEST_EVENT_TYPE) {
      let eventId = '';
      for (const s of sessions) {
        const q = await enqueueTestEvent(tx, {
          scope: p.scope,
          subscriptionId: s.id,
          secretId: null,
          now,
          publicBaseUrl: deps.config.publicBaseUrl,
        });
        eventId ||= q.event_id;
      }
      return { event_id: eventId, event_type: p.eventType, sessions: sessions.length };
    }
    const { rows: events } = await tx.query<{ id: string }>(
      `SELECT id FROM events WHERE ${inScope(null, 1, 2)} AND event_type = $3
        ORDER BY created_at DESC, id DESC LIMIT 1`,
      [...scopeParams(p.scope), p.eventType],
    );
    const event = events[0];
    if (!event) {
      throw notFound(
        `Your organization has no ${p.eventType} event yet to send again; ingest a call first, or trigger ${TEST_EVENT_TYPE}.`,
      );
    }
    await tx.query(
      `INSERT INTO webhook_deliveries (id, organization_id, subscription_id, event_id, event_type, status,
         next_attempt_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, s.id, $3, $4, 'pending', $5, $5, $5 FROM unnest($2::uuid[]) AS s(id)
       ON CONFLICT (subscription_id, event_id) DO UPDATE
         SET status = 'pending', attempts = 0, reason = NULL, last_error = NULL, lease_owner = NULL,
             lease_expires_at = NULL, delivered_at = NULL, next_attempt_at = $5, updated_at = $5`,
      [p.scope.organizationId, sessions.map((s) => s.id), event.id, p.eventType, now],
    );
    await wakeWorkers(tx);
    return { event_id: event.id, event_type: p.eventType, sessions: sessions.length };
  });
}
