import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type CallRow, insertAnalysis, insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { errorOf } from '../helpers/http.ts';
import type { Json } from '../helpers/json.ts';
import { call, rateHeaders } from '../helpers/rest.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

/** A fresh organization with a read.calls key, and calls created from the given rows. */
async function orgWithCalls(rows: Omit<CallRow, 'orgId'>[] = []) {
  const { orgId, ownerId } = await insertOrg(h.db);
  const { key } = await insertApiKey(h.db, {
    orgId,
    userId: ownerId,
    scopes: ['read.calls'],
    rateLimit: 100_000,
  });
  const ids: string[] = [];
  for (const r of rows) ids.push(await insertCall(h.db, { ...r, orgId }));
  return { orgId, key, ids };
}

const list = async (key: string, query = '') => {
  const res = await call(h, '/calls', `/calls${query}`, key);
  return { res, body: res.json() };
};
const idsOf = (body: Json): string[] => body.data.items.map((c: Json) => c.call_id);
const at = (s: string) => new Date(s);

test('GET /calls returns the full Call object, every field present', async () => {
  const { orgId, key, ids } = await orgWithCalls([
    {
      direction: 'inbound',
      callerPhone: '+14155552671',
      customerE164: '+14155552671',
      customerNational: '(415) 555-2671',
      companyE164: '+14155550100',
      callerName: 'Dana Scully',
      crmStatus: 'to_call',
      reviewStatus: 'needs_review',
      duration: 42.5,
      createdAt: at('2026-06-10T09:00:00.000Z'),
    },
  ]);
  await insertAnalysis(h.db, {
    callId: ids[0],
    orgId,
    analysis: {
      caller_name: 'Dana',
      summary: 'Leaking pipe under the sink.',
      subject: 'Leak',
      service_needed: 'plumbing',
      lead_score: 8,
      proposal_items: [{ kind: 'callback' }],
    },
    followupEmail: { subject: 'Your leak', body: 'Hello Dana', language: 'en', source: 'internal-model-x' },
  });
  const { res, body } = await list(key);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(body, {
    success: true,
    data: {
      items: [
        {
          call_id: ids[0],
          direction: 'inbound',
          caller_phone: '+14155552671',
          customer_phone_e164: '+14155552671',
          customer_phone_national: '(415) 555-2671',
          company_phone_e164: '+14155550100',
          app_url: `https://calls.example.test/app/calls/${ids[0]}`,
          caller_name: 'Dana Scully',
          duration: 42.5,
          crm_status: 'to_call',
          review_status: 'needs_review',
          outbound_lifecycle: null,
          transcript_processed: {
            caller_name: 'Dana',
            summary: 'Leaking pipe under the sink.',
            service_needed: 'plumbing',
            followup_email: { subject: 'Your leak', body: 'Hello Dana', language: 'en' },
          },
          created_at: '2026-06-10T09:00:00.000Z',
        },
      ],
      has_more: false,
      page: 1,
      limit: 20,
    },
    meta: { timestamp: h.clock.now().toISOString() },
  });
  assert.ok(!res.body.includes('raw transcript'));
});

test('a call without analysis has transcript_processed null and nullable fields null', async () => {
  const { key, ids } = await orgWithCalls([
    {
      direction: 'outbound',
      callerPhone: 'anonymous',
      customerE164: null,
      customerNational: null,
      companyE164: null,
      outboundLifecycle: 'agent_only',
    },
  ]);
  const { body } = await list(key);
  assert.deepEqual(body.data.items[0], {
    call_id: ids[0],
    direction: 'outbound',
    caller_phone: 'anonymous',
    customer_phone_e164: null,
    customer_phone_national: null,
    company_phone_e164: null,
    app_url: `https://calls.example.test/app/calls/${ids[0]}`,
    caller_name: null,
    duration: null,
    crm_status: 'new',
    review_status: null,
    outbound_lifecycle: 'agent_only',
    transcript_processed: null,
    created_at: '2026-06-01T00:00:00.000Z',
  });
});

