import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BadRequestError,
  CallCaptureApiError,
  CallCaptureConnectionError,
  DatabaseError,
  ForbiddenError,
  MaintenanceError,
  NotFoundError,
  RateLimitedError,
  RecordingDeletedError,
  RecordingNotCapturedError,
  RecordingNotReadyError,
  RecordingUnavailableError,
  RecordingWithheldError,
  SubscriptionInactiveError,
  UnauthorizedError,
  ValidationError,
} from '../src/api-errors.ts';
import type { Call } from '../src/api-types.ts';
import { CallCaptureClient, type CallCaptureClientOptions, type FetchLike } from '../src/client.ts';

const BASE = 'https://calls.example.com/api/v1';

function ok(data: unknown): Response {
  return Response.json({ success: true, data, meta: { timestamp: '2026-06-20T10:00:00Z' } });
}
function fail(status: number, code: string, headers: Record<string, string> = {}): Response {
  const body = { success: false, error: { code, message: `server says ${code}` }, meta: { timestamp: 'x' } };
  return Response.json(body, { status, headers });
}
function call(n: number): Call {
  return {
    call_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    direction: 'inbound',
    caller_phone: '+4915112345678',
    customer_phone_e164: '+4915112345678',
    customer_phone_national: '0151 12345678',
    company_phone_e164: null,
    app_url: null,
    caller_name: null,
    duration: 10,
    crm_status: 'new',
    review_status: null,
    outbound_lifecycle: null,
    transcript_processed: null,
    created_at: '2026-06-20T10:00:00Z',
  };
}

/** A fetch that answers from a script and records every request. */
function scripted(...responses: Array<Response | Error>) {
  const requests: Array<{ url: string; headers: Record<string, string> }> = [];
  const fetch: FetchLike = async (url, init) => {
    requests.push({ url, headers: init.headers });
    const next = responses.shift();
    if (next === undefined) throw new Error(`unexpected request ${url}`);
    if (next instanceof Error) throw next;
    return next;
  };
  const sleeps: number[] = [];
  const sleep = async (ms: number) => void sleeps.push(ms);
  return {
    requests,
    sleeps,
    options: { apiKey: 'ck_live_abc', baseUrl: BASE, fetch, sleep, random: () => 1 },
  };
}

test('getMe sends the Bearer key to {base_url}/me and returns data', async () => {
  const s = scripted(ok({ api_key_id: 'k', user_id: 'u', organization_id: 'o', scopes: [] }));
  const me = await new CallCaptureClient(s.options).getMe();
  assert.equal(me.organization_id, 'o');
  assert.equal(s.requests[0].url, `${BASE}/me`);
  assert.equal(s.requests[0].headers.authorization, 'Bearer ck_live_abc');
});

test('listCalls sends only the given query parameters', async () => {
  const s = scripted(ok({ items: [], has_more: false, page: 2, limit: 5 }));
  await new CallCaptureClient(s.options).listCalls({
    page: 2,
    limit: 5,
    direction: 'outbound',
    phone: '+49 151',
  });
  assert.equal(s.requests[0].url, `${BASE}/calls?page=2&limit=5&direction=outbound&phone=%2B49+151`);
});

test('getCall and getRecordingUrl escape the id into the path', async () => {
  const s = scripted(ok(call(1)), ok({ url: 'https://x/rec.mp3', expires_at: '2026-06-20T10:15:00Z' }));
  const client = new CallCaptureClient(s.options);
  assert.equal((await client.getCall('a/b')).call_id, call(1).call_id);
  assert.equal((await client.getRecordingUrl('id 1')).url, 'https://x/rec.mp3');
  assert.deepEqual(
    s.requests.map((r) => r.url),
    [`${BASE}/calls/a%2Fb`, `${BASE}/calls/id%201/recording-url`],
  );
});

