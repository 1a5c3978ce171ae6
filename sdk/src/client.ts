/**
 * A small client for the three read-only operations of REST API v1. No dependencies: `fetch` is
 * injectable (tests, proxies, instrumentation), and so are `sleep` and `random` for the retry delays.
 *
 * Retries (every operation is a GET, so a retry is always safe), at most `maxRetries` per call:
 * - 429 RATE_LIMITED, 502, 503 (MAINTENANCE included) and 504 wait for Retry-After when the answer has
 *   one and it is at most `maxRetryAfterSeconds` (a longer one is thrown at once for the caller to
 *   schedule); without Retry-After, 502/503/504 back off exponentially with jitter and a 429 is thrown;
 * - 500 DATABASE_ERROR and connection failures (refused, reset, DNS, time-out) back off likewise.
 * Nothing else is retried automatically; every error's `retryable` says what may succeed later.
 */
import {
  apiErrorFor,
  CallCaptureApiError,
  CallCaptureConnectionError,
  CallCaptureError,
  DatabaseError,
  RateLimitedError,
} from './api-errors.ts';
import type { Call, CallPage, KeyIdentity, ListCallsParams, RecordingLink } from './api-types.ts';

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; signal?: AbortSignal },
) => Promise<Response>;

export interface CallCaptureClientOptions {
  /** API key, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** The service's REST base address, ending in /api/v1, e.g. https://calls.example.com/api/v1. */
  baseUrl: string;
  /** Default: the global fetch. */
  fetch?: FetchLike;
  /**
   * Retries after a 429, 502, 503, 504, a 500 DATABASE_ERROR or a connection failure. Default 2 (three
   * attempts in all); 0 turns retrying off.
   */
  maxRetries?: number;
  /**
   * Longest Retry-After the client waits for itself. The window resets on the UTC hour, so a 429 can ask
   * for up to an hour; beyond this bound the RateLimitedError is thrown at once for the caller to schedule.
   * Default 60.
   */
  maxRetryAfterSeconds?: number;
  /** First backoff (no Retry-After given), doubled per retry. Default 500 ms. */
  initialRetryDelayMs?: number;
  /** Ceiling of that backoff. Default 8000 ms. */
  maxRetryDelayMs?: number;
  /** Per-attempt time-out. Default 30 000 ms. */
  timeoutMs?: number;
  /** Default: a setTimeout promise. */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1). Default Math.random. */
  random?: () => number;
}

