import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CONTENT_SECURITY_POLICY } from '../../src/http/public/pages/kit/security.ts';
import {
  checkBoth,
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
let app: WebApp;

before(async () => {
  app = await startWebApp();
  ({ h, origin, browser } = app);
  ({ email } = await demoOrganization(h.db));
});

after(async () => {
  await app?.close();
});

/** Replaces a one-time secret on the page before a screenshot: no real-looking secret goes into docs/. */
export async function maskSecret(page: Page, selector: string): Promise<void> {
  await page.locator(selector).evaluate((el) => {
    el.textContent = `${(el.textContent ?? '').slice(0, 12)}… (hidden in this screenshot)`;
  });
}

test('create an API key with read.recordings as its own consent, use it against /api/v1/me, revoke it', async () => {
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  const res = await page.goto(`${origin}/app/settings/integrations`);
  assert.equal(res?.status(), 200);
  assert.equal(res?.headers()['content-security-policy'], CONTENT_SECURITY_POLICY);
  assert.equal(res?.headers()['cache-control'], 'no-store');
  await checkBoth(page, 'integrations page');
  await screenshot(page, 'integrations');

  await page.getByLabel('Name').fill('CRM sync');
  const consent = page.getByRole('checkbox', { name: /I allow this key to download call recordings/ });
  assert.equal(await consent.isChecked(), false, 'recordings are never pre-selected');
  await consent.check();
  // Post/redirect/get: the POST answers 303, the page it leads to shows the key once.
  const [created] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Create API key' }).click(),
  ]);
  assert.equal(created.status(), 303);
  await page.waitForURL(/\/app\/settings\/integrations\?reveal=[A-Za-z0-9_-]{22}#new-key-title$/);
  const key = (await page.locator('#new-key').textContent())?.trim() ?? '';
  assert.match(key, /^cc_live_[A-Za-z0-9_-]{43}$/);
  assert.ok(!page.url().includes(key), 'the key is never in a URL');
  await checkBoth(page, 'integrations page with a new key');
  await maskSecret(page, '#new-key');
  await screenshot(page, 'integrations-new-key');

  // curl semantics: a plain HTTP request with the key, no cookie.
  const me = await fetch(`${origin}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(me.status, 200);
  const body = (await me.json()) as { data: { scopes: string[]; organization_id: string } };
  assert.deepEqual(body.data.scopes, ['read.calls', 'read.recordings']);

  // The list shows the prefix, scopes, created and last used; never the key again.
  const list = await page.goto(`${origin}/app/settings/integrations`);
  const html = (await list?.text()) ?? '';
  assert.ok(!html.includes(key), 'the key is shown once only');
  const row = page.locator('table.keys tbody tr').first();
  assert.match((await row.textContent()) ?? '', /CRM sync/);
  assert.match((await row.textContent()) ?? '', new RegExp(`${key.slice(0, 12)}…`));
  assert.match((await row.textContent()) ?? '', /read\.calls\s*read\.recordings/);
  assert.doesNotMatch((await row.textContent()) ?? '', /never/, 'the key was used: last used is set');

  await page.getByRole('link', { name: 'Revoke CRM sync' }).click();
  await page.waitForURL(/\/revoke$/);
  await checkBoth(page, 'revoke confirmation');
  await screenshot(page, 'integrations-revoke-key');
  await Promise.all([
    page.waitForURL(/done=key_revoked/),
    page.getByRole('button', { name: 'Revoke the key' }).click(),
  ]);
  assert.match((await page.getByRole('status').textContent()) ?? '', /revoked/);
  const after = await fetch(`${origin}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(after.status, 401);
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('a key without any scope is refused with the form kept; read.recordings sent as a plain scope is ignored', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/settings/integrations`);
  await page.getByLabel('Name').fill('nothing');
  await page
    .getByRole('checkbox', { name: /read\.calls/ })
    .first()
    .uncheck();
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Create API key' }).click(),
  ]);
  assert.equal(res.status(), 400);
  assert.equal(
    (await page.getByRole('alert').textContent())?.trim(),
    'Choose at least one scope: tick "read.calls" to read calls.',
  );
  assert.equal(await page.getByLabel('Name').inputValue(), 'nothing');
  await checkBoth(page, 'integrations page with a form error');

  // A crafted post naming read.recordings as an ordinary scope does not get audio access.
  const csrf = await page.locator('#create-key input[name="_csrf"]').inputValue();
  const r = await page.request.post(`${origin}/app/settings/integrations/api-keys`, {
    form: { _csrf: csrf, name: 'sneaky', scopes: 'read.recordings' },
  });
  assert.equal(r.status(), 400);
  const { rows } = await h.db.query("SELECT 1 FROM api_keys WHERE name = 'sneaky'");
  assert.equal(rows.length, 0);
  await page.context().close();
});

test('a form post without the CSRF token is refused and creates nothing', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  const r = await page.request.post(`${origin}/app/settings/integrations/api-keys`, {
    form: { name: 'no-csrf', scopes: 'read.calls' },
  });
  assert.equal(r.status(), 403);
  const { rows } = await h.db.query("SELECT 1 FROM api_keys WHERE name = 'no-csrf'");
  assert.equal(rows.length, 0);
  await page.context().close();
});
