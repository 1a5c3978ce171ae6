import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { CRM_STATUSES, DIRECTIONS } from '../../src/domain/values.ts';
import { buildOpenApiDocument } from '../../src/http/public/api-v1/openapi/document.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import type { Json } from '../helpers/json.ts';
import { assertMatchesOpenApi, openApiDocument } from '../helpers/openapi-check.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

const doc: Json = openApiDocument;

test('GET /api/v1/openapi.json is served without authentication and equals the generated document', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  assert.deepEqual(res.json(), buildOpenApiDocument({ publicBaseUrl: 'https://calls.example.test' }));
  assert.equal(res.headers['x-ratelimit-limit'], undefined);
});

test('the document is OpenAPI 3.1, revision 0.14.0, with the deployment as server and Bearer security', () => {
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '0.14.0');
  assert.deepEqual(doc.servers, [
    { url: 'https://calls.example.test/api/v1', description: 'This deployment' },
  ]);
  assert.equal(doc.components.securitySchemes.apiKey.type, 'http');
  assert.equal(doc.components.securitySchemes.apiKey.scheme, 'bearer');
});

test('it has exactly the REST operations with their scopes', () => {
  const ops = Object.entries(doc.paths).flatMap(([path, item]: [string, Json]) =>
    Object.entries(item).map(([method, op]: [string, Json]) => [method, path, op.operationId, op.security]),
  );
  assert.deepEqual(ops, [
    ['get', '/me', 'getMe', [{ apiKey: [] }]],
    ['get', '/calls', 'listCalls', [{ apiKey: ['read.calls'] }]],
    ['post', '/calls', 'placeCall', [{ apiKey: ['write.calls'] }]],
    ['get', '/calls/{id}', 'getCall', [{ apiKey: ['read.calls'] }]],
    ['get', '/contacts', 'listContacts', [{ apiKey: ['read.contacts'] }]],
    ['post', '/contacts', 'createContact', [{ apiKey: ['write.contacts'] }]],
    ['get', '/contacts/{id}', 'getContact', [{ apiKey: ['read.contacts'] }]],
    ['patch', '/contacts/{id}', 'updateContact', [{ apiKey: ['write.contacts'] }]],
    ['post', '/test-helpers/inbound-calls', 'createInboundTestCall', [{ apiKey: ['write.calls'] }]],
    ['get', '/calls/{id}/recording-url', 'getCallRecordingUrl', [{ apiKey: ['read.recordings'] }]],
    ['get', '/calls/{id}/recording.mp3', 'downloadCallRecording', []],
  ]);
});

test('every key-authenticated operation documents 400, 401, 402, 403, 429, 500 and 503, and its success with X-RateLimit-* headers', () => {
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    const op = item.get;
    if (!op || op.security.length === 0) continue; // the writes' answers are checked by their own tests
    for (const s of ['200', '400', '401', '402', '403', '429', '500', '503'])
      assert.ok(op.responses[s], `${path} ${s}`);
    const ok = op.responses['200'].headers;
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Cache-Control']) {
      assert.equal(ok[name].required, true, `${path} ${name}`);
    }
  }
  assert.deepEqual(Object.keys(doc.paths['/calls/{id}'].get.responses), [
    '200',
    '400',
    '401',
    '402',
    '403',
    '404',
    '429',
    '500',
    '503',
  ]);
  assert.deepEqual(Object.keys(doc.paths['/calls/{id}/recording-url'].get.responses), [
    '200',
    '400',
    '401',
    '402',
    '403',
    '404',
    '409',
    '410',
    '429',
    '500',
    '503',
  ]);
  const limited = doc.components.responses.RateLimited.headers;
  for (const name of ['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
    assert.equal(limited[name].required, true, name);
  }
});

