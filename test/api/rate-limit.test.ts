import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deleteExpiredRateLimitWindows } from '../../src/accounts/rate-limit-windows.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { setPublicApiEnabled } from '../../src/maintenance.ts';
import { insertApiKey, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, bearer, errorJson, errorOf } from '../helpers/http.ts';
import { assertErrorShape, assertMatchesOpenApi } from '../helpers/openapi-check.ts';
import { call, rateHeaders } from '../helpers/rest.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

/** A fresh organization and key; each test also moves the clock to an hour of its own. */
async function freshKey(o: { rateLimit?: number; accountRateLimit?: number } = {}) {
  const org = await insertOrg(h.db, { accountRateLimit: o.accountRateLimit });
  const k = await insertApiKey(h.db, { orgId: org.orgId, userId: org.ownerId, rateLimit: o.rateLimit });
  return { ...org, ...k };
}

const count = async (bucket: string) =>
  (await h.db.query<{ count: number }>('SELECT count FROM rate_limit_windows WHERE bucket = $1', [bucket]))
    .rows[0]?.count;

test('the 1000th request of a key in an hour succeeds and the 1001st answers 429 with Retry-After and X-RateLimit-*', async () => {
  h.clock.set('2026-06-15T12:20:00.000Z');
  const { key } = await freshKey();
  for (let i = 1; i <= 999; i++) {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });
    assert.equal(res.statusCode, 200, `request ${i}`);
  }
  const thousandth = await call(h, '/me', '/me', key);
  assert.equal(thousandth.statusCode, 200);
  assert.deepEqual(rateHeaders(thousandth), {
    limit: '1000',
    remaining: '0',
    reset: '2026-06-15T13:00:00.000Z',
    retryAfter: undefined,
  });
  h.clock.set('2026-06-15T12:20:00.400Z');
  const over = await call(h, '/me', '/me', key);
  assert.equal(over.statusCode, 429);
  assert.deepEqual(errorJson(over), {
    success: false,
    error: {
      code: 'RATE_LIMITED',
      message:
        "Rate limit exceeded: this API key's limit of 1000 requests per hour. The window resets on the UTC hour; retry after Retry-After seconds.",
    },
    meta: { timestamp: '2026-06-15T12:20:00.400Z' },
  });
  assert.deepEqual(rateHeaders(over), {
    limit: '1000',
    remaining: '0',
    reset: '2026-06-15T13:00:00.000Z',
    retryAfter: '2400',
  });
});

test('the window resets on the UTC hour', async () => {
  h.clock.set('2026-06-15T14:59:59.000Z');
  const { key } = await freshKey({ rateLimit: 2 });
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 200);
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 200);
  const over = await call(h, '/me', '/me', key);
  assert.equal(over.statusCode, 429);
  assert.equal(rateHeaders(over).retryAfter, '1');
  h.clock.set('2026-06-15T15:00:00.000Z');
  const next = await call(h, '/me', '/me', key);
  assert.equal(next.statusCode, 200);
  assert.deepEqual(rateHeaders(next), {
    limit: '2',
    remaining: '1',
    reset: '2026-06-15T16:00:00.000Z',
    retryAfter: undefined,
  });
});

test("a key's rate_limit_per_hour overrides the default 1000", async () => {
  h.clock.set('2026-06-15T16:10:00.000Z');
  const { key } = await freshKey({ rateLimit: 3 });
  for (const remaining of ['2', '1', '0']) {
    const res = await call(h, '/me', '/me', key);
    assert.equal(res.statusCode, 200);
    assert.equal(rateHeaders(res).remaining, remaining);
    assert.equal(rateHeaders(res).limit, '3');
  }
  assert.equal((await call(h, '/me', '/me', key)).statusCode, 429);
});

test('every request counts whatever its status: 400, 403, 404 and 429 answers all use up the window', async () => {
  h.clock.set('2026-06-15T17:00:00.000Z');
  const { key, keyId } = await freshKey({ rateLimit: 5 });
  const statuses = [
    (await call(h, '/calls', '/calls?page=0', key)).statusCode,
    (await call(h, '/calls/{id}', '/calls/00000000-0000-4000-8000-000000000000', key)).statusCode,
    (
      await call(
        h,
        '/calls/{id}/recording-url',
        '/calls/00000000-0000-4000-8000-000000000000/recording-url',
        key,
      )
    ).statusCode,
    (await call(h, '/me', '/me', key)).statusCode,
    (await call(h, '/me', '/me', key)).statusCode,
    (await call(h, '/me', '/me', key)).statusCode,
    (await call(h, '/me', '/me', key)).statusCode,
  ];
  assert.deepEqual(statuses, [400, 404, 404, 200, 200, 429, 429]);
  assert.equal(await count(`key:${keyId}`), 7);
});

