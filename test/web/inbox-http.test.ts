/** The lead inbox, search and board at the HTTP level: exact statuses, redirects, scoping, escaping. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Queryable } from '../../src/db/types.ts';
import { newId } from '../../src/ids.ts';
import { cheapPasswordHash, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import { insertAnalysis, insertCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let email: string;
let orgId: string;
let otherOrg: string;
const ids: Record<string, string> = {};
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function addContact(
  db: Queryable,
  org: string,
  e164: string,
  c: Record<string, string>,
): Promise<void> {
  await db.query(
    `INSERT INTO contacts (id, organization_id, phone, phone_e164, first_name, last_name, company, notes, created_at, updated_at)
     VALUES ($1, $2, $3, $3, $4, $5, $6, $7, now(), now())`,
    [newId(), org, e164, c.first ?? null, c.last ?? null, c.company ?? null, c.notes ?? null],
  );
}

async function analysed(
  org: string,
  call: Omit<Parameters<typeof insertCall>[1], 'orgId'>,
  a: Record<string, unknown>,
  transcript: string,
  language = 'en',
): Promise<string> {
  const id = await insertCall(h.db, { ...call, orgId: org });
  await insertAnalysis(h.db, { callId: id, orgId: org, analysis: a, language });
  await h.db.query('UPDATE call_analyses SET transcript_original = $2 WHERE call_id = $1', [id, transcript]);
  return id;
}

before(async () => {
  h = await createHarness();
  ({ email, orgId } = await orgWithLogin(h.db, cheapPasswordHash()));
  otherOrg = (await orgWithLogin(h.db, 'x')).orgId;
  ids.heater = await analysed(
    orgId,
    {
      customerE164: '+14155550101',
      customerNational: '(415) 555-0101',
      reviewStatus: 'needs_review',
      crmStatus: 'to_call',
      createdAt: new Date('2026-06-14T09:00:00Z'),
    },
    {
      caller_name: 'Maria Lopez',
      subject: 'Leaking water heater',
      service_needed: 'Water heater repair',
      lead_score: 8,
    },
    'Caller: my water heater is leaking all over the garage <script>alert(1)</script> floor.',
  );
  await addContact(h.db, orgId, '+14155550101', {
    first: 'Maria',
    last: 'Lopez-Garcia',
    company: 'Acme Lofts',
  });
  ids.roof = await analysed(
    orgId,
    {
      customerE164: '+14155550102',
      customerNational: '(415) 555-0102',
      callerName: 'Sarah Connor',
      reviewStatus: 'needs_decision',
      createdAt: new Date('2026-06-13T09:00:00Z'),
    },
    { caller_name: null, subject: 'Roof inspection', service_needed: null, lead_score: 3 },
    'Caller: the roof needs an inspection before winter.',
  );
  ids.german = await analysed(
    orgId,
    {
      customerE164: '+4930901820',
      customerNational: '030 901820',
      reviewStatus: 'new',
      createdAt: new Date('2026-06-12T09:00:00Z'),
    },
    { caller_name: null, subject: 'Rohrbruch', service_needed: null, lead_score: null },
    'Anrufer: Die Wasserleitungen im Keller tropfen seit gestern.',
    'de',
  );
  ids.bare = await insertCall(h.db, {
    orgId,
    customerE164: '+14155550199',
    customerNational: '(415) 555-0199',
    createdAt: new Date('2026-06-11T09:00:00Z'),
  });
  await addContact(h.db, otherOrg, '+14155550199', { first: 'Not', last: 'Yours', notes: 'heater' });
  ids.foreign = await analysed(
    otherOrg,
    { reviewStatus: 'needs_review', callerName: 'Foreign Caller' },
    { caller_name: 'Foreign Caller', subject: 'Leaking water heater', lead_score: 9 },
    'water heater leaking',
  );
});
after(() => h?.close());

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const form = await h.app.inject({ url: '/app/login' });
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const pre = String(form.headers['set-cookie']).split(';')[0]!;
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/login',
    headers: { ...FORM, cookie: pre },
    payload: new URLSearchParams({ _csrf: token, email, password: PASSWORD }).toString(),
  });
  assert.equal(res.statusCode, 303);
  const cookie = (res.headers['set-cookie'] as string[])[0]!.split(';')[0]!;
  const page = await h.app.inject({ url: '/app/calls', headers: { cookie } });
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]! };
}

/** The "who" of each row of an inbox page, in order. */
const whos = (body: string): string[] => [...body.matchAll(/class="who"[^>]*>([^<]+)</g)].map((m) => m[1]!);
const views = (body: string): string[] =>
  [
    ...body.matchAll(/<a href="[^"]*"(?: aria-current="page")?>\s*([^<]+?) <span class="count">([^<]+)</g),
  ].map((m) => `${m[1]} ${m[2]}`);

