import type {
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import { type Capability, can, refusal } from '../../../../accounts/roles.ts';
import {
  csrfMatches,
  loadSessionUser,
  SESSION_COOKIE,
  type SessionUser,
  sessionScope,
} from '../../../../accounts/sessions.ts';
import type { Deps } from '../../../../deps.ts';
import type { TenantScope } from '../../../../domain/tenant.ts';
import { forbidden } from '../../../../errors.ts';
import { field, formOf } from './form.ts';
import { loginUrl } from './next-path.ts';

/** Who is signed in on a page: the console session, plus what the layout shows and the role rules need. */
export type PageUser = SessionUser;

declare module 'fastify' {
  interface FastifyRequest {
    pageUser?: PageUser;
  }
}

/** The name of the hidden CSRF field every page form carries. */
export const CSRF_FIELD = '_csrf';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The signed-in user of a request's session cookie, or null (no cookie, expired, ended, unknown user). */
export async function loadPageUser(deps: Deps, req: FastifyRequest): Promise<PageUser | null> {
  const cookie = req.cookies?.[SESSION_COOKIE];
  if (!cookie) return null;
  return loadSessionUser(deps.db, cookie, deps.clock.now());
}

/**
 * onRequest hook of every signed-in page: without a live session a GET goes to the sign-in page,
 * which brings the visitor back to the address asked for (same-origin paths only, next-path.ts);
 * a form post without a session goes to the sign-in page alone (its target is no page to return to).
 */
export function pageGuard(deps: Deps): onRequestAsyncHookHandler {
  return async (req, reply) => {
    const user = await loadPageUser(deps, req);
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

/**
 * The signed-in user of a page that needs a capability (accounts/roles.ts `can`): a 403 page for a
 * role without it — the server refuses, whatever the page shows or hides.
 */
export function requireCan(req: FastifyRequest, capability: Capability): PageUser {
  const user = requireUser(req);
  if (!can(user, capability)) throw forbidden(refusal(user.role, capability));
  return user;
}

/** Owner-only actions of the call pages (erasing a call, roles.ts `erase_calls`): a 403 page for anyone else. */
export function requireOwner(req: FastifyRequest, what: string): PageUser {
  const user = requireUser(req);
  if (!can(user, 'erase_calls')) throw forbidden(`Only the organization's owner can ${what}.`);
  return user;
}

/** After a successful form post: 303 See Other to the page that shows the result (post/redirect/get). */
export const seeOther = (reply: FastifyReply, location: string) =>
  reply.code(303).header('location', location).send();

/**
 * The tenant scope every area function is called with on a page: the signed-in user's organization
 * in the environment the session is switched to (the test-mode switch, settings/environment.ts).
 */
export const scopeOf = (user: PageUser): TenantScope => sessionScope(user.session);