test('unknown routes (404), wrong methods (405) and maintenance answers (503) use up the window too', async () => {
  h.clock.set('2026-06-15T17:40:00.000Z');
  const { key, keyId, orgId } = await freshKey({ rateLimit: 5 });
  const headersAt = (remaining: string, retryAfter?: string) => ({
    limit: '5',
    remaining,
    reset: '2026-06-15T18:00:00.000Z',
    retryAfter,
  });
  const inject = (method: 'GET' | 'POST', url: string) =>
    h.app.inject({ method, url: `/api/v1${url}`, headers: bearer(key) });

  const first = await call(h, '/me', '/me', key);
  assert.deepEqual([first.statusCode, rateHeaders(first)], [200, headersAt('4')]);
  const unknown = await inject('GET', '/webhooks');
  assertErrorShape(unknown, 404, 'NOT_FOUND');
  assert.deepEqual(rateHeaders(unknown), headersAt('3'));
  const wrongMethod = await inject('POST', '/me');
  assertErrorShape(wrongMethod, 405, 'METHOD_NOT_ALLOWED');
  assert.deepEqual(rateHeaders(wrongMethod), headersAt('2'));
  await setPublicApiEnabled(h.db, false, h.clock.now());
  try {
    const down = await call(h, '/calls', '/calls', key);
    assert.equal(down.statusCode, 503);
    assert.deepEqual(rateHeaders(down), headersAt('1'));
  } finally {
    await setPublicApiEnabled(h.db, true, h.clock.now());
  }
  const last = await call(h, '/me', '/me', key);
  assert.deepEqual([last.statusCode, rateHeaders(last)], [200, headersAt('0')]);
  const over = await inject('GET', '/webhooks');
  assertErrorShape(over, 429, 'RATE_LIMITED');
  assert.deepEqual(rateHeaders(over), headersAt('0', '1200'));
  assert.equal(await count(`key:${keyId}`), 6);
  assert.equal(await count(`org:${orgId}`), 6);
});

test('403 and 402 answers are counted too', async () => {
  h.clock.set('2026-06-15T17:30:00.000Z');
  const org = await insertOrg(h.db, { entitlement: 'inactive' });
  const k = await insertApiKey(h.db, { orgId: org.orgId, userId: org.ownerId, scopes: [] });
  assert.equal((await call(h, '/calls', '/calls', k.key)).statusCode, 402);
  await h.db.query(`UPDATE organizations SET entitlement = 'active' WHERE id = $1`, [org.orgId]);
  const res = await call(h, '/calls', '/calls', k.key);
  assert.equal(res.statusCode, 403);
  assert.equal(rateHeaders(res).remaining, '998');
  assert.equal(await count(`org:${org.orgId}`), 2);
});

test('the account limit is shared by all keys of the organization', async () => {
  h.clock.set('2026-06-15T18:00:00.000Z');
  const org = await insertOrg(h.db, { accountRateLimit: 4 });
  const a = await insertApiKey(h.db, { orgId: org.orgId, userId: org.ownerId });
  const b = await insertApiKey(h.db, { orgId: org.orgId, userId: org.ownerId });
  assert.equal((await call(h, '/me', '/me', a.key)).statusCode, 200);
  assert.equal((await call(h, '/me', '/me', b.key)).statusCode, 200);
  assert.equal((await call(h, '/me', '/me', a.key)).statusCode, 200);
  const fourth = await call(h, '/me', '/me', b.key);
  assert.equal(fourth.statusCode, 200);
  // The account is the binding limit: it has fewer requests left than the key.
  assert.deepEqual(rateHeaders(fourth), {
    limit: '4',
    remaining: '0',
    reset: '2026-06-15T19:00:00.000Z',
    retryAfter: undefined,
  });
  const over = await call(h, '/me', '/me', a.key);
  assert.equal(over.statusCode, 429);
  assert.equal(
    errorOf(over).message,
    "Rate limit exceeded: the account's limit of 4 requests per hour (all its keys together). The window resets on the UTC hour; retry after Retry-After seconds.",
  );
  assert.equal(rateHeaders(over).retryAfter, '3600');
  assert.equal((await call(h, '/me', '/me', b.key)).statusCode, 429);
});

test("the headers show the key's limit while the key has fewer requests left than the account", async () => {
  h.clock.set('2026-06-15T19:00:00.000Z');
  const { key } = await freshKey({ rateLimit: 10, accountRateLimit: 5000 });
  assert.deepEqual(rateHeaders(await call(h, '/me', '/me', key)), {
    limit: '10',
    remaining: '9',
    reset: '2026-06-15T20:00:00.000Z',
    retryAfter: undefined,
  });
});

test("one key's rejected requests still count against the account (every request counts)", async () => {
  h.clock.set('2026-06-15T20:00:00.000Z');
  const org = await insertOrg(h.db, { accountRateLimit: 10 });
  const a = await insertApiKey(h.db, { orgId: org.orgId, userId: org.ownerId, rateLimit: 2 });
  const b = await insertApiKey(h.db, { orgId: org.orgId, userId: org.ownerId });
  const codes = [];
  for (let i = 0; i < 4; i++) codes.push((await call(h, '/me', '/me', a.key)).statusCode);
  assert.deepEqual(codes, [200, 200, 429, 429]);
  const res = await call(h, '/me', '/me', b.key);
  assert.equal(res.statusCode, 200);
  assert.deepEqual([rateHeaders(res).limit, rateHeaders(res).remaining], ['10', '5']);
});

