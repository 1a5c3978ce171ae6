import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { CONTENT_SECURITY_POLICY } from '../../src/http/public/pages/kit/security.ts';
import { cheapPasswordHash, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import {
  BROWSER_ENV,
  checkBoth,
  fillSignIn,
  newPage,
  postSignIn,
  screenshot,
  serve,
  signIn,
  startBrowser,
  watchCsp,
} from '../helpers/browser.ts';
import { insertCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let browser: Browser;
let origin: string;
let email: string;
let callId: string;

before(async () => {
  h = await createHarness(BROWSER_ENV);
  origin = await serve(h);
  browser = await startBrowser();
  const org = await orgWithLogin(h.db, cheapPasswordHash());
  email = org.email;
  callId = await insertCall(h.db, { orgId: org.orgId, callerName: 'Dana Whitfield' });
});

after(async () => {
  await browser?.close();
  await h?.close();
});

test('sign in with the form, land on the calls list, sign out again', async () => {
  const page = await newPage(browser);
  const csp = watchCsp(page);
  const res = await page.goto(`${origin}/app/login`);
  assert.equal(res?.status(), 200);
  assert.equal(res?.headers()['content-security-policy'], CONTENT_SECURITY_POLICY);
  assert.equal(res?.headers()['x-frame-options'], 'DENY');
  await checkBoth(page, 'sign-in page');
  await screenshot(page, 'sign-in');
  await fillSignIn(page, email);
  assert.equal(new URL(page.url()).pathname, '/app/calls');
  await assert.doesNotReject(page.locator('table.calls time', { hasText: '2026-06-01' }).first().waitFor());
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'cc_session');
  assert.equal(session?.httpOnly, true);
  assert.equal(session?.sameSite, 'Lax');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/app/login`);
  const again = await page.goto(`${origin}/app/calls`);
  assert.equal(new URL(again!.url()).pathname, '/app/login');
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('a wrong password says so, keeps the e-mail, and lets the user try again', async () => {
  const page = await newPage(browser);
  await page.goto(`${origin}/app/login`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('not the password');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  assert.equal(res.status(), 401);
  await page.waitForLoadState();
  assert.equal(
    (await page.getByRole('alert').textContent())?.trim(),
    'Wrong e-mail or password. Check both and try again.',
  );
  assert.equal(await page.getByLabel('E-mail').inputValue(), email);
  await checkBoth(page, 'sign-in page with an error');
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([
    page.waitForURL(/\/app\/calls$/),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  await page.context().close();
});

test('an app_url opened while signed out leads to sign-in and then to the call', async () => {
  const page = await newPage(browser);
  const path = `/app/calls/${callId}`;
  await page.goto(`${origin}${path}`);
  const at = new URL(page.url());
  assert.equal(at.pathname, '/app/login');
  assert.equal(at.searchParams.get('next'), path);
  await fillSignIn(page, email);
  assert.equal(page.url(), `${origin}${path}`);
  await page.context().close();
});

for (const next of [
  '//evil.example/app/calls',
  'https://evil.example/app/calls',
  '/\\evil.example',
  '/app/../..//evil.example',
  'javascript:alert(1)',
  '/app/api/session',
]) {
  test(`sign-in with next=${next} lands on the web app, not elsewhere`, async () => {
    const page = await newPage(browser);
    await page.goto(`${origin}/app/login?next=${encodeURIComponent(next)}`);
    await fillSignIn(page, email);
    assert.equal(page.url(), `${origin}/app/calls`);
    await page.context().close();
  });
}

test('the sign-in form needs its own token: a cross-site post is refused (login CSRF)', async () => {
  const res = await fetch(`${origin}/app/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, password: PASSWORD }),
    redirect: 'manual',
  });
  assert.equal(res.status, 403);
  assert.equal(res.headers.get('set-cookie')?.startsWith('cc_login_csrf='), true);
  assert.match(await res.text(), /The sign-in form had expired/);
});

test('too many attempts: 429 with Retry-After and a message that says how long to wait', async () => {
  const page = await newPage(browser);
  const victim = await orgWithLogin(h.db, cheapPasswordHash());
  // The attempts up to the cap are posted as the form posts them, over the page's own HTTP (the
  // throttle counts them alike; typing each into the page cost ~0.8 s); the refused one after them
  // is typed into the form, so the page shows what it says.
  let last = 0;
  for (let i = 0; i <= 20; i++) {
    const res = await postSignIn(page, origin, victim.email, 'wrong guess');
    last = res.status();
    if (last === 429) {
      assert.match(res.headers()['retry-after'] ?? '', /^[0-9]+$/);
      break;
    }
  }
  assert.equal(last, 429);
  await page.goto(`${origin}/app/login`);
  await page.getByLabel('E-mail').fill(victim.email);
  await page.getByLabel('Password').fill('wrong guess');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  assert.equal(res.status(), 429);
  assert.match(res.headers()['retry-after'] ?? '', /^[0-9]+$/);
  await page.waitForLoadState();
  assert.match(
    (await page.getByRole('alert').textContent()) ?? '',
    /Too many sign-in attempts\. For your account's safety, wait [0-9]+ seconds, then try again\./,
  );
  await page.context().close();
});

test('signIn helper reaches the calls list', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  assert.equal(new URL(page.url()).pathname, '/app/calls');
  await page.context().close();
});