test('transcript_processed has exactly four keys: missing and non-string analysis values are null, a draft without language falls back to the analysis language', async () => {
  const { orgId, key, ids } = await orgWithCalls([{ createdAt: at('2026-06-02T00:00:00Z') }, {}]);
  await insertAnalysis(h.db, {
    callId: ids[0],
    orgId,
    analysis: { summary: 42, caller_name: null },
    followupEmail: null,
  });
  await insertAnalysis(h.db, {
    callId: ids[1],
    orgId,
    analysis: {},
    followupEmail: { subject: 'S', body: 'B' },
    language: 'de',
  });
  const { body } = await list(key);
  assert.deepEqual(
    body.data.items.map((c: Json) => c.transcript_processed),
    [
      { caller_name: null, summary: null, service_needed: null, followup_email: null },
      {
        caller_name: null,
        summary: null,
        service_needed: null,
        followup_email: { subject: 'S', body: 'B', language: 'de' },
      },
    ],
  );
});

test('calls are listed newest first, created_at ties broken by call_id descending', async () => {
  const tie = at('2026-06-13T12:00:00.000Z');
  const { key, ids } = await orgWithCalls([
    { createdAt: at('2026-06-10T00:00:00Z') },
    { id: '00000000-0000-4000-8000-000000000001', createdAt: tie },
    { id: '00000000-0000-4000-8000-000000000003', createdAt: tie },
    { id: '00000000-0000-4000-8000-000000000002', createdAt: tie },
    { createdAt: at('2026-06-14T00:00:00Z') },
  ]);
  const { body } = await list(key);
  assert.deepEqual(idsOf(body), [ids[4], ids[2], ids[3], ids[1], ids[0]]);
  // Pages of 2 walk the same order without overlap or gap.
  const pages = [];
  for (let page = 1; page <= 3; page++) pages.push(...idsOf((await list(key, `?limit=2&page=${page}`)).body));
  assert.deepEqual(pages, [ids[4], ids[2], ids[3], ids[1], ids[0]]);
});

test('later pages keep the filters and the tie order: each page starts where the previous one ended', async () => {
  // Pages after the first read from their first call on (capture/call-list.ts): the calls between
  // two pages' calls that the filters exclude (another status, erased) must stay excluded, and a
  // created_at shared across a page boundary must neither repeat nor lose a call.
  const tie = at('2026-06-13T12:00:00.000Z');
  const id = (n: number) => `00000000-0000-4000-8000-0000000a000${n}`;
  const { key, ids } = await orgWithCalls([
    { id: id(1), createdAt: tie, crmStatus: 'qualified' },
    { id: id(2), createdAt: tie, crmStatus: 'new' },
    { id: id(3), createdAt: tie, crmStatus: 'qualified', erasedAt: at('2026-06-20T00:00:00Z') },
    { id: id(4), createdAt: tie, crmStatus: 'qualified' },
    { id: id(5), createdAt: at('2026-06-12T00:00:00Z'), crmStatus: 'qualified' },
    { id: id(6), createdAt: at('2026-06-14T00:00:00Z'), crmStatus: 'qualified' },
    { id: id(7), createdAt: at('2026-06-13T18:00:00Z'), crmStatus: 'new' },
    { id: id(8), createdAt: at('2026-06-12T12:00:00Z'), crmStatus: 'new' },
    {
      id: id(9),
      createdAt: at('2026-06-12T06:00:00Z'),
      crmStatus: 'qualified',
      erasedAt: at('2026-06-20T00:00:00Z'),
    },
  ]);
  const walk = async (query: string, limit: number) => {
    const seen = [];
    for (let page = 2; page <= 5; page++)
      seen.push(...idsOf((await list(key, `?${query}&limit=${limit}&page=${page}`)).body));
    return [...idsOf((await list(key, `?${query}&limit=${limit}`)).body), ...seen];
  };
  const qualified = [ids[5], ids[3], ids[0], ids[4]];
  assert.deepEqual(await walk('status=qualified', 1), qualified);
  assert.deepEqual(await walk('status=qualified', 2), qualified);
  assert.deepEqual(await walk('dateFrom=2026-06-13&dateTo=2026-06-13', 1), [ids[6], ids[3], ids[1], ids[0]]);
  const past = (await list(key, '?status=qualified&limit=2&page=3')).body.data;
  assert.deepEqual([past.items.length, past.has_more], [0, false]);
});

