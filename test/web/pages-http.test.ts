/** The pages at the HTTP level (no browser): cookies, redirects, headers, escaping, refusals. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTracker } from '../../src/accounts/trackers.ts';
import { DatabaseError, type Db, type QueryOptions } from '../../src/db/types.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { safeNext } from '../../src/http/public/pages/kit/next-path.ts';
import { CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from '../../src/http/public/pages/kit/security.ts';
import { cheapPasswordHash, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import { insertCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin } from '../helpers/http.ts';

let h: Harness;
let email: string;
let orgId: string;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

before(async () => {
  h = await createHarness(); // PUBLIC_BASE_URL is https://calls.example.test
  ({ email, orgId } = await orgWithLogin(h.db, cheapPasswordHash()));
});
after(() => h?.close());

/** Signs in through the form; returns the session cookie and the page CSRF token. */
async function signIn(): Promise<{ cookie: string; csrf: string; setCookie: string }> {
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
  const setCookie = (res.headers['set-cookie'] as string[])[0]!;
  const cookie = setCookie.split(';')[0]!;
  const page = await h.app.inject({ url: '/app/calls', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return { cookie, csrf, setCookie };
}

test('cookies are HttpOnly, SameSite=Lax and Secure when PUBLIC_BASE_URL is https', async () => {
  const form = await h.app.inject({ url: '/app/login' });
  assert.match(
    String(form.headers['set-cookie']),
    /^cc_login_csrf=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/app\/login; Secure$/,
  );
  const { setCookie } = await signIn();
  assert.match(setCookie, /^cc_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/; Secure$/);
});

test('safeNext keeps web-app paths and turns everything else into /app/calls', () => {
  const cases: [unknown, string][] = [
    ['/app/calls/6f1c?x=1', '/app/calls/6f1c?x=1'],
    ['/app', '/app'],
    ['/app/settings/integrations', '/app/settings/integrations'],
    ['//evil.example', '/app/calls'],
    ['///evil.example', '/app/calls'],
    ['/\\evil.example', '/app/calls'],
    ['https://evil.example/app', '/app/calls'],
    ['http:/app', '/app/calls'],
    ['javascript:alert(1)', '/app/calls'],
    ['/app/api/session', '/app/calls'],
    ['/app/login?next=//evil', '/app/calls'],
    ['/app/%2F%2Fevil.example', '/app/%2F%2Fevil.example'],
    ['/app/../../evil', '/app/calls'],
    ['/app\t/calls', '/app/calls'],
    ['/api/v1/calls', '/app/calls'],
    ['', '/app/calls'],
    [undefined, '/app/calls'],
    [['/app/calls'], '/app/calls'],
  ];
  for (const [raw, want] of cases) assert.equal(safeNext(raw), want, String(raw));
});

test('signed out: a page redirects to sign-in with next, a form post to sign-in alone', async () => {
  const callId = await insertCall(h.db, { orgId });
  const get = await h.app.inject({ url: `/app/calls/${callId}?x=1` });
  assert.equal(get.statusCode, 303);
  assert.equal(get.headers.location, `/app/login?next=${encodeURIComponent(`/app/calls/${callId}?x=1`)}`);
  const post = await h.app.inject({
    method: 'POST',
    url: `/app/calls/${callId}/trash`,
    headers: FORM,
    payload: '',
  });
  assert.equal(post.statusCode, 303);
  assert.equal(post.headers.location, '/app/login');
  const home = await h.app.inject({ url: '/app' });
  assert.equal(home.statusCode, 303);
  assert.equal(home.headers.location, '/app/calls');
});

test('every page answer carries the security headers: pages, errors, 404s, assets', async () => {
  const { cookie } = await signIn();
  for (const [url, status] of [
    ['/app/login', 200],
    ['/app/calls', 200],
    ['/app/calls/not-a-uuid', 404],
    ['/app/no-such-page', 404],
    ['/app/assets/app.css', 200],
    ['/app/assets/app.js', 200],
    ['/app/assets/nope.js', 404],
  ] as const) {
    const res = await h.app.inject({ url, headers: url === '/app/login' ? {} : { cookie } });
    assert.equal(res.statusCode, status, url);
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) assert.equal(res.headers[k], v, `${url} ${k}`);
  }
  assert.equal(CONTENT_SECURITY_POLICY.includes('unsafe-inline'), false);
  const css = await h.app.inject({ url: '/app/assets/app.css' });
  assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
  const js = await h.app.inject({ url: '/app/assets/copy.js' });
  assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  const page = await h.app.inject({ url: '/app/calls', headers: { cookie } });
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.doesNotMatch(page.body, /style=|<style|<script>|\son[a-z]+=/i);
});

test('the service root leads to the web app, and a browser asking for /favicon.ico gets the app icon', async () => {
  const root = await h.app.inject({ url: '/' });
  assert.equal(root.statusCode, 302);
  assert.equal(root.headers.location, '/app');
  const app = await h.app.inject({ url: '/app' });
  assert.equal(app.statusCode, 303);
  assert.equal(app.headers.location, '/app/calls');
  const ico = await h.app.inject({ url: '/favicon.ico' });
  assert.equal(ico.statusCode, 301);
  assert.equal(ico.headers.location, '/app/assets/favicon.svg');
  const svg = await h.app.inject({ url: '/app/assets/favicon.svg' });
  assert.equal(svg.statusCode, 200);
  assert.equal(svg.headers['content-type'], 'image/svg+xml');
  assert.match(svg.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const login = await h.app.inject({ url: '/app/login' });
  assert.match(login.body, /<link rel="icon" href="\/app\/assets\/favicon\.svg" type="image\/svg\+xml"\/>/);
  assert.match(login.body, /<a href="\/app\/forgot-password">Forgot your password\?<\/a>/);
});

test('under /app/api an unknown route keeps the JSON error shape', async () => {
  const res = await h.app.inject({ url: '/app/api/nothing' });
  assert.equal(res.statusCode, 404);
  assert.equal(res.json().error.code, 'NOT_FOUND');
});

test('stored text is escaped on the pages', async () => {
  const { cookie } = await signIn();
  const id = await insertCall(h.db, { orgId, callerName: '<script>alert(1)</script>"><img src=x>' });
  const res = await h.app.inject({ url: `/app/calls/${id}`, headers: { cookie } });
  assert.equal(res.statusCode, 200);
  assert.ok(!res.body.includes('<script>alert(1)'));
  assert.ok(!res.body.includes('<img src=x>'));
  assert.ok(res.body.includes('Call from &lt;script>alert(1)&lt;/script>&quot;>&lt;img src=x>'));
});

test('form posts: CSRF refused with 403, a bad field with 400, a huge body with 413 — each a page', async () => {
  const { cookie, csrf } = await signIn();
  const id = await insertCall(h.db, { orgId });
  const noToken = await h.app.inject({
    method: 'POST',
    url: `/app/calls/${id}/trash`,
    headers: { ...FORM, cookie },
    payload: '',
  });
  assert.equal(noToken.statusCode, 403);
  assert.match(noToken.headers['content-type'] as string, /^text\/html/);
  const bad = await h.app.inject({
    method: 'POST',
    url: `/app/calls/${id}/status`,
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({ _csrf: csrf, crm_status: 'won' }).toString(),
  });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /Choose a CRM status: New, To call, Contacted, Qualified\./);
  const past = await h.app.inject({
    method: 'POST',
    url: `/app/calls/${id}/schedule-deletion`,
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({
      _csrf: csrf,
      reason: 'consent_withdrawn',
      delete_on: '2026-06-15',
    }).toString(),
  });
  assert.equal(past.statusCode, 400);
  assert.match(past.body, /Choose a deletion date after today\./);
  const eraseUnconfirmed = await h.app.inject({
    method: 'POST',
    url: `/app/calls/${id}/erase`,
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({ _csrf: csrf }).toString(),
  });
  assert.equal(eraseUnconfirmed.statusCode, 400);
  const huge = await h.app.inject({
    method: 'POST',
    url: `/app/calls/${id}/status`,
    headers: { ...FORM, cookie },
    payload: `_csrf=${csrf}&x=${'a'.repeat(70_000)}`,
  });
  assert.equal(huge.statusCode, 413);
  assert.match(huge.headers['content-type'] as string, /^text\/html/);
  const ok = await h.app.inject({
    method: 'POST',
    url: `/app/calls/${id}/status`,
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({ _csrf: csrf, crm_status: 'qualified', review_status: '' }).toString(),
  });
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, `/app/calls/${id}?done=statuses`);
});