test('iterateCalls walks every page while has_more and skips ids shifted onto the next page', async () => {
  const s = scripted(
    ok({ items: [call(1), call(2)], has_more: true, page: 1, limit: 2 }),
    ok({ items: [call(2), call(3)], has_more: true, page: 2, limit: 2 }),
    ok({ items: [call(4)], has_more: false, page: 3, limit: 2 }),
  );
  const ids: string[] = [];
  for await (const c of new CallCaptureClient(s.options).iterateCalls({ limit: 2, status: 'new' }))
    ids.push(c.call_id);
  assert.deepEqual(
    ids,
    [call(1), call(2), call(3), call(4)].map((c) => c.call_id),
  );
  const queries = s.requests.map((r) => Object.fromEntries(new URL(r.url).searchParams));
  assert.deepEqual(
    queries,
    [1, 2, 3].map((page) => ({ status: 'new', limit: '2', page: String(page) })),
  );
});

test('a 429 is retried after the Retry-After seconds', async () => {
  const s = scripted(
    fail(429, 'RATE_LIMITED', { 'retry-after': '7' }),
    ok({ items: [], has_more: false, page: 1, limit: 20 }),
  );
  const page = await new CallCaptureClient(s.options).listCalls();
  assert.equal(page.has_more, false);
  assert.deepEqual(s.sleeps, [7000]);
  assert.equal(s.requests.length, 2);
});

test('a Retry-After longer than maxRetryAfterSeconds is thrown at once with its seconds and limits', async () => {
  const headers = {
    'retry-after': '1800',
    'x-ratelimit-limit': '1000',
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': '2026-06-20T11:00:00Z',
  };
  const s = scripted(fail(429, 'RATE_LIMITED', headers));
  const error = await new CallCaptureClient(s.options).getMe().catch((e: unknown) => e);
  assert.ok(error instanceof RateLimitedError);
  assert.equal(error.retryAfterSeconds, 1800);
  assert.equal(error.limit, 1000);
  assert.equal(error.remaining, 0);
  assert.equal(error.resetAt, '2026-06-20T11:00:00Z');
  assert.equal(error.retryable, true);
  assert.deepEqual(s.sleeps, []);
});

test('a 500 DATABASE_ERROR is retried with exponential backoff, bounded by maxRetries', async () => {
  const s = scripted(fail(500, 'DATABASE_ERROR'), fail(500, 'DATABASE_ERROR'), fail(500, 'DATABASE_ERROR'));
  const options: CallCaptureClientOptions = { ...s.options, maxRetries: 2, initialRetryDelayMs: 100 };
  await assert.rejects(new CallCaptureClient(options).getMe(), DatabaseError);
  assert.equal(s.requests.length, 3);
  assert.deepEqual(s.sleeps, [100, 200]);
});

test('a 503 is retried after its Retry-After, a 502 and a 504 with backoff; 4xx are not retried', async () => {
  const s = scripted(
    fail(503, 'MAINTENANCE', { 'retry-after': '3' }),
    new Response('<html>Bad gateway</html>', { status: 502 }),
    new Response('<html>Gateway timeout</html>', { status: 504 }),
    ok({ api_key_id: 'k', user_id: 'u', organization_id: 'o', scopes: [] }),
  );
  const options: CallCaptureClientOptions = { ...s.options, maxRetries: 3, initialRetryDelayMs: 100 };
  assert.equal((await new CallCaptureClient(options).getMe()).organization_id, 'o');
  assert.deepEqual(s.sleeps, [3000, 200, 400]);

  for (const [status, code] of [
    [400, 'BAD_REQUEST'],
    [404, 'NOT_FOUND'],
    [409, 'RECORDING_NOT_READY'],
  ] as const) {
    const once = scripted(fail(status, code));
    const error = await new CallCaptureClient(once.options).getCall('c').catch((e: unknown) => e);
    assert.ok(error instanceof CallCaptureApiError && error.code === code);
    assert.equal(once.requests.length, 1, code);
  }
});

