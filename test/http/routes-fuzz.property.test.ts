import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { type ConsoleClient, cheapPasswordHash, login, orgWithLogin } from '../helpers/app-api.ts';
import { insertApiKey, insertCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders } from '../helpers/http.ts';
import { type RouteInfo, routesOf } from '../helpers/routes.ts';

/**
 * Random bodies, headers, query strings and path segments thrown at EVERY route of the operator
 * listener and every console / telephony / web-app route of the public listener (the list is read
 * from Fastify's route tree, so new routes are covered without touching this file). Whatever comes
 * in, the answer is never a 5xx and never hangs; an error answer is the spec's error shape; an
 * unsigned telephony callback is 403. (/api/v1 GET /calls has its own property test.)
 */

let h: Harness;
let session: ConsoleClient;
let ids: string[] = [];

before(async () => {
  h = await createHarness();
  const { orgId, ownerId, email } = await orgWithLogin(h.db, cheapPasswordHash());
  session = await login(h, email);
  const callId = await insertCall(h.db, { orgId });
  const { keyId } = await insertApiKey(h.db, { orgId, userId: ownerId });
  ids = [orgId, ownerId, callId, keyId];
});
after(() => h.close());

const RUNS = Number(process.env.FUZZ_RUNS) || 20;
const TIMEOUT_MS = 10_000;

const segment = fc.oneof(
  { weight: 3, arbitrary: fc.constant('EXISTING') },
  { weight: 2, arbitrary: fc.uuid().map((u) => u) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '0',
      '-1',
      'null',
      '..',
      '%2e%2e',
      '%00',
      '%E0%A4%A',
      '%',
      'a%20b',
      'ü',
      '💥',
      ' ',
      'x'.repeat(300),
    ),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }).map(encodeURIComponent) },
);

const KEYS = [
  'name',
  'email',
  'password',
  'owner_email',
  'owner_password',
  'scopes',
  'user_id',
  'url',
  'event_types',
  'verification_mode',
  'emergency',
  'state',
  'failure_reason',
  'text',
  'language',
  'direction',
  'caller_phone',
  'customer_phone',
  'company_phone',
  'created_at',
  'reason',
  'pending_deletion_at',
  'deletion_kind',
  'phone',
  'first_name',
  'tags',
  'notes',
  'terms',
  'entitlement',
  'retention_days',
  'public_api_enabled',
  'rate_limit_per_hour',
  'account_sid',
  'auth_token',
  'provider',
  'number',
  'ring_to',
  'recording_mode',
  'agent_user_id',
  'agent_phone',
  'from_number',
  'status',
  '__proto__',
  'constructor',
];
const scalar = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    '+14155552671',
    'not-a-phone',
    'https://example.com/hook',
    'read.calls',
    '2026-06-15T10:00:00Z',
    'completed',
  ),
);
const value = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 3 }),
);
const jsonObject = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 6 });

const body = fc.oneof(
  { weight: 5, arbitrary: jsonObject.map((o) => ({ type: 'application/json', payload: JSON.stringify(o) })) },
  {
    weight: 2,
    arbitrary: fc.jsonValue().map((v) => ({ type: 'application/json', payload: JSON.stringify(v) })),
  },
  {
    weight: 1,
    arbitrary: fc.string({ maxLength: 60 }).map((s) => ({ type: 'application/json', payload: s })),
  },
  { weight: 1, arbitrary: fc.constant({ type: 'application/json', payload: '' }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'audio/mpeg',
          'multipart/form-data',
          'application/json; charset=latin1',
          'application/xml',
        ),
        fc.string({ maxLength: 60 }),
      )
      .map(([type, payload]) => ({ type, payload })),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ maxLength: 200 })
      .map((b) => ({ type: 'application/octet-stream', payload: Buffer.from(b) })),
  },
  { weight: 1, arbitrary: fc.constant(null) },
);

const query = fc
  .dictionary(
    fc.constantFrom('status', 'page', 'limit', 'event_type', 'dry_run', 'next', 'x', ''),
    fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('1', '-1', '999999999999', 'dead_lettered', 'true'),
    ),
    { maxKeys: 3 },
  )
  .map((q) => {
    const s = new URLSearchParams(q).toString();
    return s ? `?${s}` : '';
  });

