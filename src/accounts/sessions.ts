import { randomBytes, timingSafeEqual } from 'node:crypto';
import { HOUR, MINUTE } from '../clock.ts';
import type { Queryable } from '../db/types.ts';
import { type Environment, type TenantScope, tenantScope } from '../domain/tenant.ts';
import { sha256Hex } from '../keys.ts';
import type { UserRole } from './users.ts';

/**
 * Server-side console sessions (DESIGN.md "Security defaults"). The cookie carries 32 random bytes
 * (base64url); the sessions table keys the row by SHA-256 of that value, so a database leak gives
 * no usable cookie. A session ends after SESSION_IDLE_MS without a request, and in any case
 * SESSION_ABSOLUTE_MS after login.
 */
export const SESSION_COOKIE = 'cc_session';
/** Idle time-out: two hours is a working morning without a click, short enough for shared desks. */
export const SESSION_IDLE_MS = 2 * HOUR;
/** Absolute lifetime: one working day; after it the user logs in again. */
export const SESSION_ABSOLUTE_MS = 12 * HOUR;
/** The idle deadline is pushed forward at most once a minute, so reads do not write on every request. */
const SLIDE_GRANULARITY_MS = MINUTE;

export interface ConsoleSession {
  sessionId: string;
  userId: string;
  organizationId: string;
  /** the data environment the session works in (the web app's test-mode switch); live at login */
  environment: Environment;
  csrfToken: string;
}

/** The tenant scope of a session: its organization and the environment it is switched to. */
export const sessionScope = (s: ConsoleSession): TenantScope => tenantScope(s.organizationId, s.environment);

/** The test-mode switch: the session works in `environment` from its next request on. */
export async function setSessionEnvironment(q: Queryable, sessionId: string, environment: Environment) {
  await q.query('UPDATE sessions SET environment = $2 WHERE id = $1', [sessionId, environment]);
}

const randomToken = () => randomBytes(32).toString('base64url');

export async function createSession(
  q: Queryable,
  s: { userId: string; organizationId: string; now: Date },
): Promise<{ cookieValue: string; csrfToken: string; expiresAt: Date }> {
  const cookieValue = randomToken();
  const csrfToken = randomToken();
  const expiresAt = new Date(s.now.getTime() + SESSION_IDLE_MS);
  // Housekeeping: the user's own expired sessions go when they log in again.
  await q.query('DELETE FROM sessions WHERE user_id = $1 AND expires_at <= $2', [s.userId, s.now]);
  await q.query(
    `INSERT INTO sessions (id, user_id, organization_id, csrf_token, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [sha256Hex(cookieValue), s.userId, s.organizationId, csrfToken, s.now, expiresAt],
  );
  return { cookieValue, csrfToken, expiresAt };
}

/** A session row as stored (the columns liveSession reads). */
export interface SessionRow {
  user_id: string;
  organization_id: string;
  environment: Environment;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
}

/** The live session for a cookie value, or null; slides the idle deadline (capped by the absolute one). */
export async function loadSession(
  q: Queryable,
  cookieValue: string,
  now: Date,
): Promise<ConsoleSession | null> {
  const id = sha256Hex(cookieValue);
  const { rows } = await q.query<SessionRow>(
    'SELECT user_id, organization_id, environment, csrf_token, created_at, expires_at FROM sessions WHERE id = $1',
    [id],
    { name: 'sessions_load_v2' },
  );
  return liveSession(q, id, rows[0], now);
}

/**
 * The session of a row read by id (sessionId: the SHA-256 of the cookie value) if it is live, else
 * null; slides the idle deadline (capped by the absolute one). For callers that read the session row
 * together with more (the web app's pages read its user in the same query).
 */
export async function liveSession(
  q: Queryable,
  id: string,
  row: SessionRow | undefined,
  now: Date,
): Promise<ConsoleSession | null> {
  if (!row || row.expires_at.getTime() <= now.getTime()) return null;
  const absolute = row.created_at.getTime() + SESSION_ABSOLUTE_MS;
  if (now.getTime() >= absolute) return null;
  const slid = Math.min(now.getTime() + SESSION_IDLE_MS, absolute);
  if (slid - row.expires_at.getTime() >= SLIDE_GRANULARITY_MS) {
    await q.query('UPDATE sessions SET expires_at = $2 WHERE id = $1', [id, new Date(slid)]);
  }
  return {
    sessionId: id,
    userId: row.user_id,
    organizationId: row.organization_id,
    environment: row.environment,
    csrfToken: row.csrf_token,
  };
}

/** A live session with its user and organization: who is signed in on a web page. */
export interface SessionUser {
  session: ConsoleSession;
  email: string;
  role: UserRole;
  organizationName: string;
  /** the user's display name (profile), null until set */
  name: string | null;
  /** how the pages spell times (IANA): the user's own zone, else the organization's */
  timeZone: string;
}

/**
 * The live session of a cookie value with its user and organization, in one statement (every
 * signed-in web page runs it first), or null: no such session, expired, or its user gone. Slides
 * the idle deadline like loadSession.
 */
export async function loadSessionUser(
  q: Queryable,
  cookieValue: string,
  now: Date,
): Promise<SessionUser | null> {
  const id = sha256Hex(cookieValue);
  const { rows } = await q.query<
    SessionRow & {
      email: string | null;
      role: UserRole | null;
      org_name: string | null;
      name: string | null;
      time_zone: string | null;
    }
  >(
    `SELECT s.user_id, s.organization_id, s.environment, s.csrf_token, s.created_at, s.expires_at,
            u.email, u.role, u.name, o.name AS org_name, coalesce(u.time_zone, o.time_zone) AS time_zone
       FROM sessions s
       LEFT JOIN users u ON u.id = s.user_id AND u.organization_id = s.organization_id AND u.removed_at IS NULL
       LEFT JOIN organizations o ON o.id = u.organization_id
      WHERE s.id = $1`,
    [id],
    { name: 'sessions_load_user_v2' },
  );
  const row = rows[0];
  const session = await liveSession(q, id, row, now);
  if (!session || !row || row.email === null || row.role === null || row.org_name === null) return null;
  return {
    session,
    email: row.email,
    role: row.role,
    organizationName: row.org_name,
    name: row.name,
    timeZone: row.time_zone ?? 'UTC',
  };
}

export async function endSession(q: Queryable, sessionId: string): Promise<void> {
  await q.query('DELETE FROM sessions WHERE id = $1', [sessionId]);
}

/** Constant-time comparison of the x-csrf-token header with the session's token. */
export function csrfMatches(session: ConsoleSession, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || header.length === 0) return false;
  const a = Buffer.from(sha256Hex(header), 'hex');
  const b = Buffer.from(sha256Hex(session.csrfToken), 'hex');
  return timingSafeEqual(a, b);
}

/**
 * Set-Cookie value. A browser-session cookie (no Max-Age): the server enforces expiry.
 * Secure whenever the public origin is https.
 */
export function sessionCookie(value: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${secure ? '; Secure' : ''}`;
}
