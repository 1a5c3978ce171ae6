/**
 * One catalogue of error codes mapped to HTTP status (spec "Errors"). Routes throw ApiError;
 * one handler renders {success:false, error:{code,message}, meta:{timestamp}}.
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
  RECORDING_DELETED: 410,
  RECORDING_NOT_CAPTURED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** recording download with a Range that starts beyond the file; carries Content-Range: bytes *\/size */
  RANGE_NOT_SATISFIABLE: 416,
  VALIDATION_ERROR: 422,
  RATE_LIMITED: 429,
  DATABASE_ERROR: 500,
  MAINTENANCE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(
    code: ErrorCode | string,
    message: string,
    opts: { status?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = opts.status ?? ERROR_STATUS[code as ErrorCode] ?? 500;
    this.headers = opts.headers ?? {};
  }
}

export function errorBody(code: string, message: string, now: Date) {
  return { success: false as const, error: { code, message }, meta: { timestamp: now.toISOString() } };
}

export const badRequest = (message: string) => new ApiError('BAD_REQUEST', message);
export const notFound = (message = 'Resource not found.') => new ApiError('NOT_FOUND', message);
export const unauthorized = (message: string) => new ApiError('UNAUTHORIZED', message);
export const forbidden = (message: string) => new ApiError('FORBIDDEN', message);
export const validationError = (message: string) => new ApiError('VALIDATION_ERROR', message);
