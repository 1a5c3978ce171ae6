/**
 * Webhook fixtures: a database + fake clock + Deps without the HTTP apps (the delivery-engine tests),
 * subscriptions with encrypted secrets, events emitted through the outbox exactly as the product
 * does, deliveries inserted directly, and readers of the rows the engine writes.
 */
import { randomBytes } from 'node:crypto';
import type { FakeClock } from '../../src/clock.ts';
import type { Db, Queryable } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { newId } from '../../src/ids.ts';
import { encryptSecret } from '../../src/webhooks/delivery/secret-box.ts';
import { createDeliveryWorker, type DeliveryWorkerOptions } from '../../src/webhooks/delivery/worker.ts';
import { emitEvent, serializeEvent } from '../../src/webhooks/outbox/outbox.ts';
import { createTestDb } from './db.ts';
import { testDeps } from './deps.ts';
import { sampleEventData } from './event-samples.ts';

export const MIN = 60_000;
export const HOUR = 60 * MIN;

export interface Env {
  db: Db;
  clock: FakeClock;
  deps: Deps;
  close(): Promise<void>;
}

/** One per test file: a migrated database and Deps (fake clock at T0, `env` over the test configuration). */
export async function createEnv(env: Record<string, string> = {}): Promise<Env> {
  const db = await createTestDb();
  const deps = testDeps(db, '/nonexistent-callcap-test', env);
  return { db, clock: deps.clock, deps, close: () => db.close() };
}

/** A worker with deterministic jitter (random = 0.5) unless told otherwise. Stop it in `finally` / `after`. */
export function worker(deps: Deps, opts: DeliveryWorkerOptions = {}) {
  return createDeliveryWorker(deps, { random: () => 0.5, timeoutMs: 2_000, ...opts });
}

/** A worker that makes every attempt due now and is stopped again, whatever happens; answers the attempt count. */
export async function drain(deps: Deps, opts: DeliveryWorkerOptions = {}): Promise<number> {
  const w = worker(deps, opts);
  try {
    return await w.drain();
  } finally {
    await w.stop();
  }
}

/**
 * A subscription row inserted directly (no handshake), verified at `at`, with an active initial
 * secret encrypted as the product stores it.
 */
export async function insertSubscription(
  deps: Pick<Deps, 'db' | 'keys'>,
  s: {
    orgId: string;
    url?: string;
    state?: 'inactive' | 'active' | 'paused';
    pausedReason?: string | null;
    eventTypes?: string[];
    at?: Date;
    environment?: 'live' | 'test';
  },
): Promise<{ subscriptionId: string; secretId: string; secret: string }> {
  const subscriptionId = newId();
  const secretId = newId();
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  const at = s.at ?? new Date('2026-06-01T00:00:00.000Z');
  const state = s.state ?? 'active';
  await deps.db.query(
    `INSERT INTO webhook_subscriptions (id, organization_id, url, event_types, state, paused_reason, paused_at,
       last_verified_at, created_at, updated_at, environment)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $8, $9)`,
    [
      subscriptionId,
      s.orgId,
      s.url ?? 'https://hooks.example.test/in',
      s.eventTypes ?? [],
      state,
      s.pausedReason ?? null,
      state === 'paused' ? at : null,
      at,
      s.environment ?? 'live',
    ],
  );
  await deps.db.query(
    `INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at, activated_at)
     VALUES ($1, $2, $3, $4, 'active', 'initial', $5, $5)`,
    [secretId, subscriptionId, s.orgId, encryptSecret(deps.keys.secretEncryptionKey, secret), at],
  );
  return { subscriptionId, secretId, secret };
}

/**
 * Emits an event through the transactional outbox; returns its id. Without `data`, a valid payload of
 * the event type built by the product's builders (sampleEventData); given `data` must be valid too.
 */