test('the JSON console login still works beside the sign-in page (one signIn underneath)', async () => {
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/api/login',
    payload: { email, password: PASSWORD },
  });
  assert.equal(res.statusCode, 200);
  const wrong = await h.app.inject({
    method: 'POST',
    url: '/app/api/login',
    payload: { email, password: 'nope nope' },
  });
  assert.equal(wrong.statusCode, 401);
  assert.equal(wrong.json().error.message, 'Wrong e-mail or password.');
});

test('a JSON body posted to a page is a 400 page, never a 500', async () => {
  const login = await h.app.inject({
    method: 'POST',
    url: '/app/login',
    payload: { email: 123, password: ['a'] },
  });
  assert.equal(login.statusCode, 400);
  assert.match(login.headers['content-type'] as string, /^text\/html/);
  const { cookie, csrf } = await signIn();
  const id = await insertCall(h.db, { orgId });
  const res = await h.app.inject({
    method: 'POST',
    url: `/app/calls/${id}/schedule-deletion`,
    headers: { cookie },
    payload: { _csrf: csrf, reason: 'consent_withdrawn', delete_on: 20260701 },
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /Field &quot;delete_on&quot; must be text\.|Field "delete_on" must be text\./);
});

test('the calls list reads the session with its user, then its calls: two queries; a failing list is a 500 page', async () => {
  const id = await insertCall(h.db, {
    orgId,
    customerE164: '+14155550123',
    customerNational: '(415) 555-0123',
  });
  const { cookie } = await signIn();
  const seen: string[] = [];
  let fail = false;
  const counting: Db = {
    ...h.db,
    query: async <T>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      seen.push(sql);
      if (fail && sql.includes('FROM calls')) throw new DatabaseError('list failed');
      return h.db.query<T>(sql, params, options);
    },
  };
  const app = await buildPublicApp({ ...h.deps, db: counting });
  try {
    for (const url of ['/app/calls', '/app/calls?page=2', '/app/calls?direction=inbound&phone=4155550123']) {
      seen.length = 0;
      const res = await app.inject({ url, headers: { cookie } });
      assert.equal(res.statusCode, 200, url);
      assert.equal(seen.length, 2, url);
      assert.equal(res.body.includes(`/app/calls/${id}`), url !== '/app/calls?page=2', url);
    }
    // A bad filter: the session alone, and the page says why (400).
    seen.length = 0;
    const bad = await app.inject({ url: '/app/calls?dateFrom=yesterday', headers: { cookie } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /(&quot;|")From \(date\)(&quot;|") is not a day\. Pick one such as 2026-06-15\./);
    assert.equal(seen.length, 1);
    // The list fails: its error is the page's, shown to the signed-in user.
    fail = true;
    seen.length = 0;
    const failed = await app.inject({ url: '/app/calls', headers: { cookie } });
    assert.equal(failed.statusCode, 500);
    assert.equal(seen.length, 2);
    assert.match(failed.body, /Signed in as /);
    // The call page: the session, then the call, its steps, tracker matches and the call setup in one statement.
    fail = false;
    seen.length = 0;
    const page = await app.inject({ url: `/app/calls/${id}`, headers: { cookie } });
    assert.equal(page.statusCode, 200);
    assert.equal(seen.length, 2);
  } finally {
    await app.close();
  }
});

test('the call page forms are checked with the operator API schemas, refused in the page words; a day that does not exist is refused', async () => {
  const { cookie, csrf } = await signIn();
  const id = await insertCall(h.db, { orgId });
  const post = (action: string, fields: Record<string, string>) =>
    h.app.inject({
      method: 'POST',
      url: `/app/calls/${id}/${action}`,
      headers: { ...FORM, cookie },
      payload: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
  const review = await post('status', { crm_status: 'new', review_status: 'maybe' });
  assert.equal(review.statusCode, 400);
  assert.match(
    review.body,
    /Choose a review status: New, Needs decision, Needs review, Handled, No action, or none\./,
  );
  const noReason = await post('schedule-deletion', { delete_on: '2099-03-01' });
  assert.equal(noReason.statusCode, 400);
  assert.match(noReason.body, /Choose the reason for the deletion\./);
  // 2099-02-31 used to be read as 2099-03-03 (Date.parse rolls over); the REST API's day parser refuses it.
  const notADay = await post('schedule-deletion', { reason: 'consent_withdrawn', delete_on: '2099-02-31' });
  assert.equal(notADay.statusCode, 400);
  assert.match(notADay.body, /Give the deletion date as a date \(YYYY-MM-DD\), or leave it empty\./);
  const none = await h.db.query<{ pending_deletion_at: Date | null }>(
    'SELECT pending_deletion_at FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(none.rows[0]?.pending_deletion_at, null);
  const ok = await post('schedule-deletion', { reason: 'consent_withdrawn', delete_on: '2099-03-01' });
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, `/app/calls/${id}?done=scheduled`);
  const set = await h.db.query<{ pending_deletion_at: Date }>(
    'SELECT pending_deletion_at FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(set.rows[0]?.pending_deletion_at.toISOString(), '2099-03-01T00:00:00.000Z');
});

test("the call page tells an outbound call's dated steps and its tracker matches from the call's row, and no other organization's", async () => {
  const { cookie } = await signIn();
  const minute = 60_000;
  const utc = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const outbound = async () => {
    const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
      direction: 'outbound',
      caller_phone: '+14155550100',
      customer_phone: '+14155552671',
    });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { call_id: string }).call_id;
  };
  const move = async (id: string, state: string) => {
    const res = await admin(h, 'POST', `/calls/${id}/lifecycle`, { state });
    assert.equal(res.statusCode, 200, res.body);
  };
  const pageText = async (id: string) => {
    // The webhook envelopes are not what the page reads: emptied, the page tells the same.
    await h.db.query(`UPDATE events SET body = '{}' WHERE call_id = $1`, [id]);
    const res = await h.app.inject({ url: `/app/calls/${id}`, headers: { cookie } });
    assert.equal(res.statusCode, 200);
    return res.body.replace(/<[^>]+>/g, '');
  };
  const inOrder = (text: string, lines: string[]) => {
    let at = -1;
    for (const s of lines) {
      const next = text.indexOf(s);
      assert.ok(next > at, s);
      at = next;
    }
  };
  // Through the operator API's lifecycle moves (capture/lifecycle.ts writes the columns the page reads):
  // only the agent, then the repair to completed, which the page tells before the second attempt.
  const repaired = await outbound();
  for (const s of ['agent_answered', 'ringing_customer']) await move(repaired, s);
  h.clock.advance(minute);
  const ended = h.clock.now();
  await move(repaired, 'agent_only');
  h.clock.advance(9 * minute);
  const fixed = h.clock.now();
  await move(repaired, 'completed');
  await move(repaired, 'completed'); // re-reported: no new step
  const repairedText = await pageText(repaired);
  inOrder(repairedText, [
    `${utc(ended)}: Attempt finished: Only the agent was on the line`,
    `${utc(fixed)}: Corrected to completed: a late carrier report showed the call connected`,
    `${utc(fixed)}: Attempt finished: Completed`,
  ]);
  assert.equal(repairedText.split('Attempt finished').length, 3);
  assert.doesNotMatch(repairedText, /Reported as failed/);
  // A failed attempt: the attempt, then the failure, at one instant.
  const failed = await outbound();
  h.clock.advance(minute);
  const noAnswer = h.clock.now();
  for (const s of ['agent_answered', 'ringing_customer', 'customer_no_answer']) await move(failed, s);
  inOrder(await pageText(failed), [
    `${utc(noAnswer)}: Attempt finished: The customer did not answer`,
    `${utc(noAnswer)}: Reported as failed`,
  ]);
  // A call still ringing has no dated step yet.
  const ringing = await outbound();
  assert.doesNotMatch(await pageText(ringing), /Attempt finished/);

  // Tracker matches: an imported, analysed call completes at once (no recording to wait for) and
  // capture/completion.ts keeps the matches on the call.
  await createTracker(h.db, {
    organizationId: orgId,
    name: 'Leaks',
    terms: ['leak', 'drip'],
    now: h.clock.now(),
  });
  const imported = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: '+14155552671',
    recording_mode: 'no_recording',
    transcript_original: 'Caller: There is a leak under the sink, a steady drip.',
    transcript_processed: { summary: 'A leak under the sink.' },
  });
  assert.equal(imported.statusCode, 201, imported.body);
  const matched = await pageText((imported.json() as { call_id: string }).call_id);
  assert.match(matched, /Leaks: leak, drip/);
  assert.match(matched, /There is a leak under the sink/);
  assert.doesNotMatch(await pageText(ringing), /Leaks:/);
  assert.match(await pageText(ringing), /No keyword tracker matched this call\./);
  const other = await orgWithLogin(h.db, cheapPasswordHash());
  const foreign = await insertCall(h.db, { orgId: other.orgId });
  const notFound = await h.app.inject({ url: `/app/calls/${foreign}`, headers: { cookie } });
  assert.equal(notFound.statusCode, 404);
  assert.match(notFound.body, /No call with this id exists in your organization\./);
});