/** Answers retried by the client itself (with Retry-After when given). */
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class CallCaptureClient {
  readonly #options: Required<Omit<CallCaptureClientOptions, 'baseUrl'>>;
  readonly #baseUrl: string;

  constructor(options: CallCaptureClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new TypeError('CallCaptureClient needs apiKey: create a key on the integrations settings page.');
    }
    const baseUrl = String(options.baseUrl ?? '').replace(/\/+$/, '');
    if (!/^https?:\/\/.+\/api\/v1$/.test(baseUrl)) {
      throw new TypeError(
        `CallCaptureClient baseUrl must be an http(s) URL ending in /api/v1, got ${JSON.stringify(options.baseUrl)}.`,
      );
    }
    this.#baseUrl = baseUrl;
    const maxRetries = options.maxRetries ?? 2;
    if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
      throw new TypeError(`CallCaptureClient maxRetries must be a whole number >= 0, got ${maxRetries}.`);
    }
    this.#options = {
      apiKey: options.apiKey.trim(),
      fetch: options.fetch ?? ((url, init) => fetch(url, init)),
      maxRetries,
      maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 60,
      initialRetryDelayMs: options.initialRetryDelayMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 8000,
      timeoutMs: options.timeoutMs ?? 30_000,
      sleep: options.sleep ?? defaultSleep,
      random: options.random ?? Math.random,
    };
  }

  /** GET /me: who is this key? Needs no scope; a connection test. */
  getMe(): Promise<KeyIdentity> {
    return this.#get<KeyIdentity>('/me');
  }

  /** GET /calls: one page, newest first. Needs read.calls. */
  listCalls(params: ListCallsParams = {}): Promise<CallPage> {
    return this.#get<CallPage>('/calls', params);
  }

  /** GET /calls/{id}. Needs read.calls; a call of another organization is a NotFoundError. */
  getCall(callId: string): Promise<Call> {
    return this.#get<Call>(`/calls/${encodeURIComponent(callId)}`);
  }

  /** GET /calls/{id}/recording-url: a link valid for 15 minutes. Needs read.recordings. */
  getRecordingUrl(callId: string): Promise<RecordingLink> {
    return this.#get<RecordingLink>(`/calls/${encodeURIComponent(callId)}/recording-url`);
  }

  /**
   * Every call matching `params`, page after page while has_more (100 per page unless `limit` is given).
   * Pages are offsets over a live list: a call recorded meanwhile shifts items to the next page, so ids
   * already yielded are skipped; pass `dateTo` for a stable snapshot when backfilling.
   */
  async *iterateCalls(params: Omit<ListCallsParams, 'page'> & { page?: number } = {}): AsyncGenerator<Call> {
    const seen = new Set<string>();
    let page = params.page ?? 1;
    for (;;) {
      const result = await this.listCalls({ ...params, limit: params.limit ?? 100, page });
      for (const call of result.items) {
        if (seen.has(call.call_id)) continue;
        seen.add(call.call_id);
        yield call;
      }
      if (!result.has_more || result.items.length === 0) return;
      page += 1;
    }
  }

  async #get<T>(path: string, query: object = {}): Promise<T> {
    const url = new URL(this.#baseUrl + path);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    const { maxRetries } = this.#options;
    for (let attempt = 0; ; attempt++) {
      let error: CallCaptureError;
      try {
        const response = await this.#send(url.toString());
        if (response.ok) return await readData<T>(response);
        error = await readError(response);
      } catch (thrown) {
        if (!(thrown instanceof CallCaptureConnectionError)) throw thrown;
        error = thrown;
      }
      const delay = attempt < maxRetries ? this.#retryDelayMs(error, attempt) : undefined;
      if (delay === undefined) throw error;
      await this.#options.sleep(delay);
    }
  }

  async #send(url: string): Promise<Response> {
    const { timeoutMs } = this.#options;
    try {
      return await this.#options.fetch(url, {
        method: 'GET',
        headers: { authorization: `Bearer ${this.#options.apiKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      const timedOut = cause instanceof Error && cause.name === 'TimeoutError';
      const why = timedOut ? `no answer within ${timeoutMs} ms` : 'the request failed';
      throw new CallCaptureConnectionError(`GET ${url}: ${why}. Check baseUrl and the network.`, { cause });
    }
  }

  /** Milliseconds to wait before retrying, or undefined when this error is not retried automatically. */
  #retryDelayMs(error: CallCaptureError, attempt: number): number | undefined {
    const o = this.#options;
    const backoff = () => {
      const ceiling = Math.min(o.maxRetryDelayMs, o.initialRetryDelayMs * 2 ** attempt);
      return Math.round(ceiling / 2 + (ceiling / 2) * o.random());
    };
    if (error instanceof CallCaptureConnectionError || error instanceof DatabaseError) return backoff();
    if (!(error instanceof CallCaptureApiError) || !RETRIED_STATUSES.has(error.status)) return undefined;
    const seconds = error.retryAfterSeconds;
    if (seconds !== undefined) return seconds <= o.maxRetryAfterSeconds ? seconds * 1000 : undefined;
    // A 429 without Retry-After: the window's end is unknown, so hammering would only burn requests.
    return error instanceof RateLimitedError || error.status === 429 ? undefined : backoff();
  }
}

async function readData<T>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { success?: unknown; data?: unknown };
    if (body.success === true && body.data !== undefined) return body.data as T;
  } catch {
    // fall through
  }
  throw new CallCaptureError(
    `Expected a JSON envelope {success: true, data} from ${response.url || 'the API'} (HTTP ` +
      `${response.status}). Does baseUrl point at the service's /api/v1?`,
  );
}

async function readError(response: Response): Promise<CallCaptureApiError> {
  const text = await response.text().catch(() => '');
  let code = `HTTP_${response.status}`;
  let serverMessage = response.statusText || 'no message';
  let requestId: string | undefined;
  let param: string | undefined;
  try {
    const body = JSON.parse(text) as {
      error?: { code?: unknown; message?: unknown; param?: unknown };
      meta?: { request_id?: unknown };
    };
    if (typeof body.error?.code === 'string') code = body.error.code;
    if (typeof body.error?.message === 'string') serverMessage = body.error.message;
    if (typeof body.error?.param === 'string') param = body.error.param;
    if (typeof body.meta?.request_id === 'string') requestId = body.meta.request_id;
  } catch {
    // Not the spec's error shape (a proxy's HTML page, for instance): keep HTTP_<status>.
  }
  return apiErrorFor({
    status: response.status,
    code,
    serverMessage,
    headers: response.headers,
    ...(requestId === undefined ? {} : { requestId }),
    ...(param === undefined ? {} : { param }),
  });
}
