import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Scope } from '../accounts/api-key-format.ts';
import type { Deps } from '../deps.ts';

/** The API key a request authenticated with (set by authenticate()). */
export interface ApiPrincipal {
  apiKeyId: string;
  userId: string;
  organizationId: string;
  scopes: string[];
  rateLimitPerHour: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: ApiPrincipal;
  }
}

/**
 * preHandler for every key-authenticated /api/v1 route. Order of checks (docs/decisions.md):
 * IP throttle on failed authentication (429) → Bearer key (401) → rate-limit counting and 429 →
 * organization entitlement (402). Sets req.principal and the X-RateLimit-* headers.
 * (Maintenance 503 runs earlier, as an onRequest hook for all of /api/v1.)
 * TODO(REST API helper): implement.
 */
export function authenticate(_deps: Deps): preHandlerAsyncHookHandler {
  return async () => {
    throw new Error('not implemented');
  };
}

/** Returns the principal or throws 403 FORBIDDEN naming the missing scope. */
export function requireScope(req: FastifyRequest, _scope: Scope): ApiPrincipal {
  if (!req.principal) throw new Error('authenticate() must run first');
  return req.principal;
}