test('the inbox: who, what, score and state on each row; views with their counts; newest first', async () => {
  const { cookie } = await signIn();
  const res = await h.app.inject({ url: '/app/calls', headers: { cookie } });
  assert.equal(res.statusCode, 200);
  // The contact saved for the number names the call; the carrier's name, else the national number.
  assert.deepEqual(whos(res.body), ['Maria Lopez-Garcia', 'Sarah Connor', '030 901820', '(415) 555-0199']);
  assert.deepEqual(views(res.body), ['Needs review 1', 'Needs decision 1', 'New 1', 'All calls 4']);
  assert.match(res.body, /1–4 of 4 calls/);
  assert.match(res.body, /Leaking water heater/);
  assert.match(res.body, /Lead score 8 out of 10/);
  assert.match(res.body, /Waiting for the recording/);
  assert.ok(!res.body.includes('Foreign Caller'));

  const review = await h.app.inject({ url: '/app/calls?view=needs_review', headers: { cookie } });
  assert.deepEqual(whos(review.body), ['Maria Lopez-Garcia']);
  assert.match(review.body, /aria-current="page">\s*Needs review/);
  assert.match(review.body, /1–1 of 1 call</);

  const byScore = await h.app.inject({ url: '/app/calls?sort=score', headers: { cookie } });
  assert.deepEqual(whos(byScore.body), [
    'Maria Lopez-Garcia',
    'Sarah Connor',
    '030 901820',
    '(415) 555-0199',
  ]);
  const oldest = await h.app.inject({ url: '/app/calls?sort=oldest', headers: { cookie } });
  assert.deepEqual(whos(oldest.body), ['(415) 555-0199', '030 901820', 'Sarah Connor', 'Maria Lopez-Garcia']);
});

test('search: a word said (any form of it), a name, a company, a German word, a number in any spelling', async () => {
  const { cookie } = await signIn();
  const search = async (q: string, extra = '') => {
    const res = await h.app.inject({
      url: `/app/calls?q=${encodeURIComponent(q)}${extra}`,
      headers: { cookie },
    });
    assert.equal(res.statusCode, 200, q);
    return res.body;
  };
  assert.deepEqual(whos(await search('leak')), ['Maria Lopez-Garcia']);
  assert.deepEqual(whos(await search('garage')), ['Maria Lopez-Garcia']);
  assert.deepEqual(whos(await search('sarah')), ['Sarah Connor']);
  assert.deepEqual(whos(await search('Acme')), ['Maria Lopez-Garcia']);
  assert.deepEqual(whos(await search('Wasserleitung')), ['030 901820']);
  assert.deepEqual(whos(await search('inspection winter')), ['Sarah Connor']);
  for (const spelling of ['+1 (415) 555-0199', '1.415.555.0199', '4155550199', '555-0199']) {
    assert.deepEqual(whos(await search(spelling)), ['(415) 555-0199'], spelling);
  }
  // another organization's contact (notes "heater", same number) finds nothing here
  assert.deepEqual(whos(await search('Yours')), []);
  // combined with the filters and views
  assert.deepEqual(whos(await search('leak', '&status=new')), []);
  assert.deepEqual(whos(await search('leak', '&view=needs_review')), ['Maria Lopez-Garcia']);
  // web-search syntax, sorted by lead score or oldest first
  assert.deepEqual(whos(await search('roof or leak', '&sort=score')), ['Maria Lopez-Garcia', 'Sarah Connor']);
  assert.deepEqual(whos(await search('roof or leak', '&sort=oldest')), [
    'Sarah Connor',
    'Maria Lopez-Garcia',
  ]);
  const counted = await search('roof');
  assert.deepEqual(views(counted), ['Needs review 0', 'Needs decision 1', 'New 0', 'All calls 1']);
  // the passage: matched words marked, the transcript's markup escaped
  const body = await search('garage');
  // (ts_headline drops markup-like text; whatever it returns is escaped by the page)
  assert.match(body, /<p class="passage">…[^<]*leaking all over the <mark>garage<\/mark>[^<]*floor…<\/p>/);
  assert.ok(!body.includes('<script>alert(1)'));
  // a name is no longer refused as a phone number
  assert.match(await search('sarah'), /1–1 of 1 call</);
  assert.match(await search('nothing-like-this'), /No calls match this search\./);
  // words every search ignores (English stop words) find nothing, not every call
  assert.match(await search('the'), /No calls match this search\./);
  const old = await h.app.inject({ url: '/app/calls?phone=555-0199', headers: { cookie } });
  assert.deepEqual(whos(old.body), ['(415) 555-0199']);
});