test('pagination: has_more is exact, also when the last page is full', async () => {
  const rows = Array.from({ length: 4 }, (_, i) => ({ createdAt: at(`2026-06-0${i + 1}T00:00:00Z`) }));
  const { key, ids } = await orgWithCalls(rows);
  const p1 = (await list(key, '?limit=2')).body;
  assert.deepEqual(
    [idsOf(p1), p1.data.has_more, p1.data.page, p1.data.limit],
    [[ids[3], ids[2]], true, 1, 2],
  );
  const p2 = (await list(key, '?limit=2&page=2')).body;
  assert.deepEqual([idsOf(p2), p2.data.has_more, p2.data.page], [[ids[1], ids[0]], false, 2]);
  const p3 = (await list(key, '?limit=2&page=3')).body;
  assert.deepEqual([idsOf(p3), p3.data.has_more], [[], false]);
  const all = (await list(key, '?limit=4')).body;
  assert.deepEqual([all.data.items.length, all.data.has_more], [4, false]);
  const three = (await list(key, '?limit=3')).body;
  assert.deepEqual([three.data.items.length, three.data.has_more], [3, true]);
});

test('the default page size is 20 and the maximum 100', async () => {
  const rows = Array.from({ length: 101 }, (_, i) => ({ createdAt: new Date(Date.UTC(2026, 5, 1, 0, i)) }));
  const { key } = await orgWithCalls(rows);
  const d = (await list(key)).body.data;
  assert.deepEqual([d.items.length, d.has_more, d.limit], [20, true, 20]);
  const max = (await list(key, '?limit=100')).body.data;
  assert.deepEqual([max.items.length, max.has_more], [100, true]);
  const last = (await list(key, '?limit=100&page=2')).body.data;
  assert.deepEqual([last.items.length, last.has_more], [1, false]);
  const one = (await list(key, '?limit=1&page=101')).body.data;
  assert.deepEqual([one.items.length, one.has_more], [1, false]);
});

test("only the key's organization's calls are listed, erased calls never, trashed and scheduled ones still", async () => {
  const other = await orgWithCalls([{}]);
  const { key, ids } = await orgWithCalls([
    { createdAt: at('2026-06-01T00:00:00Z') },
    { createdAt: at('2026-06-02T00:00:00Z'), erasedAt: at('2026-06-05T00:00:00Z') },
    { createdAt: at('2026-06-03T00:00:00Z'), trashedAt: at('2026-06-05T00:00:00Z') },
    { createdAt: at('2026-06-04T00:00:00Z'), pendingDeletionAt: at('2026-07-05T00:00:00Z') },
  ]);
  const { body } = await list(key);
  assert.deepEqual(idsOf(body), [ids[3], ids[2], ids[0]]);
  assert.ok(!idsOf(body).includes(other.ids[0]));
});

test('direction and status filter on direction and crm_status, together with the other filters', async () => {
  const { key, ids } = await orgWithCalls([
    { direction: 'inbound', crmStatus: 'new', createdAt: at('2026-06-01T00:00:00Z') },
    { direction: 'outbound', crmStatus: 'new', createdAt: at('2026-06-02T00:00:00Z') },
    { direction: 'inbound', crmStatus: 'qualified', createdAt: at('2026-06-03T00:00:00Z') },
    { direction: 'outbound', crmStatus: 'qualified', createdAt: at('2026-06-04T00:00:00Z') },
  ]);
  assert.deepEqual(idsOf((await list(key, '?direction=inbound')).body), [ids[2], ids[0]]);
  assert.deepEqual(idsOf((await list(key, '?direction=outbound')).body), [ids[3], ids[1]]);
  assert.deepEqual(idsOf((await list(key, '?status=qualified')).body), [ids[3], ids[2]]);
  assert.deepEqual(idsOf((await list(key, '?status=to_call')).body), []);
  assert.deepEqual(idsOf((await list(key, '?status=new&direction=outbound&dateFrom=2026-06-02')).body), [
    ids[1],
  ]);
});

test('a date-only dateTo includes that whole UTC day and a date-only dateFrom starts at 00:00Z', async () => {
  const { key, ids } = await orgWithCalls([
    { createdAt: at('2026-06-10T23:59:59.999Z') },
    { createdAt: at('2026-06-11T00:00:00.000Z') },
    { createdAt: at('2026-06-11T23:59:59.999Z') },
    { createdAt: at('2026-06-12T00:00:00.000Z') },
  ]);
  assert.deepEqual(idsOf((await list(key, '?dateFrom=2026-06-11&dateTo=2026-06-11')).body), [ids[2], ids[1]]);
  assert.deepEqual(idsOf((await list(key, '?dateTo=2026-06-10')).body), [ids[0]]);
  assert.deepEqual(idsOf((await list(key, '?dateFrom=2026-06-12')).body), [ids[3]]);
});

