import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { CONTENT_SECURITY_POLICY } from '../../src/http/public/pages/kit/security.ts';
import {
  checkBoth,
  DEMO_MEMBER,
  demoOrganization,
  newPage,
  screenshot,
  signIn,
  startWebApp,
  type WebApp,
  watchCsp,
} from '../helpers/browser.ts';
import type { Harness } from '../helpers/harness.ts';

let h: Harness;
let browser: Browser;
let origin: string;
let email: string;
let orgId: string;
let memberEmail: string;
let app: WebApp;

before(async () => {
  app = await startWebApp();
  ({ h, origin, browser } = app);
  ({ orgId, email } = await demoOrganization(h.db, { member: true }));
  memberEmail = DEMO_MEMBER;
});

after(async () => {
  await app?.close();
});

async function post(page: Page, name: string | RegExp): Promise<number> {
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name }).click(),
  ]);
  await page.waitForLoadState();
  return res.status();
}

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).first().innerText()).replace(/\s+/g, ' ').trim();

async function open(page: Page, path: string): Promise<void> {
  const res = await page.goto(`${origin}${path}`);
  assert.equal(res?.status(), 200, path);
  assert.equal(res?.headers()['content-security-policy'], CONTENT_SECURITY_POLICY, path);
  assert.equal(res?.headers()['x-frame-options'], 'DENY', path);
}