export async function emit(
  deps: Deps,
  e: { orgId: string; eventType?: string; callId?: string | null; data?: Record<string, unknown>; at?: Date },
): Promise<string> {
  const callId = e.callId === undefined ? newId() : e.callId;
  const eventType = e.eventType ?? 'call.completed';
  const resourceId = callId ?? newId();
  const createdAt = e.at ?? deps.clock.now();
  const out = await deps.db.transaction((tx) =>
    emitEvent(tx, {
      organizationId: e.orgId,
      environment: 'live',
      eventType,
      resourceId,
      callId,
      factKey: newId(),
      data: e.data ?? sampleEventData(eventType, resourceId, createdAt),
      createdAt,
    }),
  );
  return out.eventId;
}

export interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
  next_attempt_at: Date;
  reason: string | null;
  last_response_status: number | null;
  held: boolean;
  lease_owner: string | null;
}

export async function deliveryFor(
  db: Queryable,
  subscriptionId: string,
  eventId: string,
): Promise<DeliveryRow> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT id, status, attempts, next_attempt_at, reason, last_response_status, held, lease_owner
       FROM webhook_deliveries WHERE subscription_id = $1 AND event_id = $2`,
    [subscriptionId, eventId],
  );
  if (!rows[0]) throw new Error(`no delivery of ${eventId} to ${subscriptionId}`);
  return { ...rows[0], next_attempt_at: new Date(rows[0].next_attempt_at) };
}

export async function subscriptionRow(db: Queryable, id: string) {
  const { rows } = await db.query<{
    state: string;
    paused_reason: string | null;
    consecutive_transient_failures: number;
    consecutive_gone: number;
  }>(
    'SELECT state, paused_reason, consecutive_transient_failures, consecutive_gone FROM webhook_subscriptions WHERE id = $1',
    [id],
  );
  return rows[0];
}

export async function attemptsOf(db: Queryable, deliveryId: string) {
  const { rows } = await db.query<{
    attempt_number: number;
    response_status: number | null;
    error_class: string | null;
    response_snippet: string | null;
    secret_id: string | null;
    signature_timestamp: number | null;
    duration_ms: number;
    started_at: Date;
  }>(
    `SELECT attempt_number, response_status, error_class, response_snippet, secret_id, signature_timestamp,
            duration_ms, started_at
       FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt_number`,
    [deliveryId],
  );
  return rows;
}

/** An event and one delivery of it, inserted directly (the delivery log, resend). */
export async function insertDelivery(
  db: Queryable,
  d: {
    orgId: string;
    subscriptionId: string;
    status?: 'pending' | 'delivered' | 'dead_lettered' | 'skipped';
    createdAt: Date;
    reason?: string | null;
    attempts?: number;
    eventType?: string;
  },
): Promise<{ deliveryId: string; eventId: string }> {
  const eventId = newId();
  const deliveryId = newId();
  const eventType = d.eventType ?? 'call.completed';
  const resourceId = newId();
  // A whole, valid envelope: resends deliver it, and every delivery is checked against the catalogue.
  const body = serializeEvent(
    {
      organizationId: d.orgId,
      environment: 'live',
      eventType,
      resourceId,
      callId: resourceId,
      factKey: eventId,
      data: sampleEventData(eventType, resourceId, d.createdAt),
      createdAt: d.createdAt,
    },
    eventId,
  );
  await db.query(
    `INSERT INTO events (id, organization_id, event_type, resource_id, call_id, body, created_at)
     VALUES ($1, $2, $3, $4, $4, $5, $6)`,
    [eventId, d.orgId, eventType, resourceId, body, d.createdAt],
  );
  await db.query(
    `INSERT INTO webhook_deliveries (id, organization_id, subscription_id, event_id, event_type, status, attempts,
       next_attempt_at, reason, last_response_status, created_at, updated_at, delivered_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $8, $8, $11)`,
    [
      deliveryId,
      d.orgId,
      d.subscriptionId,
      eventId,
      eventType,
      d.status ?? 'pending',
      d.attempts ?? 0,
      d.createdAt,
      d.reason ?? null,
      d.status === 'dead_lettered' ? 500 : d.status === 'delivered' ? 200 : null,
      d.status === 'delivered' ? d.createdAt : null,
    ],
  );
  return { deliveryId, eventId };
}
