/**
 * Typed errors of the REST client. Every API error is a `CallCaptureApiError` carrying the stable `code`
 * (log it; the message may change) and `status`; each code has its own subclass for `instanceof`.
 */
import type { ApiErrorCode } from './api-types.ts';

/** Base of everything the client throws. */
export class CallCaptureError extends Error {
  /** True when the same request can succeed later unchanged. */
  readonly retryable: boolean;

  constructor(message: string, options?: ErrorOptions & { retryable?: boolean }) {
    super(message, options);
    this.name = new.target.name;
    this.retryable = options?.retryable ?? false;
  }
}

/**
 * The request never got an HTTP answer (connection refused or reset, DNS, time-out). Retryable: the
 * client retries it itself (every operation is a GET) up to `maxRetries` times.
 */
export class CallCaptureConnectionError extends CallCaptureError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, { ...options, retryable: true });
  }
}

/** Statuses worth retrying whatever the body says: rate limit, and a gateway or service briefly unavailable. */
export const RETRYABLE_STATUSES: readonly number[] = [429, 502, 503, 504];

export interface ApiErrorInit {
  status: number;
  /** The error code from the body, or `HTTP_<status>` when the body was not the spec's error shape. */
  code: ApiErrorCode | (string & {});
  /** The server's human-readable message. */
  serverMessage: string;
  headers: Headers;
  /** meta.request_id of the body, else the X-Request-Id response header. */
  requestId?: string;
  /** error.param of the body (the parameter, body field or header at fault). */
  param?: string;
  /** error.contact_id of the body (CONTACT_EXISTS). */
  contactId?: string;
}

/** The API answered with an error body `{success: false, error: {code, message}}`. */
export class CallCaptureApiError extends CallCaptureError {
  readonly status: number;
  readonly code: ApiErrorCode | (string & {});
  readonly serverMessage: string;
  readonly headers: Headers;
  /** The server's id for the request (quote it when reporting a problem); undefined from older servers. */
  readonly requestId: string | undefined;
  /** BAD_REQUEST: the query parameter at fault, when the server named one. */
  readonly param: string | undefined;
  /** The Retry-After answer header in seconds (delta-seconds or an HTTP date), when the server sent one. */
  readonly retryAfterSeconds: number | undefined;

  /**
   * @param retryable default: whether the status is one of {@link RETRYABLE_STATUSES} (so an unknown
   *   code, or a proxy's 502 page, is judged by its status)
   */
  constructor(init: ApiErrorInit, hint = '', retryable = RETRYABLE_STATUSES.includes(init.status)) {
    super(`${init.code} (HTTP ${init.status}): ${init.serverMessage}${hint ? ` ${hint}` : ''}`, {
      retryable,
    });
    this.status = init.status;
    this.code = init.code;
    this.serverMessage = init.serverMessage;
    this.headers = init.headers;
    this.requestId = init.requestId ?? init.headers.get('x-request-id') ?? undefined;
    this.param = init.param;
    this.retryAfterSeconds = parseRetryAfter(init.headers.get('retry-after'));
  }
}

export class BadRequestError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'A query parameter failed validation: limit 1-100, page >= 1, phone 3-40 characters.');
  }
}
export class UnauthorizedError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(
      init,
      'Check the apiKey option: it is sent as "Authorization: Bearer <key>"; session cookies do not work.',
    );
  }
}
export class SubscriptionInactiveError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(init, "The account's subscription has lapsed; the account owner must renew it.");
  }
}
export class ForbiddenError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(
      init,
      'The key lacks the scope: read.calls for calls, read.recordings for recording links. An existing key ' +
        'does not gain a scope; create a key with it.',
    );
  }
}
export class NotFoundError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'No such call in the organization of this key (or it was deleted).');
  }
}

