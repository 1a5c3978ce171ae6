import type { JsonSchema } from './types.ts';

/**
 * Response headers and the shared error responses of the OpenAPI document (openapi.ts).
 * Header objects are inlined (not $ref'd) because whether one is required differs per response.
 */
const header = (description: string, schema: JsonSchema, required: boolean): JsonSchema => ({
  description,
  ...(required ? { required: true } : {}),
  schema,
});

export const cacheControlHeader = (value = 'no-store'): JsonSchema =>
  header(
    `Caching policy; \`${value}\` for every answer of this operation unless stated.`,
    { type: 'string' },
    true,
  );

/** On every answer: the caller's well-formed X-Request-Id, or one the service made up. */
export const requestIdHeader: JsonSchema = header(
  "The request id: the caller's X-Request-Id when it is 1 to 128 characters of letters, digits and `._:-`, " +
    'otherwise a fresh UUID. It is logged with the request and repeated in error bodies as meta.request_id.',
  { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  true,
);

export function rateLimitHeaders(required: boolean): Record<string, JsonSchema> {
  return {
    'X-RateLimit-Limit': header(
      "The binding hourly limit: the key's or the account's, whichever has fewer requests remaining.",
      { type: 'integer', minimum: 1 },
      required,
    ),
    'X-RateLimit-Remaining': header(
      'Requests left under that limit in the current window.',
      { type: 'integer', minimum: 0 },
      required,
    ),
    'X-RateLimit-Reset': header(
      'When the window resets (the next UTC hour), ISO 8601.',
      { type: 'string', format: 'date-time' },
      required,
    ),
  };
}

export const retryAfterHeader = header(
  'Seconds until the window resets.',
  { type: 'integer', minimum: 1 },
  true,
);

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

function errorResponse(description: string, headers: Record<string, JsonSchema>): JsonSchema {
  return {
    description,
    headers: { 'Cache-Control': cacheControlHeader(), 'X-Request-Id': requestIdHeader, ...headers },
    content: errorContent,
  };
}

/** Error responses by name, with the status each one answers. */
export const SHARED_ERRORS: Record<number, { name: string; response: JsonSchema }> = {
  400: {
    name: 'BadRequest',
    response: errorResponse(
      'BAD_REQUEST: a query parameter is unknown, repeated, or has an invalid value; a body field is unknown, missing or of ' +
        'the wrong type, or the body is not JSON; or the Idempotency-Key header is unusable. The message names it and the ' +
        'accepted values, error.param the parameter, field or header. ' +
        'Also a request with more than one Authorization header (refused before authentication: it counts against no key and ' +
        'carries no X-RateLimit-* headers).',
      rateLimitHeaders(false),
    ),
  },
  401: {
    name: 'Unauthorized',
    response: errorResponse(
      'UNAUTHORIZED: missing or invalid Bearer token (no header, another scheme, an unknown or revoked key).',
      { 'WWW-Authenticate': header('Always `Bearer realm="api"`.', { type: 'string' }, true) },
    ),
  },
  402: {
    name: 'SubscriptionInactive',
    response: errorResponse(
      "SUBSCRIPTION_INACTIVE: the organization's subscription has lapsed.",
      rateLimitHeaders(true),
    ),
  },
  403: {
    name: 'Forbidden',
    response: errorResponse(
      'FORBIDDEN: the key lacks the scope this operation needs; the message names it.',
      rateLimitHeaders(true),
    ),
  },
  404: {
    name: 'NotFound',
    response: errorResponse(
      "NOT_FOUND: no such call or contact in the key's organization and environment (also for another organization's, a deleted call, or a malformed id).",
      rateLimitHeaders(true),
    ),
  },
  429: {
    name: 'RateLimited',
    response: errorResponse(
      'RATE_LIMITED: the hourly limit of the key or of the account is exceeded (every request counts, whatever its status), ' +
        'or this address sent too many failed authentications in the current minute. Retry after Retry-After seconds.',
      { 'Retry-After': retryAfterHeader, ...rateLimitHeaders(true) },
    ),
  },
  500: {
    name: 'ServerError',
    response: errorResponse(
      'DATABASE_ERROR: server or database error; safe to retry with backoff.',
      rateLimitHeaders(false),
    ),
  },
  503: {
    name: 'Maintenance',
    response: errorResponse(
      'MAINTENANCE: the public API is temporarily disabled. The request still counts against the key it carries ' +
        '(then the X-RateLimit-* headers are present); it is never answered 429 instead.',
      rateLimitHeaders(false),
    ),
  },
};

export { errorContent, header };
