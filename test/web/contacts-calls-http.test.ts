/**
 * Contacts and calls joined by the customer's E.164 number, at the HTTP level: only within the
 * organization (another organization's contact never names a call, its calls never show), the
 * forms' refusals and redirects, the CSRF check, escaping.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { cheapPasswordHash, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import { insertCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let email: string;
let orgId: string;
let otherOrg: string;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const NUMBER = '+14155550177';

before(async () => {
  h = await createHarness();
  ({ email, orgId } = await orgWithLogin(h.db, cheapPasswordHash()));
  ({ orgId: otherOrg } = await orgWithLogin(h.db, cheapPasswordHash()));
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
  const page = await h.app.inject({ url: '/app/contacts/new', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return { cookie, csrf };
}

const post = (cookie: string, url: string, fields: Record<string, string>) =>
  h.app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, cookie },
    payload: new URLSearchParams(fields).toString(),
  });

test("another organization's contact with the same number neither names the call nor sees its calls", async () => {
  const callId = await insertCall(h.db, { orgId, customerE164: NUMBER, callerName: 'Rosa Diaz' });
  const theirs = await createContact(h.deps, tenantScope(otherOrg), { phone: NUMBER, first_name: 'Other' });
  const { cookie } = await signIn();
  const page = await h.app.inject({ url: `/app/calls/${callId}`, headers: { cookie } });
  assert.equal(page.statusCode, 200);
  assert.doesNotMatch(page.body, new RegExp(theirs.contact_id));
  assert.match(page.body, /id="save-contact"/);
  assert.match(page.body, /name="first_name" value="Rosa"/);
  // their contact's page is not found here
  const their = await h.app.inject({ url: `/app/contacts/${theirs.contact_id}`, headers: { cookie } });
  assert.equal(their.statusCode, 404);
});

test('save as contact: a 303 back to the call, then the call names the contact; a second save is refused on the phone field', async () => {
  const callId = await insertCall(h.db, {
    orgId,
    customerE164: '+14155550188',
    callerName: 'Jo <b>March</b>',
  });
  const { cookie, csrf } = await signIn();
  const res = await post(cookie, '/app/contacts', {
    _csrf: csrf,
    from_call: callId,
    phone: '+14155550188',
    first_name: 'Jo',
    last_name: '<b>March</b>',
  });
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, `/app/calls/${callId}?done=contact_saved`);
  const page = await h.app.inject({ url: `/app/calls/${callId}?done=contact_saved`, headers: { cookie } });
  assert.match(page.body, /The contact was saved/);
  assert.match(
    page.body,
    /id="call-contact"><a href="\/app\/contacts\/[0-9a-f-]{36}">Jo &lt;b>March&lt;\/b><\/a>/,
  );
  assert.doesNotMatch(page.body, /id="save-contact"/);
  const again = await post(cookie, '/app/contacts', {
    _csrf: csrf,
    from_call: callId,
    phone: '+1 415 555 0188',
  });
  assert.equal(again.statusCode, 409);
  assert.match(again.body, /aria-invalid="true"/);
  assert.match(again.body, /A contact already has this number/);
  // the form keeps where it came from, so a corrected save still returns to the call
  assert.match(again.body, new RegExp(`name="from_call" value="${callId}"`));
});

test('the New contact form: 400 with the fields marked, a malformed from_call ignored, no CSRF token 403', async () => {
  const { cookie, csrf } = await signIn();
  const bad = await post(cookie, '/app/contacts', { _csrf: csrf, phone: '', email: 'x' });
  assert.equal(bad.statusCode, 400);
  assert.match(
    bad.body,
    /id="nc-phone"[^>]*aria-invalid="true"[^>]*aria-describedby="nc-phone-hint nc-phone-error"/,
  );
  assert.match(bad.body, /id="nc-email"[^>]*aria-invalid="true"[^>]*aria-describedby="nc-email-error"/);
  assert.match(bad.body, /id="nc-phone"[^>]*autofocus/);
  assert.doesNotMatch(bad.body, /id="nc-email"[^>]*autofocus/);
  const ok = await post(cookie, '/app/contacts', {
    _csrf: csrf,
    phone: '+14155550199',
    from_call: '../evil',
  });
  assert.equal(ok.statusCode, 303);
  assert.match(String(ok.headers.location), /^\/app\/contacts\/[0-9a-f-]{36}\?done=created$/);
  const forged = await post(cookie, '/app/contacts', { phone: '+14155550166' });
  assert.equal(forged.statusCode, 403);
  const n = await h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM contacts WHERE organization_id = $1 AND phone_e164 = '+14155550166'`,
    [orgId],
  );
  assert.equal(n.rows[0].n, 0);
});

test("a contact's page lists only its organization's calls with its number, newest first", async () => {
  const older = await insertCall(h.db, {
    orgId,
    customerE164: '+14155550155',
    createdAt: new Date('2026-01-02T00:00:00Z'),
  });
  const newer = await insertCall(h.db, {
    orgId,
    customerE164: '+14155550155',
    createdAt: new Date('2026-01-05T00:00:00Z'),
  });
  const erased = await insertCall(h.db, { orgId, customerE164: '+14155550155', erasedAt: new Date() });
  const theirs = await insertCall(h.db, { orgId: otherOrg, customerE164: '+14155550155' });
  const c = await createContact(h.deps, tenantScope(orgId), { phone: '+14155550155' });
  const { cookie } = await signIn();
  const page = await h.app.inject({ url: `/app/contacts/${c.contact_id}`, headers: { cookie } });
  assert.equal(page.statusCode, 200);
  const ids = [...page.body.matchAll(/data-call-id="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(ids, [newer, older]);
  assert.ok(!ids.includes(erased) && !ids.includes(theirs));
});