test('a refused filter is marked on its field and answers 400', async () => {
  const { cookie } = await signIn();
  const res = await h.app.inject({
    url: '/app/calls?dateFrom=2026-06-13&dateTo=2026-06-12',
    headers: { cookie },
  });
  assert.equal(res.statusCode, 400);
  assert.match(
    res.body,
    /id="f-from" name="dateFrom" value="2026-06-13" aria-invalid="true" aria-describedby="f-from-error"/,
  );
  assert.match(
    res.body,
    /<small id="f-from-error" class="field-error">&quot;From \(date\)&quot; is after &quot;To \(date\)&quot;/,
  );
});

const post = (cookie: string, payload: string) =>
  h.app.inject({ method: 'POST', url: '/app/calls/bulk', headers: { ...FORM, cookie }, payload });

const statusOf = async (id: string) =>
  (
    await h.db.query<{ crm_status: string; review_status: string | null }>(
      'SELECT crm_status, review_status FROM calls WHERE id = $1',
      [id],
    )
  ).rows[0]!;

test("bulk: the selected calls change in one go; another organization's id changes nothing and answers alike", async () => {
  const { cookie, csrf } = await signIn();
  const back = '/app/calls?view=needs_review&q=leak';
  const body = new URLSearchParams({ _csrf: csrf, back, review_status: 'handled', crm_status: '' });
  for (const id of [ids.roof!, ids.bare!, ids.foreign!]) body.append('ids', id);
  const res = await post(cookie, body.toString());
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, '/app/calls?view=needs_review&q=leak&done=changed');
  assert.deepEqual(await statusOf(ids.roof!), { crm_status: 'new', review_status: 'handled' });
  assert.deepEqual(await statusOf(ids.bare!), { crm_status: 'new', review_status: 'handled' });
  assert.deepEqual(await statusOf(ids.foreign!), { crm_status: 'new', review_status: 'needs_review' });

  // Only a foreign id, a malformed id, or calls already so: the same answer, nothing written.
  for (const only of [ids.foreign!, 'not-a-uuid', ids.roof!]) {
    const again = new URLSearchParams({ _csrf: csrf, back, review_status: 'handled', ids: only });
    const r = await post(cookie, again.toString());
    assert.equal(r.statusCode, 303, only);
    assert.equal(r.headers.location, '/app/calls?view=needs_review&q=leak&done=unchanged', only);
  }
  assert.deepEqual(await statusOf(ids.foreign!), { crm_status: 'new', review_status: 'needs_review' });
  const page = await h.app.inject({ url: '/app/calls?done=changed', headers: { cookie } });
  assert.match(page.body, /Saved: the calls you chose have their new status\./);
});