test('a 503 MAINTENANCE that keeps failing is thrown after maxRetries, retryable and with its Retry-After', async () => {
  const s = scripted(
    fail(503, 'MAINTENANCE', { 'retry-after': '1' }),
    fail(503, 'MAINTENANCE', { 'retry-after': '1' }),
  );
  const error = await new CallCaptureClient({ ...s.options, maxRetries: 1 }).getMe().catch((e: unknown) => e);
  assert.ok(error instanceof MaintenanceError);
  assert.equal(error.retryable, true);
  assert.equal(error.retryAfterSeconds, 1);
  assert.equal(s.requests.length, 2);
  assert.deepEqual(s.sleeps, [1000]);
});

test('a Retry-After as an HTTP date is honoured; maxRetries 0 turns retrying off', async () => {
  const at = new Date(Date.now() + 5_000).toUTCString();
  const s = scripted(fail(429, 'RATE_LIMITED', { 'retry-after': at }), ok({ scopes: [] }));
  await new CallCaptureClient(s.options).getMe();
  assert.equal(s.sleeps.length, 1);
  assert.ok(s.sleeps[0] >= 3000 && s.sleeps[0] <= 6000, String(s.sleeps[0]));

  const off = scripted(fail(503, 'MAINTENANCE', { 'retry-after': '1' }));
  await assert.rejects(new CallCaptureClient({ ...off.options, maxRetries: 0 }).getMe(), MaintenanceError);
  assert.equal(off.requests.length, 1);
  assert.throws(() => new CallCaptureClient({ ...off.options, maxRetries: -1 }), /maxRetries/);
});

test('a 429 without Retry-After is thrown at once (the window end is unknown)', async () => {
  const s = scripted(fail(429, 'RATE_LIMITED'));
  const error = await new CallCaptureClient(s.options).getMe().catch((e: unknown) => e);
  assert.ok(error instanceof RateLimitedError && error.retryable);
  assert.equal(s.requests.length, 1);
});

test('connection failures are retried with backoff, then thrown as a retryable CallCaptureConnectionError', async () => {
  const recovered = scripted(new TypeError('fetch failed'), ok({ scopes: [] }));
  await new CallCaptureClient({ ...recovered.options, initialRetryDelayMs: 100 }).getMe();
  assert.deepEqual(recovered.sleeps, [100]);
  assert.equal(recovered.requests.length, 2);

  const cause = new TypeError('fetch failed');
  const down = scripted(cause, cause, cause);
  const error = await new CallCaptureClient(down.options).getMe().catch((e: unknown) => e);
  assert.ok(error instanceof CallCaptureConnectionError);
  assert.equal(error.retryable, true);
  assert.equal(down.requests.length, 3);
});

test('each error code becomes its own error class', async () => {
  const cases: Array<[number, string, new (...args: never[]) => CallCaptureApiError]> = [
    [400, 'BAD_REQUEST', BadRequestError],
    [401, 'UNAUTHORIZED', UnauthorizedError],
    [402, 'SUBSCRIPTION_INACTIVE', SubscriptionInactiveError],
    [403, 'FORBIDDEN', ForbiddenError],
    [404, 'NOT_FOUND', NotFoundError],
    [409, 'RECORDING_NOT_READY', RecordingNotReadyError],
    [409, 'RECORDING_WITHHELD', RecordingWithheldError],
    [410, 'RECORDING_DELETED', RecordingDeletedError],
    [410, 'RECORDING_NOT_CAPTURED', RecordingNotCapturedError],
    [422, 'VALIDATION_ERROR', ValidationError],
    [503, 'MAINTENANCE', MaintenanceError],
  ];
  for (const [status, code, Class] of cases) {
    const s = scripted(fail(status, code));
    const error = await new CallCaptureClient({ ...s.options, maxRetries: 0 })
      .getRecordingUrl('c')
      .catch((e: unknown) => e);
    assert.ok(error instanceof Class, code);
    assert.ok(error instanceof CallCaptureApiError);
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    assert.match(error.message, new RegExp(`^${code} \\(HTTP ${status}\\): server says ${code}`));
  }
});

