/** The settings pages at the HTTP level (no browser): guard, headers, CSRF refusals, other organizations, bad input. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTracker } from '../../src/accounts/trackers.ts';
import { createContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { SECURITY_HEADERS } from '../../src/http/public/pages/kit/security.ts';
import { cheapPasswordHash, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import { MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { insertDelivery, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let email: string;
let orgId: string;
let subId: string;
let otherSub: string;
let otherContact: string;
let otherTracker: string;
let trackerId: string;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

before(async () => {
  h = await createHarness();
  ({ email, orgId } = await orgWithLogin(h.db, cheapPasswordHash()));
  const other = await orgWithLogin(h.db, cheapPasswordHash());
  ({ subscriptionId: subId } = await insertSubscription(h.deps, { orgId, at: h.clock.now() }));
  ({ subscriptionId: otherSub } = await insertSubscription(h.deps, {
    orgId: other.orgId,
    at: h.clock.now(),
  }));
  await insertDelivery(h.db, {
    orgId,
    subscriptionId: subId,
    createdAt: h.clock.now(),
    status: 'dead_lettered',
  });
  ({ contact_id: otherContact } = await createContact(h.deps, tenantScope(other.orgId), {
    phone: '+14155550100',
  }));
  const now = h.clock.now();
  ({ tracker_id: otherTracker } = await createTracker(h.db, {
    organizationId: other.orgId,
    name: 'x',
    terms: ['y'],
    now,
  }));
  ({ tracker_id: trackerId } = await createTracker(h.db, {
    organizationId: orgId,
    name: 'Mine',
    terms: ['y'],
    now,
  }));
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
  const page = await h.app.inject({ url: '/app/settings/integrations', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return { cookie, csrf };
}

const PAGES = () => [
  '/app/settings/integrations',
  `/app/settings/integrations/webhooks/${subId}`,
  `/app/settings/integrations/webhooks/${subId}/delete`,
  '/app/contacts',
  '/app/trackers',
  `/app/trackers/${trackerId}`,
  '/app/settings/organization',
];

test('every settings page: signed out it goes to sign-in and back; signed in it carries the security headers', async () => {
  const { cookie } = await signIn();
  for (const url of PAGES()) {
    const out = await h.app.inject({ url });
    assert.equal(out.statusCode, 303, url);
    assert.equal(out.headers.location, `/app/login?next=${encodeURIComponent(url)}`, url);
    const res = await h.app.inject({ url, headers: { cookie } });
    assert.equal(res.statusCode, 200, url);
    for (const [name, value] of Object.entries(SECURITY_HEADERS))
      assert.equal(res.headers[name], value, `${url} ${name}`);
    assert.equal(res.headers['cache-control'], 'no-store', url);
    assert.doesNotMatch(res.body, /\sstyle=|<style|<script>|\son[a-z]+="/i, `${url}: nothing inline`);
  }
});

test('every settings form refuses a post without the CSRF token and changes nothing', async () => {
  const { cookie } = await signIn();
  const posts: [string, Record<string, string>][] = [
    ['/app/settings/integrations/api-keys', { name: 'x', scopes: 'read.calls' }],
    ['/app/settings/integrations/webhooks', { url: 'http://127.0.0.1:9/x' }],
    [`/app/settings/integrations/webhooks/${subId}/verify`, {}],
    [`/app/settings/integrations/webhooks/${subId}/test`, {}],
    [`/app/settings/integrations/webhooks/${subId}/rotations`, { emergency: 'yes', confirm: 'yes' }],
    [`/app/settings/integrations/webhooks/${subId}/delete`, {}],
    [
      `/app/settings/integrations/webhooks/${subId}/deliveries/resend`,
      { from: '2026-06-01', to: '2026-06-15', statuses: 'dead_lettered', dry_run: 'no' },
    ],
    [`/app/contacts/${otherContact}`, { first_name: 'x' }],
    ['/app/trackers', { name: 'x', terms: 'y' }],
    [`/app/trackers/${trackerId}/delete`, { confirm: 'yes' }],
    ['/app/settings/organization', { language: 'de' }],
  ];
  const before = await snapshot();
  for (const [url, body] of posts) {
    const res = await h.app.inject({
      method: 'POST',
      url,
      headers: { ...FORM, cookie },
      payload: new URLSearchParams(body).toString(),
    });
    assert.equal(res.statusCode, 403, url);
  }
  assert.deepEqual(await snapshot(), before);

  async function snapshot() {
    const q = async (sql: string) => (await h.db.query(sql)).rows;
    return {
      keys: await q('SELECT count(*)::int AS n FROM api_keys'),
      subs: await q('SELECT id, state, deleted_at FROM webhook_subscriptions ORDER BY id'),
      secrets: await q('SELECT count(*)::int AS n FROM webhook_secrets'),
      deliveries: await q('SELECT id, status FROM webhook_deliveries ORDER BY id'),
      trackers: await q('SELECT id, name FROM trackers ORDER BY id'),
      orgs: await q('SELECT id, language FROM organizations ORDER BY id'),
    };
  }
});

test("another organization's subscription, contact and tracker answer 404 pages, also for posts", async () => {
  const { cookie, csrf } = await signIn();
  for (const url of [
    `/app/settings/integrations/webhooks/${otherSub}`,
    `/app/settings/integrations/webhooks/${MISSING}`,
    '/app/settings/integrations/webhooks/not-a-uuid',
    `/app/contacts/${otherContact}`,
    `/app/trackers/${otherTracker}`,
    `/app/settings/integrations/api-keys/${MISSING}/revoke`,
  ]) {
    const res = await h.app.inject({ url, headers: { cookie } });
    assert.equal(res.statusCode, 404, url);
    assert.match(res.headers['content-type'] as string, /^text\/html/, url);
  }
  for (const url of [
    `/app/settings/integrations/webhooks/${otherSub}/delete`,
    `/app/settings/integrations/webhooks/${otherSub}/rotations`,
    `/app/contacts/${otherContact}`,
    `/app/trackers/${otherTracker}/delete`,
  ]) {
    const res = await h.app.inject({
      method: 'POST',
      url,
      headers: { ...FORM, cookie },
      payload: new URLSearchParams({ _csrf: csrf, first_name: 'x', confirm: 'yes' }).toString(),
    });
    assert.equal(res.statusCode, 404, url);
  }
  const { rows } = await h.db.query('SELECT deleted_at FROM webhook_subscriptions WHERE id = $1', [otherSub]);
  assert.deepEqual(rows, [{ deleted_at: null }]);
});

test('bad input is a 400 page naming the field, never a 500', async () => {
  const { cookie, csrf } = await signIn();
  const cases: [string, Record<string, string>, RegExp][] = [
    [
      '/app/trackers',
      { name: 'a\u0000b', terms: 'x' },
      /Field &quot;name&quot; must not contain a NUL character\./,
    ],
    [
      `/app/settings/integrations/webhooks/${subId}/deliveries/resend`,
      { from: '2026-02-30', to: '2026-06-15', statuses: 'skipped' },
      /Field &quot;from&quot; must be a day such as 2026-06-15\./,
    ],
    [
      `/app/settings/integrations/webhooks/${subId}/deliveries/resend`,
      { from: '2026-01-01', to: '2026-06-15', statuses: 'skipped' },
      /at most 30 days/,
    ],
    [
      `/app/settings/integrations/webhooks/${subId}/deliveries/resend`,
      { from: '2026-06-01', to: '2026-06-15', statuses: 'delivered' },
      /Tick &quot;Dead-lettered&quot;, &quot;Skipped&quot; or both\./,
    ],
    [
      `/app/settings/integrations/webhooks/${subId}/rotations`,
      { emergency: 'yes' },
      /tick the box to confirm/,
    ],
    [
      '/app/settings/integrations/webhooks',
      { url: 'ftp://example.com/x' },
      /Field &quot;url&quot; is not acceptable/,
    ],
    [
      '/app/settings/integrations/webhooks',
      { url: 'https://example.com/x', event_types: 'webhook.test' },
      /cannot be selected/,
    ],
    ['/app/settings/organization', { retention_days: '1.5', language: 'en' }, /whole number of days/],
    ['/app/settings/organization', { retention_days: '', language: 'xx' }, /must be one of en, de, fr, es/],
  ];
  for (const [url, body, message] of cases) {
    const res = await h.app.inject({
      method: 'POST',
      url,
      headers: { ...FORM, cookie },
      payload: new URLSearchParams({ _csrf: csrf, ...body }).toString(),
    });
    assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(body)}`);
    assert.match(res.body, message, url);
    assert.match(res.body, /role="alert"/, url);
  }
  // A NUL in the search is refused like one in any query (src/http/nul-guard.ts), no longer dropped.
  const search = await h.app.inject({ url: '/app/contacts?q=%00', headers: { cookie } });
  assert.equal(search.statusCode, 400);
  assert.match(search.body, /Query parameter &quot;q&quot; must not contain a NUL character\./);
  const cursor = await h.app.inject({
    url: `/app/settings/integrations/webhooks/${subId}?cursor=bogus`,
    headers: { cookie },
  });
  assert.equal(cursor.statusCode, 400);
});

test('redaction: on by default and said so; off only when the owner picks "Keep every word as said"; a post without the choice leaves it', async () => {
  const { cookie, csrf } = await signIn();
  const page = async () =>
    (await h.app.inject({ url: '/app/settings/organization', headers: { cookie } })).body;
  const enabled = async () =>
    (
      await h.db.query<{ r: boolean }>('SELECT redaction_enabled AS r FROM organizations WHERE id = $1', [
        orgId,
      ])
    ).rows[0]!.r;
  const post = (body: Record<string, string>) =>
    h.app.inject({
      method: 'POST',
      url: '/app/settings/organization',
      headers: { ...FORM, cookie },
      payload: new URLSearchParams({ _csrf: csrf, retention_days: '', language: 'en', ...body }).toString(),
    });
  let body = await page();
  assert.match(body, /<input type="radio" id="org-redaction-on" name="redaction" value="on" checked/);
  assert.match(body, /they show as <code>\[card number\]<\/code>/);
  assert.doesNotMatch(body, /org-redaction-off-notice/);
  assert.equal(await enabled(), true);

  assert.equal((await post({})).statusCode, 303);
  assert.equal(await enabled(), true, 'a form without the choice changes nothing');

  const off = await post({ redaction: 'off' });
  assert.equal(off.statusCode, 303);
  assert.equal(off.headers.location, '/app/settings/organization?done=saved');
  assert.equal(await enabled(), false);
  body = await page();
  assert.match(body, /<input type="radio" id="org-redaction-off" name="redaction" value="off" checked/);
  assert.match(body, /<strong>Redaction is off:<\/strong> new calls keep card numbers/);

  const bad = await post({ redaction: 'maybe' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /Choose whether to redact: &quot;on&quot; or &quot;off&quot;\./);
  assert.equal(await enabled(), false);

  assert.equal((await post({ redaction: 'on' })).statusCode, 303);
  assert.equal(await enabled(), true);
});
