import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import {
  type AuthenticatedKey,
  authenticateAndCount,
  authStatement,
  type Piggyback,
} from '../../../accounts/api-key-auth.ts';
import { hashApiKey, type Scope } from '../../../accounts/api-key-format.ts';
import type { Deps } from '../../../deps.ts';
import { type Environment, type TenantScope, tenantScope } from '../../../domain/tenant.ts';
import { AppError } from '../../../errors.ts';
import { authThrottleHeaders, decideRate } from './rate-limit.ts';

/** The API key a request authenticated with (set by authenticate()). */
export interface ApiPrincipal {
  apiKeyId: string;
  userId: string;
  organizationId: string;
  scopes: string[];
  rateLimitPerHour: number;
  /** the key's data environment: a test key reads and writes test data only */
  environment: Environment;
}

/** The tenant scope of the request's key: what every area function of a /api/v1 route is given. */
export const keyScope = (p: ApiPrincipal): TenantScope => tenantScope(p.organizationId, p.environment);

declare module 'fastify' {
  interface FastifyRequest {
    principal?: ApiPrincipal;
    /** the row a route's piggyback read returned (see authenticate's options); null when none */
    piggyback?: unknown;
  }
}

export interface AuthOptions {
  /** a read of the route's own that rides on the authentication round trip (accounts/api-key-auth.ts) */
  piggyback?: Piggyback & { param: (req: FastifyRequest) => unknown };
}

const WHERE_KEYS = 'API keys are created in the web app on the integrations settings page.';
/** RFC 6750: a 401 names the scheme the client should use. */
const CHALLENGE = { 'www-authenticate': 'Bearer realm="api"' };

/**
 * The key of an `Authorization: Bearer <key>` header. Only that header authenticates: never a
 * cookie (session cookies belong to the web app) and never a query parameter (?api_key=, ?key=,
 * ?token= are ignored, so keys do not end up in logs and browser histories).
 */
export function bearerKey(header: string | undefined): { key: string } | { error: string } {
  if (header === undefined || header.trim() === '') {
    return { error: `Missing Authorization header; send Authorization: Bearer <API_KEY>. ${WHERE_KEYS}` };
  }
  const m = /^Bearer +([^\s]+) *$/i.exec(header);
  if (!m)
    return { error: 'The Authorization header must use the Bearer scheme: Authorization: Bearer <API_KEY>.' };
  return { key: m[1] };
}

/** How many Authorization header lines a request carries (Node keeps only the first in req.headers). */
export function authorizationHeaderCount(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === 'authorization') n++;
  return n;
}

/**
 * A request with more than one Authorization header is refused (400) before anything reads it: a
 * proxy in front may have checked one header while this service would take another (Node keeps the
 * first), so neither is trusted and nothing is counted against either key.
 */
export function duplicateAuthorization(req: FastifyRequest): AppError | null {
  const n = authorizationHeaderCount(req.raw.rawHeaders);
  if (n <= 1) return null;
  return new AppError(
    'BAD_REQUEST',
    `The request carries ${n} Authorization headers; send exactly one (Authorization: Bearer <API_KEY>). A proxy and this service could pick different ones, so the request is refused.`,
  );
}

/**
 * preHandler for every key-authenticated /api/v1 route, one database round trip (accounts/api-key-auth.ts).
 * Order of checks (docs/decisions.md): failed-authentication throttle of the client address (429)
 * → Bearer key (401) → rate-limit counting and 429 → organization entitlement (402). Sets
 * req.principal and the X-RateLimit-* headers, which therefore ride on every authenticated answer,
 * errors included. (Maintenance 503 and routing 404/405 run earlier and count through
 * countWithoutOperation; scope 403 and validation 400 run later, in the handler.)
 */