test('the listCalls parameters are generated from the zod schemas that validate them', () => {
  const all: Json[] = doc.paths['/calls'].get.parameters;
  assert.deepEqual(
    all.filter((p) => p.in === 'header').map((p) => [p.name, p.required]),
    [['X-Request-Id', false]],
  );
  const params = Object.fromEntries(all.filter((p) => p.in === 'query').map((p) => [p.name, p]));
  assert.deepEqual(Object.keys(params), [
    'page',
    'limit',
    'dateFrom',
    'dateTo',
    'direction',
    'status',
    'phone',
  ]);
  assert.deepEqual(params.page.schema, {
    default: 1,
    type: 'integer',
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
  });
  assert.deepEqual(params.limit.schema, { default: 20, type: 'integer', minimum: 1, maximum: 100 });
  assert.deepEqual(params.direction.schema, { type: 'string', enum: [...DIRECTIONS] });
  assert.deepEqual(params.status.schema, { type: 'string', enum: [...CRM_STATUSES] });
  assert.equal(params.phone.schema.minLength, 3);
  assert.equal(params.phone.schema.maxLength, 40);
  assert.deepEqual(
    params.dateFrom.schema.anyOf.map((s: Json) => s.format),
    ['date', 'date-time'],
  );
  for (const p of Object.values<Json>(params)) assert.equal(p.required, false);
});

test('the Call schema requires all fourteen fields and transcript_processed has exactly four', () => {
  const call = doc.components.schemas.Call;
  assert.deepEqual(call.required, [
    'call_id',
    'direction',
    'caller_phone',
    'customer_phone_e164',
    'customer_phone_national',
    'company_phone_e164',
    'app_url',
    'caller_name',
    'duration',
    'crm_status',
    'review_status',
    'outbound_lifecycle',
    'transcript_processed',
    'created_at',
  ]);
  const tp = doc.components.schemas.TranscriptProcessed;
  assert.deepEqual(Object.keys(tp.properties), [
    'caller_name',
    'summary',
    'service_needed',
    'followup_email',
  ]);
  assert.equal(tp.additionalProperties, false);
});

test('assertMatchesOpenApi fails on a body, status or header the document does not allow', () => {
  const headers = {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'x-ratelimit-limit': '1000',
    'x-ratelimit-remaining': '5',
    'x-ratelimit-reset': '2026-06-15T11:00:00.000Z',
    'x-request-id': 'req-1',
  };
  const body = (data: unknown) =>
    JSON.stringify({ success: true, data, meta: { timestamp: '2026-06-15T10:00:00.000Z' } });
  const me = {
    api_key_id: '6f1c1f0e-5a4b-4c3d-9e2f-1a2b3c4d5e6f',
    user_id: '6f1c1f0e-5a4b-4c3d-9e2f-1a2b3c4d5e6f',
    organization_id: '6f1c1f0e-5a4b-4c3d-9e2f-1a2b3c4d5e6f',
    scopes: [],
    environment: 'live',
  };
  assertMatchesOpenApi('GET', '/me', { statusCode: 200, headers, body: body(me) });
  assert.throws(() =>
    assertMatchesOpenApi('GET', '/me', {
      statusCode: 200,
      headers,
      body: body({ ...me, scopes: undefined }),
    }),
  );
  assert.throws(() =>
    assertMatchesOpenApi('GET', '/me', { statusCode: 200, headers, body: body({ ...me, extra: 1 }) }),
  );
  assert.throws(() => assertMatchesOpenApi('GET', '/me', { statusCode: 418, headers, body: body(me) }));
  const { 'x-request-id': _, ...noRequestId } = headers;
  assert.throws(() =>
    assertMatchesOpenApi('GET', '/me', { statusCode: 200, headers: noRequestId, body: body(me) }),
  );
  assert.throws(() =>
    assertMatchesOpenApi('GET', '/me', {
      statusCode: 200,
      headers: { ...headers, 'x-request-id': 'not allowed' },
      body: body(me),
    }),
  );
  assert.throws(() =>
    assertMatchesOpenApi('GET', '/me', {
      statusCode: 200,
      headers: { ...headers, 'x-ratelimit-limit': undefined },
      body: body(me),
    }),
  );
  assert.throws(() =>
    assertMatchesOpenApi('GET', '/me', {
      statusCode: 200,
      headers: { ...headers, 'x-ratelimit-reset': 'soon' },
      body: body(me),
    }),
  );
  assert.throws(() => assertMatchesOpenApi('POST', '/me', { statusCode: 200, headers, body: body(me) }));
});

test('the document passes redocly lint (npm run lint:openapi)', () => {
  const r = spawnSync(process.execPath, ['scripts/lint-openapi.ts'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
});
