import type { z } from 'zod';

/**
 * The one catalogue of error codes (spec "Errors"), each with the HTTP status it answers with.
 * Services throw AppError with one of these codes; they know nothing of replies. The HTTP layer
 * (src/http/error-handler.ts) renders every AppError as {success:false, error:{code,message},
 * meta:{timestamp}} with the code's status.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  SUBSCRIPTION_INACTIVE: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RECORDING_NOT_READY: 409,
  RECORDING_WITHHELD: 409,
  CONFLICT: 409,
  /** POST/PATCH /api/v1/contacts: another contact of the environment has this E.164 number (error.contact_id) */
  CONTACT_EXISTS: 409,
  RECORDING_DELETED: 410,
  RECORDING_NOT_CAPTURED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** recording download with a Range that starts beyond the file (the reply carries Content-Range) */
  RANGE_NOT_SATISFIABLE: 416,
  VALIDATION_ERROR: 422,
  /** an Idempotency-Key already used with another body for the same operation (within 24 h) */
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  DATABASE_ERROR: 500,
  MAINTENANCE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface AppErrorOptions {
  /**
   * Overrides the code's status. Only for the one code the spec gives two statuses:
   * SUBSCRIPTION_INACTIVE is 402 for an organization and 409 for a paused webhook subscription.
   */
  status?: number;
  /** RATE_LIMITED: whole seconds after which a retry can succeed (rendered as Retry-After) */
  retryAfterSeconds?: number;
  /** BAD_REQUEST, VALIDATION_ERROR: the query parameter, body field or header at fault (the optional error.param) */
  param?: string;
  /** CONTACT_EXISTS: the contact that already has the number (rendered as error.contact_id) */
  contactId?: string;
  cause?: unknown;
}

/** The one error class: a catalogued code and a message that tells the caller how to fix it. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;
  readonly param: string | undefined;
  readonly contactId: string | undefined;
  constructor(code: ErrorCode, message: string, opts: AppErrorOptions = {}) {
    super(message, { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = opts.status ?? ERROR_STATUS[code];
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.param = opts.param;
    this.contactId = opts.contactId;
  }
}

/** A 400; `param` names the query parameter or body field at fault when there is one. */
export const badRequest = (message: string, param?: string) =>
  new AppError('BAD_REQUEST', message, param === undefined ? {} : { param });
export const notFound = (message = 'Resource not found.') => new AppError('NOT_FOUND', message);
export const unauthorized = (message: string) => new AppError('UNAUTHORIZED', message);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);
export const validationError = (message: string, param?: string) =>
  new AppError('VALIDATION_ERROR', message, param === undefined ? {} : { param });

/** Where validated input came from: the fields of a JSON body, or the parameters of a query string. */
export type InputPart = 'body' | 'query';

/** A zod issue path as the caller wrote it: transcript_processed.lead_score, scopes[1]. */
const pathName = (path: readonly PropertyKey[]): string =>
  path.map((p, n) => (typeof p === 'number' ? `[${p}]` : n ? `.${String(p)}` : String(p))).join('');

/**
 * The one zod → error formatter: 400 BAD_REQUEST naming every offending field or query parameter (at
 * most five) and what it accepts, so the caller can fix the request in one go. error.param is the
 * first one named (an unknown key's name, or the issue's path); none when the whole input is wrong.
 */
export function invalidInput(
  issues: readonly z.core.$ZodIssue[],
  accepted: readonly string[],
  part: InputPart = 'body',
): AppError {
  const names = accepted.join(', ');
  const lines = issues.slice(0, 5).map((i) => {
    if (i.code === 'unrecognized_keys') {
      const keys = i.keys.map((k) => `"${k}"`).join(', ');
      return part === 'body'
        ? `Unknown field ${keys}; accepted fields: ${names}`
        : `Unknown query parameter ${keys}; accepted parameters: ${names}`;
    }
    if (i.path.length === 0) {
      return part === 'body'
        ? `The request body must be a JSON object with the fields ${names}`
        : `The query string accepts the parameters ${names}`;
    }
    const name = part === 'body' ? `Field "${pathName(i.path)}"` : `Query parameter "${pathName(i.path)}"`;
    if (i.code === 'invalid_type' && i.message.endsWith('received undefined')) {
      return `${name} is required (${i.expected})`;
    }
    return `${name}: ${i.message}`;
  });
  return badRequest(`${lines.join('; ')}.`, firstParam(issues[0]));
}

/** The field or parameter an issue is about, as error.param. */
function firstParam(issue: z.core.$ZodIssue | undefined): string | undefined {
  if (!issue) return undefined;
  if (issue.code === 'unrecognized_keys') return issue.keys[0];
  return issue.path.length === 0 ? undefined : pathName(issue.path);
}

/** Validates a JSON body (or a parsed query) with a zod object schema; throws invalidInput's 400. */
export function parseInput<S extends z.ZodObject>(
  schema: S,
  input: unknown,
  part: InputPart = 'body',
): z.infer<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw invalidInput(r.error.issues, Object.keys(schema.shape), part);
}