test('a quick action on a row sets both statuses and comes back to the same view', async () => {
  const { cookie, csrf } = await signIn();
  const body = new URLSearchParams({
    _csrf: csrf,
    back: '/app/calls?sort=score',
    ids: ids.german!,
    review_status: 'needs_decision',
    crm_status: 'contacted',
  });
  const res = await post(cookie, body.toString());
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, '/app/calls?sort=score&done=changed');
  assert.deepEqual(await statusOf(ids.german!), { crm_status: 'contacted', review_status: 'needs_decision' });
});

test('bulk refusals: no call, no change, an unknown status, no CSRF token, a foreign back address', async () => {
  const { cookie, csrf } = await signIn();
  const noIds = await post(cookie, new URLSearchParams({ _csrf: csrf, review_status: 'handled' }).toString());
  assert.equal(noIds.statusCode, 400);
  assert.match(noIds.body, /Select the calls to change \(tick their boxes\), at most 100 at a time\./);
  const noChange = await post(cookie, new URLSearchParams({ _csrf: csrf, ids: ids.bare! }).toString());
  assert.equal(noChange.statusCode, 400);
  assert.match(
    noChange.body,
    /Choose a CRM status \(New, To call, Contacted, Qualified\) or a review status to set\./,
  );
  const bad = await post(
    cookie,
    new URLSearchParams({ _csrf: csrf, ids: ids.bare!, crm_status: 'won' }).toString(),
  );
  assert.equal(bad.statusCode, 400);
  const tooMany = new URLSearchParams({ _csrf: csrf, crm_status: 'new' });
  for (let i = 0; i < 101; i++) tooMany.append('ids', newId());
  assert.equal((await post(cookie, tooMany.toString())).statusCode, 400);
  const noCsrf = await post(
    cookie,
    new URLSearchParams({ ids: ids.bare!, crm_status: 'qualified' }).toString(),
  );
  assert.equal(noCsrf.statusCode, 403);
  assert.deepEqual(await statusOf(ids.bare!), { crm_status: 'new', review_status: 'handled' });
  const evil = await post(
    cookie,
    new URLSearchParams({
      _csrf: csrf,
      ids: ids.bare!,
      crm_status: 'new',
      back: 'https://evil.example/app/calls',
    }).toString(),
  );
  assert.equal(evil.statusCode, 303);
  assert.equal(evil.headers.location, '/app/calls?done=unchanged');
});