test('failed authentications are not counted against any key or account and carry no X-RateLimit headers', async () => {
  h.clock.set('2026-06-15T21:00:00.000Z');
  const res = await call(h, '/me', '/me', 'cc_live_unknown');
  assert.equal(res.statusCode, 401);
  assert.equal(res.headers['x-ratelimit-remaining'], undefined);
  const { rows } = await h.db.query(
    `SELECT 1 FROM rate_limit_windows WHERE window_start = $1 AND bucket NOT LIKE 'authfail:%'`,
    [new Date('2026-06-15T21:00:00.000Z')],
  );
  assert.equal(rows.length, 0);
});

test('two API nodes on one database share the counters', async () => {
  h.clock.set('2026-06-15T22:00:00.000Z');
  const { key } = await freshKey({ rateLimit: 3 });
  const second = await buildPublicApp(h.deps);
  try {
    assert.equal((await call(h, '/me', '/me', key)).statusCode, 200);
    const r2 = await second.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });
    assertMatchesOpenApi('GET', '/me', r2);
    assert.equal(r2.headers['x-ratelimit-remaining'], '1');
    assert.equal((await call(h, '/me', '/me', key)).statusCode, 200);
    const r4 = await second.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });
    assert.equal(r4.statusCode, 429);
  } finally {
    await second.close();
  }
});

test('concurrent requests are each counted exactly once', async () => {
  h.clock.set('2026-06-15T23:00:00.000Z');
  const { key, keyId } = await freshKey({ rateLimit: 20 });
  const all = await Promise.all(
    Array.from({ length: 25 }, () =>
      h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) }),
    ),
  );
  const codes = all.map((r) => r.statusCode).sort();
  assert.deepEqual(codes, [...Array(20).fill(200), ...Array(5).fill(429)]);
  assert.equal(await count(`key:${keyId}`), 25);
});

test('deleteExpiredRateLimitWindows removes windows older than the previous UTC hour', async () => {
  await h.db.query('DELETE FROM rate_limit_windows');
  const rows: [string, string][] = [
    ['key:old', '2026-06-16T07:00:00Z'],
    ['authfail:1.2.3.4', '2026-06-16T07:59:00Z'],
    ['key:previous', '2026-06-16T08:00:00Z'],
    ['key:current', '2026-06-16T09:00:00Z'],
    ['authfail:5.6.7.8', '2026-06-16T09:12:00Z'],
  ];
  for (const [bucket, at] of rows) {
    await h.db.query('INSERT INTO rate_limit_windows (bucket, window_start, count) VALUES ($1, $2, 1)', [
      bucket,
      new Date(at),
    ]);
  }
  assert.equal(await deleteExpiredRateLimitWindows(h.db, new Date('2026-06-16T09:30:00Z')), 2);
  const left = await h.db.query<{ bucket: string }>('SELECT bucket FROM rate_limit_windows ORDER BY bucket');
  assert.deepEqual(
    left.rows.map((r) => r.bucket),
    ['authfail:5.6.7.8', 'key:current', 'key:previous'],
  );
});

test('an organization provisioned without a limit gets the default of 5000 requests per hour, enforced', async () => {
  h.clock.set('2026-06-16T01:10:00.000Z');
  const created = await admin(h, 'POST', '/organizations', {
    name: 'Default Limits Ltd',
    owner_email: 'owner@default-limits.example',
    owner_password: 'long-enough-password',
  });
  assert.equal(created.statusCode, 201);
  const { organization_id: orgId, owner_user_id: userId } = created.json();
  // A key allowing far more than the account, so that only the account's limit can bind.
  const { key } = await insertApiKey(h.db, { orgId, userId, rateLimit: 100_000 });
  const first = await call(h, '/me', '/me', key);
  assert.deepEqual(rateHeaders(first), {
    limit: '5000',
    remaining: '4999',
    reset: '2026-06-16T02:00:00.000Z',
    retryAfter: undefined,
  });
  // Requests 2 to 4,999 of this hour, counted directly instead of sent one by one.
  await h.db.query(
    `UPDATE rate_limit_windows SET count = count + 4998 WHERE bucket = $1 AND window_start = $2`,
    [`org:${orgId}`, new Date('2026-06-16T01:00:00.000Z')],
  );
  const fiveThousandth = await call(h, '/me', '/me', key);
  assert.equal(fiveThousandth.statusCode, 200);
  assert.deepEqual([rateHeaders(fiveThousandth).limit, rateHeaders(fiveThousandth).remaining], ['5000', '0']);
  const over = await call(h, '/me', '/me', key);
  assert.equal(over.statusCode, 429);
  assert.equal(
    errorOf(over).message,
    "Rate limit exceeded: the account's limit of 5000 requests per hour (all its keys together). The window resets on the UTC hour; retry after Retry-After seconds.",
  );
  assert.deepEqual(rateHeaders(over), {
    limit: '5000',
    remaining: '0',
    reset: '2026-06-16T02:00:00.000Z',
    retryAfter: '3000',
  });
});
