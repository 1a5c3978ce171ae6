import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { type Capability, can, refusal } from '../../../accounts/roles.ts';
import {
  type ConsoleSession,
  csrfMatches,
  loadSessionUser,
  SESSION_COOKIE,
  type SessionUser,
} from '../../../accounts/sessions.ts';
import type { Deps } from '../../../deps.ts';
import { forbidden, unauthorized } from '../../../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession?: ConsoleSession;
    consoleUser?: SessionUser;
  }
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * onRequest hook of every route of the console's JSON API (/app/api) except login: a live session cookie (else 401), and
 * on state-changing methods the session's CSRF token in x-csrf-token (else 403). The Authorization
 * header is never read here: an API key authenticates nothing in the console, so a request with
 * only a Bearer key answers 401 like any request without a session.
 */
export function appApiAuth(deps: Deps): onRequestAsyncHookHandler {
  return async (req) => {
    const cookie = req.cookies?.[SESSION_COOKIE];
    const user = cookie ? await loadSessionUser(deps.db, cookie, deps.clock.now()) : null;
    const session = user?.session;
    if (!user || !session) {
      const bearer = /^Bearer\s/i.test(req.headers.authorization ?? '');
      throw unauthorized(
        bearer
          ? 'API keys are not accepted by the console API; log in with POST /app/api/login and send the session cookie.'
          : 'No valid console session; log in with POST /app/api/login and send the cc_session cookie.',
      );
    }
    if (STATE_CHANGING.has(req.method) && !csrfMatches(session, req.headers['x-csrf-token'])) {
      throw forbidden(
        'Missing or wrong CSRF token: send header x-csrf-token with the csrf_token from GET /app/api/session.',
      );
    }
    req.consoleSession = session;
    req.consoleUser = user;
  };
}

/**
 * onRequest hook of a group of console API routes that need a capability (roles.ts): 403 FORBIDDEN
 * in the spec's error shape for a signed-in user whose role lacks it (an agent asking for the API
 * keys), whatever the web app shows or hides. Runs after appApiAuth.
 */
export function requireCapability(capability: Capability): onRequestAsyncHookHandler {
  return async (req) => {
    const user = req.consoleUser;
    if (!user) throw new Error('appApiAuth() must run first');
    if (!can(user, capability)) throw forbidden(refusal(user.role, capability));
  };
}

export function requireSession(req: FastifyRequest): ConsoleSession {
  if (!req.consoleSession) throw new Error('appApiAuth() must run first');
  return req.consoleSession;
}
