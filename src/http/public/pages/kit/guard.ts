import type {
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import {
  type ConsoleSession,
  csrfMatches,
  liveSession,
  SESSION_COOKIE,
  type SessionRow,
} from '../../../../accounts/sessions.ts';
import type { UserRole } from '../../../../accounts/users.ts';
import type { Deps } from '../../../../deps.ts';
import { forbidden } from '../../../../errors.ts';
import { sha256Hex } from '../../../../keys.ts';
import { field, formOf } from './form.ts';
import { loginUrl } from './next-path.ts';

/** Who is signed in on a page: the console session, plus what the layout shows and the role rules need. */
export interface PageUser {
  session: ConsoleSession;
  email: string;
  role: UserRole;
  organizationName: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    pageUser?: PageUser;
  }
}

/** The name of the hidden CSRF field every page form carries. */
export const CSRF_FIELD = '_csrf';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A read of a page's own that rides on the session query (the calls list does): SQL that may use
 * the session's organization as `s.organization_id` and parameters from $2; its rows come back as
 * one JSON array in req.pageRead (null without a session row). A route declares it in its config
 * (PAGE_READ); the page still shows it only to a live session's user.
 */
export interface PageRead {
  /** distinguishes the combined prepared statement (one per SQL text) */
  name: string;
  sql: string;
  params: unknown[];
}

/** Route config key of a page's read: `config: { [PAGE_READ]: (req) => PageRead | null }`. */
export const PAGE_READ = Symbol('pageRead');
type PageReadOf = (req: FastifyRequest) => PageRead | null;

declare module 'fastify' {
  interface FastifyRequest {
    /** what the route's pageRead returned (JSON rows, or null); undefined when it had none */
    pageRead?: unknown;
  }
}

/**
 * The session of a request's cookie with its user, or null (no cookie, expired, ended, unknown user).
 * One query reads the session, its user and organization (every signed-in page runs it first), and
 * the page's own read when it has one.
 */
export async function loadPageUser(
  deps: Deps,
  req: FastifyRequest,
  read?: PageRead | null,
): Promise<PageUser | null> {
  const cookie = req.cookies?.[SESSION_COOKIE];
  if (!cookie) return null;
  const id = sha256Hex(cookie);
  const { rows } = await deps.db.query<
    SessionRow & { email: string | null; role: UserRole | null; org_name: string | null; page_read?: unknown }
  >(
    `SELECT ${read ? `(SELECT json_agg(p) FROM (${read.sql}) p) AS page_read,` : ''}
            s.user_id, s.organization_id, s.csrf_token, s.created_at, s.expires_at,
            u.email, u.role, o.name AS org_name
       FROM sessions s
       LEFT JOIN users u ON u.id = s.user_id AND u.organization_id = s.organization_id
       LEFT JOIN organizations o ON o.id = u.organization_id
      WHERE s.id = $1`,
    read ? [id, ...read.params] : [id],
    { name: read ? `pages_session_user_v2_${read.name}` : 'pages_session_user_v2' },
  );
  const row = rows[0];
  const session = await liveSession(deps.db, id, row, deps.clock.now());
  if (!session || row.email === null || row.role === null || row.org_name === null) return null;
  if (read) req.pageRead = row.page_read ?? null;
  return { session, email: row.email, role: row.role, organizationName: row.org_name };
}

/**
 * onRequest hook of every signed-in page: without a live session a GET goes to the sign-in page,
 * which brings the visitor back to the address asked for (same-origin paths only, next-path.ts);
 * a form post without a session goes to the sign-in page alone (its target is no page to return to).
 */
export function pageGuard(deps: Deps): onRequestAsyncHookHandler {
  return async (req, reply) => {
    const config = req.routeOptions.config as unknown as Record<symbol, PageReadOf | undefined> | undefined;
    const read = config?.[PAGE_READ]?.(req) ?? null;
    let user: PageUser | null;
    try {
      user = await loadPageUser(deps, req, read);
    } catch (err) {
      if (!read) throw err;
      // The combined query failed: load the session alone; the page runs its read itself (and
      // answers that read's error as it would without the combined query).
      user = await loadPageUser(deps, req);
    }
    if (user) {
      req.pageUser = user;
      return;
    }
    const target = req.method === 'GET' || req.method === 'HEAD' ? loginUrl(req.url) : '/app/login';
    await reply.code(303).header('location', target).send();
  };
}

/**
 * preHandler of every signed-in page (after the form body is parsed): a state-changing request
 * must carry the session's CSRF token in the hidden field _csrf, else 403 and nothing changes.
 * SameSite=Lax already keeps the cookie off cross-site posts; the token covers older browsers and
 * same-site attackers (a sibling subdomain).
 */
export const csrfCheck: preHandlerAsyncHookHandler = async (req) => {
  if (!STATE_CHANGING.has(req.method)) return;
  const user = requireUser(req);
  const token = field(formOf(req.body), CSRF_FIELD);
  if (!csrfMatches(user.session, token)) {
    throw forbidden(
      'This form could not be accepted: its security token is missing or out of date. Go back, reload the page and try again.',
    );
  }
};

/** The signed-in user of a guarded page. */
export function requireUser(req: FastifyRequest): PageUser {
  if (!req.pageUser) throw new Error('pageGuard() must run first');
  return req.pageUser;
}

/** Owner-only actions (docs/decisions.md "What an owner can do that a member can't"): 403 for a member. */
export function requireOwner(req: FastifyRequest, what: string): PageUser {
  const user = requireUser(req);
  if (user.role !== 'owner') throw forbidden(`Only the organization's owner can ${what}.`);
  return user;
}

/** After a successful form post: 303 See Other to the page that shows the result (post/redirect/get). */
export const seeOther = (reply: FastifyReply, location: string) =>
  reply.code(303).header('location', location).send();
