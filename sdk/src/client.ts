/**
 * A small client for REST API v1: the reads, the contacts writes and placing calls. No dependencies:
 * `fetch` is injectable (tests, proxies, instrumentation), and so are `sleep` and `random` for the
 * retry delays.
 *
 * Retries, at most `maxRetries` per call, for the reads, PATCH (it sets fields: repeating it changes
 * nothing more) and the POSTs sent with an idempotency key (the server answers a repeat with the first
 * answer); a POST without one is never retried (it could create twice):
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
import type {
  Call,
  CallPage,
  ContactPage,
  ContactResource,
  CreateContactInput,
  InboundTestCallInput,
  KeyIdentity,
  ListCallsParams,
  ListContactsParams,
  PlaceCallInput,
  RecordingLink,
  UpdateContactInput,
  WriteOptions,
} from './api-types.ts';

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<Response>;

interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH';
  query?: object;
  body?: unknown;
  idempotencyKey?: string;
}

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

  /** GET /contacts: one page, newest first. Needs read.contacts. */
  listContacts(params: ListContactsParams = {}): Promise<ContactPage> {
    return this.#get<ContactPage>('/contacts', params);
  }

  /**
   * Every contact matching `params`, page after page while has_more (100 per page unless `limit` is
   * given); ids already yielded are skipped (a contact created meanwhile shifts the pages).
   */
  async *iterateContacts(
    params: Omit<ListContactsParams, 'page'> & { page?: number } = {},
  ): AsyncGenerator<ContactResource> {
    const seen = new Set<string>();
    let page = params.page ?? 1;
    for (;;) {
      const result = await this.listContacts({ ...params, limit: params.limit ?? 100, page });
      for (const contact of result.items) {
        if (seen.has(contact.contact_id)) continue;
        seen.add(contact.contact_id);
        yield contact;
      }
      if (!result.has_more || result.items.length === 0) return;
      page += 1;
    }
  }

  /** GET /contacts/{id}. Needs read.contacts; another organization's contact is a NotFoundError. */
  getContact(contactId: string): Promise<ContactResource> {
    return this.#get<ContactResource>(`/contacts/${encodeURIComponent(contactId)}`);
  }

  /**
   * POST /contacts. Needs write.contacts. A number another contact has: CONTACT_EXISTS (a
   * CallCaptureApiError whose `contactId` names it); an unusable phone or e-mail: VALIDATION_ERROR.
   */
  createContact(input: CreateContactInput, options: WriteOptions = {}): Promise<ContactResource> {
    return this.#request<ContactResource>('/contacts', {
      method: 'POST',
      body: input,
      ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
    });
  }

  /** PATCH /contacts/{id}: changes the given fields. Needs write.contacts. */
  updateContact(contactId: string, changes: UpdateContactInput): Promise<ContactResource> {
    return this.#request<ContactResource>(`/contacts/${encodeURIComponent(contactId)}`, {
      method: 'PATCH',
      body: changes,
    });
  }

  /**
   * POST /calls: rings the agent, then dials the customer. Needs write.calls. Pass an idempotencyKey
   * (e.g. the id of the click in your CRM) so a retry never places a second call.
   */
  placeCall(input: PlaceCallInput, options: WriteOptions = {}): Promise<Call> {
    return this.#request<Call>('/calls', {
      method: 'POST',
      body: input,
      ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
    });
  }

  /**
   * POST /test-helpers/inbound-calls (test keys only, scope write.calls): plays an inbound test call
   * through the simulated carrier — a lead `conversation` (default), a `voicemail`, a
   * `recording_refused` call or an `anonymous` caller — and answers the Call at once; its events follow
   * at your test subscriptions within seconds. A live key gets ForbiddenError (403). Never retried
   * (each request plays a call).
   */
  createInboundTestCall(input: InboundTestCallInput = {}): Promise<Call> {
    return this.#request<Call>('/test-helpers/inbound-calls', { method: 'POST', body: input });
  }

  #get<T>(path: string, query: object = {}): Promise<T> {
    return this.#request<T>(path, { method: 'GET', query });
  }

  async #request<T>(path: string, spec: RequestSpec): Promise<T> {
    const url = new URL(this.#baseUrl + path);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    const retrySafe = spec.method !== 'POST' || spec.idempotencyKey !== undefined;
    const maxRetries = retrySafe ? this.#options.maxRetries : 0;
    for (let attempt = 0; ; attempt++) {
      let error: CallCaptureError;
      try {
        const response = await this.#send(url.toString(), spec);
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

  async #send(url: string, spec: RequestSpec): Promise<Response> {
    const { timeoutMs } = this.#options;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#options.apiKey}`,
      accept: 'application/json',
    };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    try {
      return await this.#options.fetch(url, {
        method: spec.method,
        headers,
        ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      const timedOut = cause instanceof Error && cause.name === 'TimeoutError';
      const why = timedOut ? `no answer within ${timeoutMs} ms` : 'the request failed';
      throw new CallCaptureConnectionError(`${spec.method} ${url}: ${why}. Check baseUrl and the network.`, {
        cause,
      });
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
  let contactId: string | undefined;
  try {
    const body = JSON.parse(text) as {
      error?: { code?: unknown; message?: unknown; param?: unknown; contact_id?: unknown };
      meta?: { request_id?: unknown };
    };
    if (typeof body.error?.code === 'string') code = body.error.code;
    if (typeof body.error?.message === 'string') serverMessage = body.error.message;
    if (typeof body.error?.param === 'string') param = body.error.param;
    if (typeof body.error?.contact_id === 'string') contactId = body.error.contact_id;
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
    ...(contactId === undefined ? {} : { contactId }),
  });
}