test('date-time bounds are inclusive and honour Z and numeric offsets', async () => {
  const { key, ids } = await orgWithCalls([
    { createdAt: at('2026-06-10T08:00:00.000Z') },
    { createdAt: at('2026-06-10T09:00:00.000Z') },
    { createdAt: at('2026-06-10T10:00:00.000Z') },
  ]);
  assert.deepEqual(
    idsOf((await list(key, '?dateFrom=2026-06-10T09:00:00Z&dateTo=2026-06-10T10:00:00Z')).body),
    [ids[2], ids[1]],
  );
  assert.deepEqual(
    idsOf((await list(key, '?dateFrom=2026-06-10T11:00%2B02:00&dateTo=2026-06-10T11:30%2B02:00')).body),
    [ids[1]],
  );
  assert.deepEqual(idsOf((await list(key, '?dateTo=2026-06-10T03:00:00.000-05:00')).body), [ids[0]]);
  // An unencoded + arrives as a space: read as the offset sign.
  assert.deepEqual(
    idsOf((await list(key, '?dateFrom=2026-06-10T11:00:00+02:00&dateTo=2026-06-10T11:00:00+02:00')).body),
    [ids[1]],
  );
  assert.deepEqual(idsOf((await list(key, '?dateFrom=2026-06-10T09:00:00.000001Z')).body), [ids[2], ids[1]]);
});

test('the phone filter matches trailing digits whatever the formatting, plus national numbers with a trunk 0', async () => {
  const other = await orgWithCalls([{ customerE164: '+14155552671' }]);
  const { key, ids } = await orgWithCalls([
    { customerE164: '+14155552671', createdAt: at('2026-06-01T00:00:00Z') },
    {
      customerE164: '+442079460958',
      customerNational: '020 7946 0958',
      createdAt: at('2026-06-02T00:00:00Z'),
    },
    {
      customerE164: '+390612345678',
      customerNational: '06 1234 5678',
      createdAt: at('2026-06-03T00:00:00Z'),
    },
    { customerE164: null, callerPhone: 'anonymous', createdAt: at('2026-06-04T00:00:00Z') },
  ]);
  const q = async (phone: string) => idsOf((await list(key, `?phone=${encodeURIComponent(phone)}`)).body);
  for (const p of [
    '+14155552671',
    '+1 (415) 555-2671',
    '1.415.555.2671',
    '4155552671',
    '555-2671',
    '2671',
    '14155552671',
  ]) {
    assert.deepEqual(await q(p), [ids[0]], p);
  }
  assert.deepEqual(idsOf((await list(key, '?phone=+14155552671')).body), [ids[0]], 'unencoded +');
  for (const p of ['020 7946 0958', '+44 20 7946 0958', '0044 20 7946 0958', '7946 0958']) {
    assert.deepEqual(await q(p), [ids[1]], p);
  }
  for (const p of ['06 1234 5678', '+39 06 1234 5678', '612345678'])
    assert.deepEqual(await q(p), [ids[2]], p);
  assert.deepEqual(await q('999'), []);
  assert.deepEqual(await q('+1 415 555 2672'), []);
  assert.ok(!(await q('4155552671')).includes(other.ids[0]));
});