export function authenticate(deps: Deps, opts: AuthOptions = {}): preHandlerAsyncHookHandler {
  const statement = authStatement(opts.piggyback);
  const param = opts.piggyback?.param;
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const now = deps.clock.now();
    const bearer = bearerKey(req.headers.authorization);
    const keyHash = 'key' in bearer ? hashApiKey(bearer.key) : null;
    const outcome = await authenticateAndCount(
      deps.db,
      { keyHash, clientAddress: req.ip, now, piggybackParam: param?.(req) },
      statement,
    );
    if (outcome.kind === 'throttled') throw throttled(now, reply);
    if (outcome.kind === 'unauthenticated') {
      reply.headers(CHALLENGE);
      throw new AppError(
        'UNAUTHORIZED',
        'error' in bearer ? bearer.error : `The API key is invalid or has been revoked. ${WHERE_KEYS}`,
      );
    }
    const key = outcome.key;
    const rate = decideRate(
      now,
      { limit: key.keyLimit, count: key.keyCount },
      { limit: key.accountLimit, count: key.accountCount },
    );
    reply.headers(rate.headers);
    if (rate.exceeded) throw new AppError('RATE_LIMITED', rateLimitMessage(key));
    if (key.entitlement !== 'active') {
      throw new AppError(
        'SUBSCRIPTION_INACTIVE',
        "The organization's subscription is inactive; the account owner can renew it in the web app.",
      );
    }
    req.principal = {
      apiKeyId: key.apiKeyId,
      userId: key.userId,
      organizationId: key.organizationId,
      scopes: key.scopes,
      rateLimitPerHour: key.keyLimit,
      environment: key.environment,
    };
    req.piggyback = outcome.piggyback;
  };
  keyAuthenticators.add(handler);
  return handler;
}

/** The handlers authenticate() made: routes that use one count against the key (countsAgainstKey). */
const keyAuthenticators = new WeakSet<object>();

/** True when a route's preHandler option includes an authenticate() handler. */
export function authenticatesWithKey(preHandler: unknown): boolean {
  const list = Array.isArray(preHandler) ? preHandler : [preHandler];
  return list.some((h) => typeof h === 'function' && keyAuthenticators.has(h));
}

function throttled(now: Date, reply: FastifyReply): AppError {
  const headers = authThrottleHeaders(now);
  reply.headers(headers);
  return new AppError(
    'RATE_LIMITED',
    'Too many failed authentication attempts from this address; wait for Retry-After seconds, then retry with a valid API key.',
  );
}

/**
 * Counts a request no operation answers (an unknown path 404, a method the path does not serve 405,
 * anything during maintenance 503) against the key it carries: the spec counts every request
 * regardless of response status. Only a request with a Bearer key is counted; it runs the same
 * one-round-trip statement as the operations, so an unknown key counts as a failed authentication
 * and a throttled address gets no key lookup (the headers cannot be used to test keys). With a valid
 * key the answer gets the X-RateLimit-* headers. With `enforce` (404, 405), a request over a limit
 * or from a throttled address is answered 429 like any operation's; without it (503) the answer is
 * never changed. An invalid key never turns the answer into 401.
 */
export async function countWithoutOperation(
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  opts: { enforce: boolean },
): Promise<void> {
  const bearer = bearerKey(req.headers.authorization);
  if (!('key' in bearer)) return;
  const now = deps.clock.now();
  const outcome = await authenticateAndCount(deps.db, {
    keyHash: hashApiKey(bearer.key),
    clientAddress: req.ip,
    now,
  });
  if (outcome.kind === 'throttled') {
    if (opts.enforce) throw throttled(now, reply);
    return;
  }
  if (outcome.kind === 'unauthenticated') return;
  const key = outcome.key;
  const rate = decideRate(
    now,
    { limit: key.keyLimit, count: key.keyCount },
    { limit: key.accountLimit, count: key.accountCount },
  );
  if (rate.exceeded && opts.enforce) {
    reply.headers(rate.headers);
    throw new AppError('RATE_LIMITED', rateLimitMessage(key));
  }
  const { 'retry-after': _retryAfter, ...headers } = rate.headers;
  reply.headers(headers);
}

function rateLimitMessage(k: AuthenticatedKey): string {
  const which =
    k.keyCount > k.keyLimit
      ? `this API key's limit of ${k.keyLimit} requests per hour`
      : `the account's limit of ${k.accountLimit} requests per hour (all its keys together)`;
  return `Rate limit exceeded: ${which}. The window resets on the UTC hour; retry after Retry-After seconds.`;
}

/** Returns the principal or throws 403 FORBIDDEN naming the missing scope. */
export function requireScope(req: FastifyRequest, scope: Scope): ApiPrincipal {
  const p = req.principal;
  if (!p) throw new Error('authenticate() must run before requireScope()');
  if (!p.scopes.includes(scope)) {
    const route = (req.routeOptions.url ?? '').replace(/^\/api\/v1/, '').replace(/:(\w+)/g, '{$1}');
    throw new AppError(
      'FORBIDDEN',
      `This API key lacks the scope "${scope}" that ${req.method} ${route} needs. Create a key with the "${scope}" scope in the web app on the integrations settings page.`,
    );
  }
  return p;
}