const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'x-request-id',
    'accept',
    'x-forwarded-for',
    'x-twilio-signature',
    'accept-language',
    'origin',
    'referer',
  ),
  fc.oneof(
    fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
    fc.constantFrom('*/*', 'text/html', '::1', 'a'.repeat(200)),
  ),
  { maxKeys: 3 },
);

type Auth = 'good' | 'none' | 'garbage';
const auth = fc.constantFrom<Auth>('good', 'good', 'good', 'none', 'garbage');

function fill(url: string, segs: string[]): string {
  let i = 0;
  return url.replace(/:[A-Za-z_]+/g, () => {
    const s = segs[i++ % segs.length] as string;
    return s === 'EXISTING' ? (ids[i % ids.length] as string) : s;
  });
}

function headersFor(kind: 'operator' | 'public', a: Auth): Record<string, string> {
  if (a === 'none') return {};
  if (a === 'garbage')
    return kind === 'operator'
      ? { authorization: 'Bearer nope' }
      : { cookie: 'cc_session=nope', 'x-csrf-token': 'nope' };
  return kind === 'operator' ? { ...adminHeaders } : { cookie: session.cookie, 'x-csrf-token': session.csrf };
}

async function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} did not answer within ${TIMEOUT_MS} ms`)),
          TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function assertErrorShape(status: number, payload: string, contentType: unknown, what: string) {
  if (status < 400 || payload === '') return;
  if (!String(contentType).startsWith('application/json')) return; // web pages answer HTML error pages
  const body = JSON.parse(payload) as {
    success?: unknown;
    error?: { code?: unknown; message?: unknown };
    meta?: { timestamp?: unknown };
  };
  assert.equal(body.success, false, `${what}: ${payload}`);
  assert.match(String(body.error?.code), /^[A-Z][A-Z_]+$/, `${what}: ${payload}`);
  assert.equal(typeof body.error?.message, 'string', `${what}: ${payload}`);
  assert.equal(typeof body.meta?.timestamp, 'string', `${what}: ${payload}`);
}

function fuzzRoutes(
  app: () => FastifyInstance,
  kind: 'operator' | 'public',
  pick: (r: RouteInfo) => boolean,
) {
  return async () => {
    const routes = routesOf(app()).filter(pick);
    assert.ok(routes.length > 0);
    let requests = 0;
    for (const route of routes) {
      for (const method of route.methods.filter((m) => m !== 'HEAD' && m !== 'OPTIONS')) {
        await fc.assert(
          fc.asyncProperty(
            fc.array(segment, { minLength: 3, maxLength: 3 }),
            query,
            body,
            auth,
            extraHeaders,
            async (segs, q, b, a, extra) => {
              const url = fill(route.url, segs) + q;
              const what = `${method} ${url}`;
              const headers: Record<string, string> = { ...extra, ...headersFor(kind, a) };
              if (b) headers['content-type'] = b.type;
              const res = await withTimeout(
                app().inject({
                  method: method as 'GET',
                  url,
                  headers,
                  ...(b && method !== 'GET' ? { payload: b.payload } : {}),
                }),
                what,
              );
              requests++;
              assert.ok(
                res.statusCode < 500,
                `${what} answered ${res.statusCode}: ${res.body.slice(0, 300)}`,
              );
              if (route.url.startsWith('/telephony/')) {
                assert.equal(res.statusCode, 403, `${what}: an unsigned callback must be refused`);
              }
              assertErrorShape(res.statusCode, res.body, res.headers['content-type'], what);
            },
          ),
          { numRuns: RUNS },
        );
      }
    }
    console.log(`${kind}: ${routes.length} routes, ${requests} requests, none answered 5xx`);
  };
}

test(
  'every operator route: random input never answers 5xx or hangs; errors in the spec shape',
  fuzzRoutes(
    () => h.operator,
    'operator',
    (r) => r.url !== '/metrics',
  ),
);

test(
  'every console, web-app and telephony route: random input never answers 5xx or hangs; unsigned callbacks 403',
  fuzzRoutes(
    () => h.app,
    'public',
    (r) => r.url.startsWith('/app') || r.url.startsWith('/telephony'),
  ),
);