const bad: [string, string, string][] = [
  [
    'page=0',
    'page',
    'Invalid value "0" for query parameter "page": expected an integer of at least 1 (default 1).',
  ],
  [
    'page=-1',
    'page',
    'Invalid value "-1" for query parameter "page": expected an integer of at least 1 (default 1).',
  ],
  ['page=abc', 'page', ''],
  ['page=1.5', 'page', ''],
  ['page=1e3', 'page', ''],
  ['page=+2', 'page', ''],
  [
    'page=',
    'page',
    'Invalid value "" for query parameter "page": expected an integer of at least 1 (default 1).',
  ],
  ['page=9007199254740992', 'page', ''],
  ['page=99999999999999999999999999', 'page', ''],
  [
    'limit=0',
    'limit',
    'Invalid value "0" for query parameter "limit": expected an integer from 1 to 100 (default 20).',
  ],
  ['limit=101', 'limit', ''],
  ['limit=ten', 'limit', ''],
  ['limit', 'limit', ''],
  [
    'dateFrom=2026-02-30',
    'dateFrom',
    'Invalid value "2026-02-30" for query parameter "dateFrom": expected a date YYYY-MM-DD or an ISO 8601 date-time with Z or a numeric offset, e.g. 2026-06-15 or 2026-06-15T08:30:00Z.',
  ],
  ['dateFrom=2026-06-15T10:00:00', 'dateFrom', ''],
  ['dateFrom=yesterday', 'dateFrom', ''],
  ['dateFrom=2026-6-1', 'dateFrom', ''],
  ['dateTo=2026-06-15T24:00:00Z', 'dateTo', ''],
  ['dateTo=2026-06-15T10:00:00%2B25:00', 'dateTo', ''],
  ['dateTo=1718445600', 'dateTo', ''],
  [
    'direction=sideways',
    'direction',
    'Invalid value "sideways" for query parameter "direction": expected inbound or outbound.',
  ],
  ['direction=Inbound', 'direction', ''],
  [
    'status=won',
    'status',
    'Invalid value "won" for query parameter "status": expected one of new, to_call, contacted, qualified.',
  ],
  ['status=NEW', 'status', ''],
  [
    'phone=12',
    'phone',
    'Invalid value "12" for query parameter "phone": expected 3 to 40 characters: digits, spaces, hyphens, dots, parentheses and one leading +, with at least 3 digits.',
  ],
  [`phone=${'1'.repeat(41)}`, 'phone', ''],
  ['phone=abc', 'phone', ''],
  ['phone=415%2B555', 'phone', ''],
  ['phone=1-2', 'phone', ''],
  ['phone=41%25', 'phone', ''],
  ['phone=415_55', 'phone', ''],
  [
    'sort=created_at',
    'sort',
    'Unknown query parameter "sort". Accepted parameters: page, limit, dateFrom, dateTo, direction, status, phone.',
  ],
  ['Page=1', 'Page', ''],
  [
    '=1',
    '',
    'Unknown query parameter "". Accepted parameters: page, limit, dateFrom, dateTo, direction, status, phone.',
  ],
  ['page=1&page=2', 'page', 'Query parameter "page" is given more than once; give it at most once.'],
  ['status=new&status=new', 'status', ''],
  ['phone=123&phone=', 'phone', ''],
];

for (const [query, param, message] of bad) {
  test(`GET /calls?${query} answers 400 BAD_REQUEST naming "${param}"`, async () => {
    const { key } = await orgWithCalls();
    const { res } = await list(key, `?${query}`);
    assert.equal(res.statusCode, 400);
    const err = errorOf(res);
    assert.equal(err.code, 'BAD_REQUEST');
    assert.ok(err.message.includes(`"${param}"`), err.message);
    if (message) assert.equal(err.message, message);
    assert.equal(rateHeaders(res).limit, '5000', 'the account limit binds');
  });
}

test('dateFrom after dateTo answers 400 naming both parameters', async () => {
  const { key } = await orgWithCalls();
  for (const [q, from, to] of [
    ['dateFrom=2026-06-12&dateTo=2026-06-11', '2026-06-12T00:00:00.000Z', '2026-06-11T23:59:59.999Z'],
    [
      'dateFrom=2026-06-11T10:00:00.001Z&dateTo=2026-06-11T10:00:00Z',
      '2026-06-11T10:00:00.001Z',
      '2026-06-11T10:00:00.000Z',
    ],
  ]) {
    const { res } = await list(key, `?${q}`);
    assert.equal(res.statusCode, 400);
    assert.deepEqual(errorOf(res), {
      code: 'BAD_REQUEST',
      message: `Query parameter "dateFrom" (${from}) is after "dateTo" (${to}); give a dateFrom on or before dateTo.`,
      param: 'dateFrom',
    });
  }
});

test('equal dateFrom and dateTo are allowed', async () => {
  const { key, ids } = await orgWithCalls([{ createdAt: at('2026-06-11T10:00:00Z') }]);
  assert.deepEqual(
    idsOf((await list(key, '?dateFrom=2026-06-11T10:00:00Z&dateTo=2026-06-11T10:00:00Z')).body),
    ids,
  );
});

test('GET /calls/ with a trailing slash is the same operation', async () => {
  const { key, ids } = await orgWithCalls([{}]);
  assert.deepEqual(idsOf((await list(key, '/?limit=5')).body), ids);
});
