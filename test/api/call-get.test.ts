import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DatabaseError, type Db } from '../../src/db/types.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { insertAnalysis, insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer, errorJson, errorOf } from '../helpers/http.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';
import { call, rateHeaders } from '../helpers/rest.ts';

let h: Harness;
let orgId: string;
let key: string;
before(async () => {
  h = await createHarness();
  const org = await insertOrg(h.db);
  orgId = org.orgId;
  ({ key } = await insertApiKey(h.db, { orgId, userId: org.ownerId, scopes: ['read.calls'] }));
});
after(async () => {
  await h.close();
});

const get = (id: string, k = key) => call(h, '/calls/{id}', `/calls/${id}`, k);
const NOT_FOUND = { code: 'NOT_FOUND', message: 'No call with this id exists in your organization.' };

test('GET /calls/{id} returns the call in the envelope', async () => {
  const id = await insertCall(h.db, {
    orgId,
    direction: 'outbound',
    callerPhone: '+442079460958',
    customerE164: '+442079460958',
    customerNational: '020 7946 0958',
    companyE164: '+14155550100',
    callerName: null,
    crmStatus: 'contacted',
    reviewStatus: 'handled',
    outboundLifecycle: 'completed',
    duration: 120,
    createdAt: new Date('2026-06-14T08:30:00.250Z'),
  });
  await insertAnalysis(h.db, {
    callId: id,
    orgId,
    analysis: {
      caller_name: null,
      summary: 'Quote accepted.',
      service_needed: 'boiler',
      client_city: 'London',
    },
  });
  const res = await get(id);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    success: true,
    data: {
      call_id: id,
      direction: 'outbound',
      caller_phone: '+442079460958',
      customer_phone_e164: '+442079460958',
      customer_phone_national: '020 7946 0958',
      company_phone_e164: '+14155550100',
      app_url: `https://calls.example.test/app/calls/${id}`,
      caller_name: null,
      duration: 120,
      crm_status: 'contacted',
      review_status: 'handled',
      outbound_lifecycle: 'completed',
      transcript_processed: {
        caller_name: null,
        summary: 'Quote accepted.',
        service_needed: 'boiler',
        followup_email: null,
      },
      created_at: '2026-06-14T08:30:00.250Z',
    },
    meta: { timestamp: '2026-06-15T10:00:00.000Z' },
  });
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(rateHeaders(res).limit, '1000');
});

test('an upper-case call id finds the same call', async () => {
  const id = await insertCall(h.db, { orgId });
  const res = await get(id.toUpperCase());
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().data.call_id, id);
});

test('a call of another organization answers 404 NOT_FOUND, exactly like a call that does not exist', async () => {
  const other = await insertOrg(h.db);
  const theirs = await insertCall(h.db, { orgId: other.orgId });
  const otherKey = await insertApiKey(h.db, { orgId: other.orgId, userId: other.ownerId });
  assert.equal((await get(theirs, otherKey.key)).statusCode, 200);
  const res = await get(theirs);
  const missing = await get('6f1c1f0e-5a4b-4c3d-9e2f-1a2b3c4d5e6f');
  assert.equal(res.statusCode, 404);
  assert.deepEqual(errorOf(res), NOT_FOUND);
  assert.deepEqual(errorJson(res), errorJson(missing), 'the same body but for its own request id');
});

for (const malformed of [
  'abc',
  '123',
  '6f1c1f0e-5a4b-4c3d-9e2f-1a2b3c4d5e6',
  '6f1c1f0e5a4b4c3d9e2f1a2b3c4d5e6f0',
  '%20',
  "1' OR '1'='1",
]) {
  test(`a malformed id (${JSON.stringify(malformed)}) answers 404 NOT_FOUND`, async () => {
    const res = await get(encodeURIComponent(malformed));
    assert.equal(res.statusCode, 404);
    assert.deepEqual(errorOf(res), NOT_FOUND);
  });
}

test('an erased call answers 404', async () => {
  const id = await insertCall(h.db, { orgId, erasedAt: new Date('2026-06-14T00:00:00Z') });
  const res = await get(id);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(errorOf(res), NOT_FOUND);
});

