/**
 * Fixtures of the delivery-engine tests: a database + fake clock + Deps without the HTTP apps, real
 * loopback receivers (node:http on port 0), subscriptions with encrypted secrets, and events emitted
 * through the outbox exactly as the product does.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type { Db, Queryable } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { newId } from '../../src/ids.ts';
import { deriveKeys } from '../../src/keys.ts';
import { createLogger } from '../../src/log.ts';
import { fileBlobStore } from '../../src/recordings/store.ts';
import { emitEvent } from '../../src/webhooks/outbox.ts';
import { encryptSecret } from '../../src/webhooks/secret-box.ts';
import { createDeliveryWorker, type DeliveryWorkerOptions } from '../../src/webhooks/worker.ts';
import { createTestDb } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';

export const T0 = '2026-06-15T10:00:00.000Z';

export interface Env {
  db: Db;
  clock: FakeClock;
  deps: Deps;
  close(): Promise<void>;
}

export async function createEnv(env: Record<string, string> = {}): Promise<Env> {
  const db = await createTestDb();
  const clock = new FakeClock(T0);
  const config = loadConfig({
    DATA_DIR: '/nonexistent-callcap-test',
    PUBLIC_BASE_URL: 'https://calls.example.test',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const deps: Deps = {
    db,
    clock,
    config,
    keys: deriveKeys(Buffer.alloc(32, 9)),
    store: fileBlobStore('/nonexistent-callcap-test/recordings'),
    log: createLogger('silent'),
    adminToken: 'test-admin-token-0123456789',
  };
  return { db, clock, deps, close: () => db.close() };
}

/** A worker with deterministic jitter (random = 0.5) unless told otherwise. */
export function worker(deps: Deps, opts: DeliveryWorkerOptions = {}) {
  return createDeliveryWorker(deps, { random: () => 0.5, timeoutMs: 2_000, ...opts });
}

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export interface Receiver {
  url: string;
  requests: Received[];
  handle(h: Handler): void;
  close(): Promise<void>;
  server: Server;
}

/** A real receiver on 127.0.0.1: records every request, answers with the current handler (200 by default). */
export async function startReceiver(initial: Handler = (_q, res) => res.end('ok')): Promise<Receiver> {
  let handler = initial;
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    server,
    handle(h) {
      handler = h;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const status =
  (code: number, body = ''): Handler =>
  (_q, res) => {
    res.statusCode = code;
    res.end(body);
  };

export async function insertSubscription(
  deps: Deps,
  s: { orgId: string; url: string; state?: 'inactive' | 'active' | 'paused'; eventTypes?: string[] },
): Promise<{ subscriptionId: string; secretId: string; secret: string }> {
  const subscriptionId = newId();
  const secretId = newId();
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  const at = new Date('2026-06-01T00:00:00.000Z');
  await deps.db.query(
    `INSERT INTO webhook_subscriptions (id, organization_id, url, event_types, state, last_verified_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $6)`,
    [subscriptionId, s.orgId, s.url, s.eventTypes ?? [], s.state ?? 'active', at],
  );
  await deps.db.query(
    `INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at, activated_at)
     VALUES ($1, $2, $3, $4, 'active', 'initial', $5, $5)`,
    [secretId, subscriptionId, s.orgId, encryptSecret(deps.keys.secretEncryptionKey, secret), at],
  );
  return { subscriptionId, secretId, secret };
}

export async function newOrg(db: Queryable): Promise<{ orgId: string; ownerId: string; ownerEmail: string }> {
  const { orgId, ownerId } = await insertOrg(db);
  return { orgId, ownerId, ownerEmail: `owner-${orgId}@example.test` };
}

/** Emits an event through the transactional outbox; returns its id. */
export async function emit(
  deps: Deps,
  e: { orgId: string; eventType?: string; callId?: string | null; data?: Record<string, unknown>; at?: Date },
): Promise<string> {
  const callId = e.callId === undefined ? newId() : e.callId;
  const eventType = e.eventType ?? 'call.completed';
  const out = await deps.db.transaction((tx) =>
    emitEvent(tx, {
      organizationId: e.orgId,
      eventType,
      resourceId: callId ?? newId(),
      callId,
      factKey: newId(),
      data: e.data ?? { call_id: callId, note: 'héllo — “quoted” ✓', duration: 42 },
      createdAt: e.at ?? deps.clock.now(),
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

export const MIN = 60_000;
export const HOUR = 60 * MIN;
