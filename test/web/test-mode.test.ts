import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  BROWSER_ENV,
  checkBoth,
  DEMO_OWNER,
  demoOrganization,
  newPage,
  screenshot,
  serve,
  signIn,
  startBrowser,
  watchCsp,
} from '../helpers/browser.ts';
import { insertCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

/**
 * The web app's test-mode switch in Chromium (spec/api-v1-additions.md "Test mode": "a visible
 * test-mode switch: in test mode every page shows test data only and says so on every screen; keys
 * and subscriptions created there are test ones"): the switch in the header of every page, the banner
 * on every page in test mode, each world's calls apart, a test key made on the integrations page, and
 * back to live. axe at 1280 and 390 px. Server-side details: test/tenant/environments.test.ts.
 */
let h: Harness;
let origin: string;
let browser: Browser;
let page: Page;
let liveCall: string;
let testCall: string;

const PAGES = ['/app/calls', '/app/contacts', '/app/trackers', '/app/settings/integrations'];
const BANNER = 'Test mode: you are seeing test data.';

before(async () => {
  h = await createHarness(BROWSER_ENV);
  origin = await serve(h);
  browser = await startBrowser();
  const { orgId } = await demoOrganization(h.db);
  liveCall = await insertCall(h.db, { orgId, callerName: 'Live Larry' });
  testCall = await insertCall(h.db, { orgId, callerName: 'Test Tina', environment: 'test' });
  page = await newPage(browser);
  await signIn(page, origin, DEMO_OWNER);
});
after(async () => {
  await browser?.close();
  await h?.close();
});

const banner = () => page.getByRole('note').filter({ hasText: BANNER });

test('the switch leads to test data, every page says so, a key made there is a test key, and back to live', async () => {
  const csp = watchCsp(page);
  for (const path of PAGES) {
    assert.equal((await page.goto(`${origin}${path}`))?.status(), 200, path);
    assert.equal(await page.getByRole('button', { name: 'Switch to test mode' }).count(), 1, path);
    assert.equal(await banner().count(), 0, `${path}: no banner in live mode`);
  }
  await page.goto(`${origin}/app/calls`);
  assert.equal((await page.getByText('Live Larry').count()) > 0, true);
  assert.equal(await page.getByText('Test Tina').count(), 0);

  await Promise.all([
    page.waitForURL(`${origin}/app/calls`),
    page.getByRole('button', { name: 'Switch to test mode' }).click(),
  ]);
  assert.equal(await banner().count(), 1);
  assert.equal((await page.getByText('Test Tina').count()) > 0, true);
  assert.equal(await page.getByText('Live Larry').count(), 0);
  await checkBoth(page, 'calls list in test mode');
  await screenshot(page, 'test-mode-calls');

  for (const path of [...PAGES, `/app/calls/${testCall}`]) {
    assert.equal((await page.goto(`${origin}${path}`))?.status(), 200, path);
    assert.equal(await banner().count(), 1, `${path}: the banner in test mode`);
    assert.equal(await page.getByRole('button', { name: 'Switch to live data' }).count(), 1, path);
  }
  // a live call is not there in test mode: 404, like an unknown id
  assert.equal((await page.goto(`${origin}/app/calls/${liveCall}`))?.status(), 404);

  // a key made in test mode is a test key (the form's choice is preset to the page's mode)
  await page.goto(`${origin}/app/settings/integrations`);
  assert.equal(await page.getByLabel(/Test data only/).isChecked(), true);
  await page.getByLabel('Name').fill('rehearsal');
  await Promise.all([
    page.waitForURL(/reveal=/),
    page.getByRole('button', { name: 'Create API key' }).click(),
  ]);
  const body = (await page.textContent('main')) ?? '';
  assert.match(body, /cc_test_[A-Za-z0-9_-]{43}/);
  assert.equal(await banner().count(), 1);
  await checkBoth(page, 'integrations page in test mode, the new test key');
  await screenshot(page, 'test-mode-new-key');

  await Promise.all([
    page.waitForURL(`${origin}/app/settings/integrations`),
    page.getByRole('button', { name: 'Switch to live data' }).click(),
  ]);
  assert.equal(await banner().count(), 0);
  await page.goto(`${origin}/app/calls`);
  assert.equal((await page.getByText('Live Larry').count()) > 0, true);
  assert.equal(await page.getByText('Test Tina').count(), 0);
  assert.deepEqual(csp, []);
});