test('a call in the trash or scheduled for deletion is still readable', async () => {
  const trashed = await insertCall(h.db, { orgId, trashedAt: new Date('2026-06-14T00:00:00Z') });
  const scheduled = await insertCall(h.db, { orgId, pendingDeletionAt: new Date('2026-07-14T00:00:00Z') });
  assert.equal((await get(trashed)).statusCode, 200);
  assert.equal((await get(scheduled)).statusCode, 200);
});

test('GET /calls/{id} refuses query parameters with 400 (before looking the call up)', async () => {
  const res = await call(h, '/calls/{id}', '/calls/not-a-uuid?fields=all', key);
  assert.equal(res.statusCode, 400);
  assert.deepEqual(errorOf(res), {
    code: 'BAD_REQUEST',
    message: 'Unknown query parameter "fields". This operation takes no query parameters.',
    param: 'fields',
  });
});

test('a trailing slash reads the same call', async () => {
  const id = await insertCall(h.db, { orgId });
  const res = await call(h, '/calls/{id}', `/calls/${id}/`, key);
  assert.equal(res.statusCode, 200);
});

test('a database failure answers 500 DATABASE_ERROR with the generic message and no SQL', async () => {
  const id = await insertCall(h.db, { orgId });
  const failing: Db = {
    ...h.db,
    query: async <T>(sql: string, params?: readonly unknown[]) => {
      if (sql.includes('FROM calls')) {
        throw new DatabaseError(
          'syntax error at or near "SELECT c.id, c.direction FROM calls c LEFT JOIN call_analyses"',
        );
      }
      return h.db.query<T>(sql, params);
    },
  };
  const app = await buildPublicApp({ ...h.deps, db: failing });
  try {
    const res = await app.inject({ method: 'GET', url: `/api/v1/calls/${id}`, headers: bearer(key) });
    assertMatchesOpenApi('GET', '/calls/{id}', res);
    assert.equal(res.statusCode, 500);
    assert.deepEqual(errorJson(res), {
      success: false,
      error: {
        code: 'DATABASE_ERROR',
        message: 'The service could not complete the request; retry with backoff.',
      },
      meta: { timestamp: '2026-06-15T10:00:00.000Z' },
    });
    assert.ok(!/SELECT|calls|syntax/i.test(JSON.stringify(res.json().error)));
    // The list query runs after authentication: that request was counted, so its 500 carries X-RateLimit-*.
    const list = await app.inject({ method: 'GET', url: '/api/v1/calls', headers: bearer(key) });
    assertMatchesOpenApi('GET', '/calls', list);
    assert.equal(list.statusCode, 500);
    assert.deepEqual(list.json().error, res.json().error);
    assert.ok(list.headers['x-ratelimit-remaining']);
  } finally {
    await app.close();
  }
});

test('GET /calls whose list fails: counted once, 403 before the 500, 400 before the 500', async () => {
  // The list is a query of its own after authentication: a failing list is counted, and the scope
  // (403) and query string (400) are checked before it runs.
  const failing: Db = {
    ...h.db,
    query: async <T>(sql: string, params?: readonly unknown[]) => {
      if (sql.includes('FROM calls')) throw new DatabaseError('list failed');
      return h.db.query<T>(sql, params);
    },
  };
  const other = await insertOrg(h.db);
  const { key: noScope } = await insertApiKey(h.db, {
    orgId: other.orgId,
    userId: other.ownerId,
    scopes: [],
  });
  const app = await buildPublicApp({ ...h.deps, db: failing });
  try {
    const first = await app.inject({
      method: 'GET',
      url: '/api/v1/calls?limit=5&page=3',
      headers: bearer(key),
    });
    assert.equal(first.statusCode, 500);
    const second = await app.inject({ method: 'GET', url: '/api/v1/calls', headers: bearer(key) });
    assert.equal(second.statusCode, 500);
    assert.equal(
      Number(first.headers['x-ratelimit-remaining']) - Number(second.headers['x-ratelimit-remaining']),
      1,
    );
    const forbidden = await app.inject({ method: 'GET', url: '/api/v1/calls', headers: bearer(noScope) });
    assert.equal(forbidden.statusCode, 403);
    const invalid = await app.inject({ method: 'GET', url: '/api/v1/calls?page=0', headers: bearer(key) });
    assert.equal(invalid.statusCode, 400);
  } finally {
    await app.close();
  }
});