test("the inbox's bulk form refused: the inbox again at its address, the error on its field, the choices kept", async () => {
  const { cookie, csrf } = await signIn();
  const back = '/app/calls?sort=score&dateFrom=2026-01-01';
  const refuse = async (form: Record<string, string>, ticked: string[] = []) => {
    const body = new URLSearchParams({ _csrf: csrf, back, source: 'bulk', ...form });
    for (const id of ticked) body.append('ids', id);
    const res = await post(cookie, body.toString());
    assert.equal(res.statusCode, 400);
    return res.body;
  };
  const before = await h.db.query('SELECT id, review_status, crm_status FROM calls ORDER BY id');

  const none = await refuse({ review_status: 'handled', crm_status: '' });
  assert.match(
    none,
    /<p class="notice error" role="alert">Select the calls to change \(tick their boxes\), at most 100 at a time\.<\/p>/,
  );
  assert.match(none, /<p class="field-error" id="ids-error">Select the calls to change/);
  const boxes = [...none.matchAll(/<input type="checkbox" name="ids"[^>]*>/g)].map((m) => m[0]);
  assert.ok(boxes.length > 0);
  for (const [i, box] of boxes.entries()) {
    assert.match(box, /aria-invalid="true" aria-describedby="ids-error"/);
    assert.equal(/autofocus/.test(box), i === 0, 'the focus on the first box only');
  }
  assert.match(none, /<option value="handled" selected>Handled<\/option>/);
  assert.match(
    none,
    /<a href="\/app\/calls\?dateFrom=2026-01-01&amp;sort=score" aria-current="page">All calls/,
  );

  const noStatus = await refuse({}, [ids.roof!]);
  assert.match(
    noStatus,
    /<select id="bulk-crm" name="crm_status" aria-invalid="true" aria-describedby="crm_status-error" autofocus>/,
  );
  assert.match(
    noStatus,
    /<p class="field-error" id="crm_status-error">Choose a CRM status \(New, To call, Contacted, Qualified\) or a review status to set\.<\/p>/,
  );
  assert.match(noStatus, new RegExp(`<input type="checkbox" name="ids" value="${ids.roof}"[^>]*checked`));
  assert.doesNotMatch(noStatus, /name="ids"[^>]*aria-invalid/);

  const badReview = await refuse({ review_status: 'bogus', crm_status: 'contacted' }, [ids.roof!]);
  assert.match(
    badReview,
    /<select id="bulk-review" name="review_status" aria-invalid="true" aria-describedby="review_status-error" autofocus>/,
  );
  assert.match(
    badReview,
    /id="review_status-error">Choose a review status: New, Needs decision, Needs review, Handled, No action\.<\/p>/,
  );
  assert.match(badReview, /<option value="contacted" selected>Contacted<\/option>/);

  const badCrm = await refuse({ crm_status: 'won' }, [ids.roof!]);
  assert.match(
    badCrm,
    /<select id="bulk-crm" name="crm_status" aria-invalid="true" aria-describedby="crm_status-error" autofocus>/,
  );

  // A quick form or a board move refused (only a hand-made post can be): the error page, as before.
  const quick = await post(
    cookie,
    new URLSearchParams({ _csrf: csrf, back, crm_status: 'won', ids: ids.roof! }).toString(),
  );
  assert.equal(quick.statusCode, 400);
  assert.doesNotMatch(quick.body, /id="bulk"/);
  const after = await h.db.query('SELECT id, review_status, crm_status FROM calls ORDER BY id');
  assert.deepEqual(after.rows, before.rows, 'nothing changed');
});

test('the board: one column per CRM status with its count; a move comes back to the card', async () => {
  const { cookie, csrf } = await signIn();
  const res = await h.app.inject({ url: '/app/calls/board', headers: { cookie } });
  assert.equal(res.statusCode, 200);
  const columns = [...res.body.matchAll(/<h2 id="col-([a-z_]+)">[^<]+<span class="count">(\d+)</g)].map(
    (m) => `${m[1]} ${m[2]}`,
  );
  const counts = (
    await h.db.query<{ crm_status: string; n: string }>(
      'SELECT crm_status, count(*) AS n FROM calls WHERE organization_id = $1 GROUP BY crm_status',
      [orgId],
    )
  ).rows;
  const n = (s: string) => counts.find((c) => c.crm_status === s)?.n ?? '0';
  assert.deepEqual(
    columns,
    ['new', 'to_call', 'contacted', 'qualified'].map((s) => `${s} ${n(s)}`),
  );
  assert.ok(!res.body.includes('Foreign Caller'));
  const move = new URLSearchParams({
    _csrf: csrf,
    ids: ids.heater!,
    crm_status: 'contacted',
    back: `/app/calls/board#card-${ids.heater}`,
  });
  const moved = await post(cookie, move.toString());
  assert.equal(moved.statusCode, 303);
  assert.equal(moved.headers.location, `/app/calls/board?done=changed#card-${ids.heater}`);
  assert.equal((await statusOf(ids.heater!)).crm_status, 'contacted');
  // a foreign id moves nothing and is answered like a card already in that column
  const foreign = new URLSearchParams({
    _csrf: csrf,
    ids: ids.foreign!,
    crm_status: 'qualified',
    back: '/app/calls/board',
  });
  const r = await post(cookie, foreign.toString());
  assert.equal(r.statusCode, 303);
  assert.equal(r.headers.location, '/app/calls/board?done=unchanged');
  assert.equal((await statusOf(ids.foreign!)).crm_status, 'new');
});
