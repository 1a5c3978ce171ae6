import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashPassword } from '../../src/accounts/passwords.ts';
import type { Queryable } from '../../src/db/types.ts';
import { newId } from '../../src/ids.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import type { Harness } from '../helpers/harness.ts';
import type { Json } from '../helpers/json.ts';

export const PASSWORD = 'correct horse battery staple';

/** An organization whose owner can log in with PASSWORD; returns the owner's e-mail too. */
export async function orgWithLogin(db: Queryable, passwordHash: string) {
  const { orgId, ownerId } = await insertOrg(db);
  const email = `owner-${orgId}@example.test`;
  await db.query('UPDATE users SET password_hash = $1 WHERE id = $2', [passwordHash, ownerId]);
  return { orgId, ownerId, email };
}

export const passwordHash = () => hashPassword(PASSWORD);

export interface ConsoleResponse {
  status: number;
  json: Json;
  headers: Record<string, unknown>;
}

export interface ConsoleClient {
  cookie: string;
  csrf: string;
  userId: string;
  orgId: string;
  get(url: string): Promise<ConsoleResponse>;
  post(url: string, body?: unknown): Promise<ConsoleResponse>;
  del(url: string): Promise<ConsoleResponse>;
}

/** Logs in through POST /app/api/login and returns a client that sends the cookie and CSRF token. */
export async function login(h: Harness, email: string, password = PASSWORD): Promise<ConsoleClient> {
  const res = await h.app.inject({ method: 'POST', url: '/app/api/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0] as string;
  const body = res.json();
  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => {
    const r = await h.app.inject({
      method,
      url,
      headers: { cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': body.csrf_token }) },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
    return {
      status: r.statusCode,
      json: r.body ? r.json() : null,
      headers: r.headers as Record<string, unknown>,
    };
  };
  return {
    cookie,
    csrf: body.csrf_token,
    userId: body.user_id,
    orgId: body.organization_id,
    get: (url) => call('GET', url),
    post: (url, payload) => call('POST', url, payload),
    del: (url) => call('DELETE', url),
  };
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** replaces how the receiver answers */
  respond(fn: (req: ReceivedRequest, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

/** A real HTTP receiver on loopback (port 0). Default answer: 200 with an empty body. */
export async function startReceiver(
  fn: (req: ReceivedRequest, res: ServerResponse) => void = (_q, res) => res.writeHead(200).end(),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let handler = fn;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      requests.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    respond(f) {
      handler = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Starts receivers for one test file and closes them all in its `after`. */
export function receiverPool() {
  const started: Receiver[] = [];
  return {
    async start(fn?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
      const r = await startReceiver(fn);
      started.push(r);
      return r;
    },
    async closeAll(): Promise<void> {
      for (const r of started.splice(0)) await r.close();
    },
  };
}

/** Answers a strict handshake correctly (echoes the challenge), everything else 200. */
export const echoChallenge = (req: ReceivedRequest, res: ServerResponse) => {
  const parsed = JSON.parse(req.body || '{}');
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ challenge: parsed.challenge }));
};

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
  await db.query(
    `INSERT INTO events (id, organization_id, event_type, resource_id, call_id, body, created_at)
     VALUES ($1, $2, $3, $4, $4, $5, $6)`,
    [eventId, d.orgId, eventType, newId(), JSON.stringify({ event_id: eventId }), d.createdAt],
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

/** A subscription row inserted directly (no handshake), in the given state. */
export async function insertSubscription(
  db: Queryable,
  s: {
    orgId: string;
    url?: string;
    state?: 'inactive' | 'active' | 'paused';
    pausedReason?: string | null;
    at: Date;
  },
): Promise<string> {
  const id = newId();
  await db.query(
    `INSERT INTO webhook_subscriptions (id, organization_id, url, state, paused_reason, paused_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [
      id,
      s.orgId,
      s.url ?? 'https://hooks.example.test/in',
      s.state ?? 'active',
      s.pausedReason ?? null,
      s.state === 'paused' ? s.at : null,
      s.at,
    ],
  );
  return id;
}