test('contacts: search the list, edit one, and contact.updated carries exactly the changed fields', async () => {
  const { contact_id: id } = await createContact(h.deps, tenantScope(orgId), {
    phone: '+14155550123',
    first_name: 'Ana',
    last_name: 'Lima',
    company: 'Lima Plumbing',
  });
  await createContact(h.deps, tenantScope(orgId), {
    phone: '+14155550199',
    first_name: 'Ben',
    email: 'ben@example.test',
  });
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  await open(page, '/app/contacts');
  assert.equal(await page.locator('table.contacts tbody tr').count(), 2);
  await checkBoth(page, 'contacts list');
  await screenshot(page, 'contacts');
  await page.getByLabel('Search').fill('lima');
  await Promise.all([page.waitForURL(/q=lima/), page.getByRole('button', { name: 'Search' }).click()]);
  assert.equal(await page.locator('table.contacts tbody tr').count(), 1);

  await page.getByRole('link', { name: 'Ana Lima' }).click();
  await page.waitForURL(`${origin}/app/contacts/${id}`);
  await checkBoth(page, 'contact page');
  await screenshot(page, 'contact-edit');
  await page.getByLabel('E-mail').fill('ana@lima.example');
  await page.getByLabel('Tags').fill('vip, north');
  await page.getByLabel('Company').fill('Lima Plumbing'); // unchanged: not in the diff
  assert.equal(await post(page, 'Save contact'), 303);
  assert.match(page.url(), /done=saved/);
  assert.match(await text(page, '[role="status"]'), /Contact saved/);
  const { rows } = await h.db.query<{ body: string }>(
    `SELECT body FROM events WHERE event_type = 'contact.updated' AND resource_id = $1`,
    [id],
  );
  assert.equal(rows.length, 1);
  const event = JSON.parse(rows[0]!.body) as { data: { contact_id: string; diff: Record<string, unknown> } };
  assert.deepEqual(event.data, {
    contact_id: id,
    diff: { email: 'ana@lima.example', tags: ['vip', 'north'] },
  });

  // A save that changes nothing emits nothing; a bad e-mail re-renders the form with the message.
  assert.equal(await post(page, 'Save contact'), 303);
  assert.match(page.url(), /done=unchanged/);
  await page.getByLabel('E-mail').fill('not-an-email');
  await page.getByLabel('E-mail').evaluate((el) => el.setAttribute('type', 'text')); // past the browser's own check
  assert.equal(await post(page, 'Save contact'), 400);
  assert.match(await text(page, '[role="alert"]'), /e-mail address/);
  assert.equal(await page.getByLabel('E-mail').inputValue(), 'not-an-email');
  await checkBoth(page, 'contact page with an error');
  const after = await h.db.query(
    `SELECT 1 FROM events WHERE event_type = 'contact.updated' AND resource_id = $1`,
    [id],
  );
  assert.equal(after.rows.length, 1);
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('trackers: create, edit, delete after confirming', async () => {
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, memberEmail);
  await open(page, '/app/trackers');
  await checkBoth(page, 'trackers (empty)');
  await page.getByLabel('Name').fill('Cancellations');
  await page.getByLabel('Terms').fill('cancel\nrefund, Cancel');
  assert.equal(await post(page, 'Create tracker'), 303);
  assert.match(
    await text(page, 'table.trackers tbody tr'),
    /^Cancellations cancel, refund 2026-06-15 10:00 UTC$/,
  );
  await checkBoth(page, 'trackers list');
  await screenshot(page, 'trackers');

  await page.getByRole('link', { name: 'Cancellations' }).click();
  await page.waitForURL(/\/app\/trackers\/[0-9a-f-]{36}$/);
  await checkBoth(page, 'tracker page');
  await screenshot(page, 'tracker-edit');
  await page.getByLabel('Name').fill('Churn');
  await page.getByLabel('Terms').fill('cancel\nrefund\nswitch provider');
  assert.equal(await post(page, 'Save tracker'), 303);
  const { rows } = await h.db.query<{ name: string; terms: string[] }>(
    'SELECT name, terms FROM trackers WHERE organization_id = $1',
    [orgId],
  );
  assert.deepEqual(rows, [{ name: 'Churn', terms: ['cancel', 'refund', 'switch provider'] }]);

  await page.getByLabel('Terms').fill('');
  await page.getByLabel('Terms').evaluate((el) => el.removeAttribute('required'));
  assert.equal(await post(page, 'Save tracker'), 400);
  assert.match(await text(page, '[role="alert"]'), /must list 1 to 50 terms/);

  await page.getByRole('checkbox', { name: /Yes, delete the tracker/ }).check();
  page.once('dialog', (d) => void d.accept());
  assert.equal(await post(page, 'Delete tracker'), 303);
  assert.match(page.url(), /\/app\/trackers\?done=deleted$/);
  const gone = await h.db.query('SELECT 1 FROM trackers WHERE organization_id = $1', [orgId]);
  assert.equal(gone.rows.length, 0);
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('organization settings: the owner changes retention and language; an agent is refused the page and the post', async () => {
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  await open(page, '/app/settings/organization');
  await checkBoth(page, 'organization settings');
  await page.getByLabel('Keep calls for (days)').fill('90');
  await page.getByLabel('Account language').selectOption('de');
  await page.getByLabel('Play an announcement before an inbound call is recorded').check();
  await page.getByLabel('What the announcement says').fill('Dieses Gespräch wird aufgezeichnet.');
  await page.getByLabel('Announcement language').fill('de-DE');
  assert.equal(await post(page, 'Save settings'), 303);
  assert.match(await text(page, '[role="status"]'), /Settings saved/);
  await screenshot(page, 'organization-settings');
  const { rows } = await h.db.query<{ retention_days: number; language: string }>(
    'SELECT retention_days, language FROM organizations WHERE id = $1',
    [orgId],
  );
  assert.deepEqual(rows, [{ retention_days: 90, language: 'de' }]);
  const consent = await h.db.query(
    'SELECT recording_consent_enabled, recording_consent_text, recording_consent_language FROM organizations WHERE id = $1',
    [orgId],
  );
  assert.deepEqual(consent.rows, [
    {
      recording_consent_enabled: true,
      recording_consent_text: 'Dieses Gespräch wird aufgezeichnet.',
      recording_consent_language: 'de-DE',
    },
  ]);
  await page.getByLabel('Announcement language').fill('not a tag');
  assert.equal(await post(page, 'Save settings'), 400);
  assert.match(await text(page, '[role="alert"]'), /language tag/);
  await page.getByLabel('Announcement language').fill('de-DE');
  await page.getByLabel('Keep calls for (days)').fill('');
  assert.equal(await post(page, 'Save settings'), 303);
  const cleared = await h.db.query('SELECT retention_days FROM organizations WHERE id = $1', [orgId]);
  assert.deepEqual(cleared.rows, [{ retention_days: null }]);
  assert.deepEqual(csp, []);
  await page.context().close();

  const member = await newPage(browser);
  await signIn(member, origin, memberEmail);
  // The demo member is an agent (accounts/roles.ts): the server refuses the page itself.
  const refused = await member.goto(`${origin}/app/settings/organization`);
  assert.equal(refused?.status(), 403);
  assert.match((await member.getByRole('alert').textContent()) ?? '', /Your role \(agent\) does not allow/);
  await checkBoth(member, 'organization settings refused (agent)');
  const csrf = await member.locator('input[name="_csrf"]').first().inputValue();
  const r = await member.request.post(`${origin}/app/settings/organization`, {
    form: { _csrf: csrf, retention_days: '1', language: 'en' },
  });
  assert.equal(r.status(), 403);
  const unchanged = await h.db.query('SELECT language FROM organizations WHERE id = $1', [orgId]);
  assert.deepEqual(unchanged.rows, [{ language: 'de' }]);
  await member.context().close();
});