test('a thrown error carries the request id and the parameter at fault from the body', async () => {
  const body = {
    success: false,
    error: { code: 'BAD_REQUEST', message: 'Invalid value "0" for query parameter "limit".', param: 'limit' },
    meta: { timestamp: '2026-06-20T10:00:00.000Z', request_id: 'req-body-1' },
  };
  const s = scripted(Response.json(body, { status: 400, headers: { 'x-request-id': 'req-header-1' } }));
  const error = await new CallCaptureClient(s.options).listCalls({ limit: 0 }).catch((e: unknown) => e);
  assert.ok(error instanceof BadRequestError);
  assert.equal(error.requestId, 'req-body-1');
  assert.equal(error.param, 'limit');
});

test('without meta.request_id the X-Request-Id header is the request id; older bodies leave both unset', async () => {
  const s = scripted(
    fail(404, 'NOT_FOUND', { 'x-request-id': 'req-header-2' }),
    fail(404, 'NOT_FOUND'),
    new Response('<html>Bad gateway</html>', { status: 502, headers: { 'x-request-id': 'req-proxy-3' } }),
  );
  const client = new CallCaptureClient({ ...s.options, maxRetries: 0 });
  const fromHeader = await client.getCall('c').catch((e: unknown) => e);
  const older = await client.getCall('c').catch((e: unknown) => e);
  const proxy = await client.getCall('c').catch((e: unknown) => e);
  assert.ok(fromHeader instanceof NotFoundError && older instanceof NotFoundError);
  assert.equal(fromHeader.requestId, 'req-header-2');
  assert.equal(fromHeader.param, undefined);
  assert.equal(older.requestId, undefined);
  assert.ok(proxy instanceof CallCaptureApiError);
  assert.equal(proxy.requestId, 'req-proxy-3');
});

test('recording refusals say whether they are permanent', async () => {
  const s = scripted(fail(409, 'RECORDING_WITHHELD'), fail(410, 'RECORDING_DELETED'));
  const client = new CallCaptureClient(s.options);
  const withheld = await client.getRecordingUrl('c').catch((e: unknown) => e);
  const deleted = await client.getRecordingUrl('c').catch((e: unknown) => e);
  assert.ok(withheld instanceof RecordingUnavailableError && !withheld.permanent && withheld.retryable);
  assert.ok(deleted instanceof RecordingUnavailableError && deleted.permanent && !deleted.retryable);
});

test('an error body that is not the spec shape keeps the status as HTTP_<status>', async () => {
  const s = scripted(new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
  const error = await new CallCaptureClient({ ...s.options, maxRetries: 0 }).getMe().catch((e: unknown) => e);
  assert.ok(error instanceof CallCaptureApiError);
  assert.equal(error.code, 'HTTP_502');
  assert.equal(error.constructor, CallCaptureApiError);
});

test('a network failure becomes a connection error that keeps its cause', async () => {
  const cause = new TypeError('fetch failed');
  const s = scripted(cause);
  const error = await new CallCaptureClient({ ...s.options, maxRetries: 0 }).getMe().catch((e: unknown) => e);
  assert.ok(error instanceof CallCaptureConnectionError);
  assert.equal(error.cause, cause);
});

test('a base URL not ending in /api/v1 or an empty key is refused at construction', () => {
  assert.throws(
    () => new CallCaptureClient({ apiKey: 'k', baseUrl: 'https://calls.example.com' }),
    /\/api\/v1/,
  );
  assert.throws(() => new CallCaptureClient({ apiKey: ' ', baseUrl: BASE }), /apiKey/);
  assert.doesNotThrow(() => new CallCaptureClient({ apiKey: 'k', baseUrl: `${BASE}/` }));
});
