import { randomBytes, scryptSync } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
/** The console (/app/api): owners who can log in, and a client that carries the session cookie and CSRF token. */
import { hashPassword } from '../../src/accounts/passwords.ts';
import type { Queryable } from '../../src/db/types.ts';
import { insertOrg } from './fixtures.ts';
import type { Harness } from './harness.ts';
import type { Json } from './json.ts';

export const PASSWORD = 'correct horse battery staple';

/** An organization whose owner can log in with PASSWORD; returns the owner's e-mail too. */
export async function orgWithLogin(db: Queryable, passwordHash: string) {
  const { orgId, ownerId, ownerEmail: email } = await insertOrg(db);
  await db.query('UPDATE users SET password_hash = $1 WHERE id = $2', [passwordHash, ownerId]);
  return { orgId, ownerId, email };
}

export const passwordHash = () => hashPassword(PASSWORD);

/**
 * A valid stored hash of `password` at a low scrypt cost (N=2^10, the format verifyPassword reads):
 * for tests that run dozens of password checks, where the production cost would take seconds each
 * on a loaded machine. What they test is the throttle in front of the check, not its cost.
 */
export function cheapPasswordHash(password = PASSWORD): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password.normalize('NFC'), salt, 32, { N: 1024, r: 8, p: 1 });
  return `scrypt$1024$8$1$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

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

/** A web app page request with the client's session; a post carries the form and the CSRF field. */
export function pageRequest(
  app: FastifyInstance,
  c: ConsoleClient,
  url: string,
  form?: Record<string, string>,
) {
  return app.inject({
    method: form ? 'POST' : 'GET',
    url,
    headers: {
      cookie: c.cookie,
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { payload: new URLSearchParams({ _csrf: c.csrf, ...form }).toString() } : {}),
  });
}
