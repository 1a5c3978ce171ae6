import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer } from '../helpers/http.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';

let h: Harness;
let key: string;
before(async () => {
  h = await createHarness();
  const { orgId, ownerId } = await insertOrg(h.db, { accountRateLimit: 1_000_000_000 });
  ({ key } = await insertApiKey(h.db, { orgId, userId: ownerId, rateLimit: 1_000_000_000 }));
  for (let i = 0; i < 5; i++) {
    await insertCall(h.db, {
      orgId,
      createdAt: new Date(Date.UTC(2026, 5, 10 + i)),
      direction: i % 2 ? 'outbound' : 'inbound',
    });
  }
});
after(async () => {
  await h.close();
});

/**
 * Runs per property: 300 random query strings and 150 valid filter combinations (were 600 and 300).
 * Each run is one request through authentication, the rate counters and the list query (~10 ms of
 * CPU on PGlite), and every run of the suite draws a new seed, so the space is covered across runs
 * rather than in one; a failure prints its seed and shrunk query for replay (fc.assert).
 */
const RANDOM_QUERIES = 300;
const VALID_COMBINATIONS = 150;

const NAMES = ['page', 'limit', 'dateFrom', 'dateTo', 'direction', 'status', 'phone'];

const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('Page', 'api_key', '', 'page[]', 'sort', '__proto__', 'constructor'),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

const value = fc.oneof(
  fc.constantFrom('1', '20', '100', '0', '-1', '101', '', '1e3', '0x10', ' 1', '1.0', '007'),
  fc.constantFrom(
    '2026-06-15',
    '2026-02-29',
    '2026-06-15T10:00:00Z',
    '2026-06-15T10:00+02:00',
    '0001-01-01T00:00+23:59',
  ),
  fc.constantFrom('9999-12-31T23:59:59.999-23:59', '2026-06-15T10:00:00 02:00', '2026-13-01', 'T', '24:00'),
  fc.constantFrom('inbound', 'outbound', 'new', 'to_call', 'contacted', 'qualified', 'NEW'),
  fc.constantFrom(
    '+1 (415) 555-2671',
    '020 7946 0958',
    '4155552671',
    '+',
    '((()))',
    '0000000',
    '%',
    '\u0000',
  ),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.integer().map(String),
  fc.double().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
);

/** One way of writing a component into a query string: encoded, raw where inject allows it, or mangled. */
const encoding = fc.constantFrom('encode', 'raw', 'mangle');

function write(s: string, how: string): string {
  let encoded: string;
  try {
    encoded = encodeURIComponent(s);
  } catch {
    encoded = '%ED%A0%80';
  }
  if (how === 'encode') return encoded;
  if (how === 'raw') return encoded.replace(/%2B/g, '+').replace(/%3A/g, ':').replace(/%20/g, '+');
  return `${encoded}%${encoded.length % 2 ? 'zz' : 'E0%A4'}`;
}

const pair = fc.tuple(name, value, encoding, encoding);
const query = fc
  .tuple(fc.array(pair, { maxLength: 6 }), fc.boolean(), fc.constantFrom('&', '&&', ';'))
  .map(([pairs, repeat, sep]) => {
    const all = repeat && pairs.length > 0 ? [...pairs, pairs[0]] : pairs;
    return all.map(([n, v, en, ev]) => `${write(n, en)}=${write(v, ev)}`).join(sep);
  });

test('random query strings on GET /calls never cause a 500: always 200, or 400 in the error shape', async () => {
  await fc.assert(
    fc.asyncProperty(query, async (q) => {
      const res = await h.app.inject({ method: 'GET', url: `/api/v1/calls?${q}`, headers: bearer(key) });
      assert.ok(res.statusCode === 200 || res.statusCode === 400, `${res.statusCode} for ?${q}: ${res.body}`);
      assertMatchesOpenApi('GET', '/calls', res);
      if (res.statusCode === 400) assert.equal(res.json().error.code, 'BAD_REQUEST');
    }),
    { numRuns: RANDOM_QUERIES },
  );
});

test('valid combinations of all filters always answer 200', async () => {
  const valid = fc.record(
    {
      page: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map(String),
      limit: fc.integer({ min: 1, max: 100 }).map(String),
      dateFrom: fc.date({
        min: new Date('0001-01-01T00:00:00Z'),
        max: new Date('9999-12-31T00:00:00Z'),
        noInvalidDate: true,
      }),
      direction: fc.constantFrom('inbound', 'outbound'),
      status: fc.constantFrom('new', 'to_call', 'contacted', 'qualified'),
      phone: fc.stringMatching(/^\+?[0-9]{3,15}$/),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(valid, async (v) => {
      const params = new URLSearchParams();
      for (const [k, x] of Object.entries(v)) params.set(k, x instanceof Date ? x.toISOString() : String(x));
      const res = await h.app.inject({ method: 'GET', url: `/api/v1/calls?${params}`, headers: bearer(key) });
      assert.equal(res.statusCode, 200, `?${params}: ${res.body}`);
      assertMatchesOpenApi('GET', '/calls', res);
    }),
    { numRuns: VALID_COMBINATIONS },
  );
});