/** Base of the four recording-url refusals; `permanent` ones (410) will never succeed. */
export class RecordingUnavailableError extends CallCaptureApiError {
  readonly permanent: boolean;
  constructor(init: ApiErrorInit, hint: string, permanent: boolean) {
    super(init, hint, !permanent);
    this.permanent = permanent;
  }
}
export class RecordingNotReadyError extends RecordingUnavailableError {
  constructor(init: ApiErrorInit) {
    super(init, 'The audio has not arrived yet; retry later or wait for call.recording.ready.', false);
  }
}
export class RecordingWithheldError extends RecordingUnavailableError {
  constructor(init: ApiErrorInit) {
    super(init, 'The call is in the trash or scheduled for deletion (reversible); keep asking later.', false);
  }
}
export class RecordingDeletedError extends RecordingUnavailableError {
  constructor(init: ApiErrorInit) {
    super(init, 'The recording was removed by retention; this is final, stop retrying.', true);
  }
}
export class RecordingNotCapturedError extends RecordingUnavailableError {
  constructor(init: ApiErrorInit) {
    super(init, 'This call was never recorded; stop retrying.', true);
  }
}
export class ValidationError extends CallCaptureApiError {}
/** 409 CONTACT_EXISTS: another contact has the phone number; `contactId` names it. */
export class ContactExistsError extends CallCaptureApiError {
  readonly contactId: string | undefined;
  constructor(init: ApiErrorInit) {
    super(init, init.contactId ? `Update contact ${init.contactId} instead.` : '');
    this.contactId = init.contactId;
  }
}
/** 422 IDEMPOTENCY_KEY_REUSED: the idempotency key was used with another body in the last 24 hours. */
export class IdempotencyKeyReusedError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'Use a new idempotency key for a new request.');
  }
}
/** 409 CONFLICT: a request with the same idempotency key is still being processed; retry with the same key. */
export class ConflictError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'Retry with the same idempotency key to get the first answer.', true);
  }
}

/** 429: the hourly limit (1000 per key, 5000 per account, reset on the UTC hour) is exhausted. */
export class RateLimitedError extends CallCaptureApiError {
  readonly limit: number | undefined;
  readonly remaining: number | undefined;
  /** X-RateLimit-Reset (ISO 8601). */
  readonly resetAt: string | undefined;

  constructor(init: ApiErrorInit) {
    const retryAfter = parseRetryAfter(init.headers.get('retry-after'));
    const when = retryAfter === undefined ? 'when' : `in ${retryAfter} s, when`;
    super(init, `Retry ${when} the hourly window resets (on the UTC hour).`, true);
    this.limit = numberOrUndefined(init.headers.get('x-ratelimit-limit'));
    this.remaining = numberOrUndefined(init.headers.get('x-ratelimit-remaining'));
    this.resetAt = init.headers.get('x-ratelimit-reset') ?? undefined;
  }
}
export class DatabaseError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'A server-side failure; safe to retry with backoff.', true);
  }
}
export class MaintenanceError extends CallCaptureApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'The public API is temporarily disabled; try again later.', true);
  }
}

const BY_CODE: Record<ApiErrorCode, new (init: ApiErrorInit) => CallCaptureApiError> = {
  BAD_REQUEST: BadRequestError,
  UNAUTHORIZED: UnauthorizedError,
  SUBSCRIPTION_INACTIVE: SubscriptionInactiveError,
  FORBIDDEN: ForbiddenError,
  NOT_FOUND: NotFoundError,
  RECORDING_NOT_READY: RecordingNotReadyError,
  RECORDING_WITHHELD: RecordingWithheldError,
  RECORDING_DELETED: RecordingDeletedError,
  RECORDING_NOT_CAPTURED: RecordingNotCapturedError,
  VALIDATION_ERROR: ValidationError,
  CONTACT_EXISTS: ContactExistsError,
  IDEMPOTENCY_KEY_REUSED: IdempotencyKeyReusedError,
  CONFLICT: ConflictError,
  RATE_LIMITED: RateLimitedError,
  DATABASE_ERROR: DatabaseError,
  MAINTENANCE: MaintenanceError,
};

/** Builds the subclass matching `init.code`; unknown codes (new within v1) get the base class. */
export function apiErrorFor(init: ApiErrorInit): CallCaptureApiError {
  const Class = Object.hasOwn(BY_CODE, init.code) ? BY_CODE[init.code as ApiErrorCode] : undefined;
  return Class ? new Class(init) : new CallCaptureApiError(init);
}

/** Retry-After in seconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - nowMs) / 1000));
}

function numberOrUndefined(value: string | null): number | undefined {
  const n = value === null ? Number.NaN : Number(value);
  return Number.isFinite(n) ? n : undefined;
}
