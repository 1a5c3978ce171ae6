/**
 * Click-to-call in a real browser (Chromium through playwright-core): the owner signs in, places a
 * call with the "New call" page (linked from the calls list) against the fake Twilio, lands on the new call's
 * page ("Now: Ringing the agent"), and — as the fake plays Twilio's callbacks over the real socket —
 * sees the lifecycle advance on each reload until the call is completed. Also: a refused number
 * (400 page), the contacts' "Call" link and the call page's "Call back" with the agent's phone
 * remembered. Every page passes axe and reports no CSP violation.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { cheapPasswordHash } from '../helpers/app-api.ts';
import {
  BROWSER_ENV,
  checkBoth,
  newPage,
  screenshot,
  serve,
  signIn,
  startBrowser,
  watchCsp,
} from '../helpers/browser.ts';
import {
  type FakeTwilio,
  outboundCallOf,
  startFakeTwilio,
  type TwilioAccount,
} from '../helpers/fake-twilio.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin } from '../helpers/http.ts';

let fake: FakeTwilio;
let h: Harness;
let browser: Browser;
let origin: string;
let orgId: string;
let account: TwilioAccount;
// Fixed names and numbers, so the screenshots in docs/console/ only change when the pages do.
const email = 'owner@demo-plumbing.example';
const NUMBERS = ['+14155550100', '+14155550101'];
const AGENT = '+14155550142';

before(async () => {
  // The browser needs an http PUBLIC_BASE_URL (BROWSER_ENV); the fake signs its callbacks over it.
  fake = await startFakeTwilio({ publicBaseUrl: BROWSER_ENV.PUBLIC_BASE_URL });
  h = await createHarness({ ...BROWSER_ENV, TWILIO_API_BASE_URL: fake.url });
  origin = await serve(h);
  fake.serviceOrigin = origin;
  browser = await startBrowser();
  const org = await insertOrg(h.db, { name: 'Demo Plumbing Co.', country: 'US' });
  orgId = org.orgId;
  await h.db.query('UPDATE users SET email = $1, password_hash = $2 WHERE id = $3', [
    email,
    cheapPasswordHash(),
    org.ownerId,
  ]);
  account = fake.addAccount();
  const put = await admin(h, 'PUT', `/organizations/${orgId}/telephony`, {
    provider: 'twilio',
    account_sid: account.accountSid,
    auth_token: account.authToken,
  });
  assert.equal(put.statusCode, 200, put.body);
  for (const number of NUMBERS) {
    const res = await admin(h, 'POST', `/organizations/${orgId}/phone-numbers`, { number });
    assert.equal(res.statusCode, 201, res.body);
  }
});

after(async () => {
  await browser?.close();
  await h?.close();
  await fake?.close();
});

const stages = async (page: Page) =>
  (await page.locator('ol.timeline li').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());

/** Reloads the call page and answers its timeline. */
async function reloadStages(page: Page): Promise<string[]> {
  const res = await page.reload();
  assert.equal(res?.status(), 200);
  return stages(page);
}

test('place a call from the calls list and follow its lifecycle as Twilio calls back', async () => {
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  assert.equal(new URL(page.url()).pathname, '/app/calls');
  await Promise.all([
    page.waitForURL(/\/app\/calls\/new$/),
    page.getByRole('link', { name: 'New call' }).click(),
  ]);
  const form = page.locator('form#new-call');
  assert.equal(await form.isVisible(), true);
  assert.equal(await form.getByLabel('Your phone').inputValue(), '', 'no call yet: nothing to remember');
  await form.getByLabel("Customer's number").fill('(415) 555-2671');
  await form.getByLabel('Your phone').fill('415 555 0142');
  await form.getByLabel('Call from').selectOption(NUMBERS[1]!);
  await checkBoth(page, 'the New call page, filled in');
  await screenshot(page, 'call-outbound-form');

  await Promise.all([
    page.waitForURL(/\/app\/calls\/[0-9a-f-]{36}\?done=calling$/),
    form.getByRole('button', { name: 'Call' }).click(),
  ]);
  const id = new URL(page.url()).pathname.split('/')[3]!;
  assert.equal(
    (await page.getByRole('status').textContent())?.replace(/\s+/g, ' ').trim(),
    'Calling: your phone rings first. Answer it and press a key to be put through to the customer. Reload this page to follow the call.',
  );
  // A customer without a name is called by the number, not "Unknown caller".
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Call to (415) 555-2671');
  assert.deepEqual(await stages(page), ['Now: Ringing the agent']);
  const facts = (await page.locator('dl.facts').first().innerText()).replace(/\s+/g, ' ');
  assert.match(
    facts,
    /^Customer \(415\) 555-2671 \(\+14155552671\) Contact Not a contact yet \(save as contact\) When/,
  );
  assert.match(facts, /Went out from \(415\) 555-0101 /);
  assert.match(facts, new RegExp(`Agent ${email}`));
  await checkBoth(page, 'call page of a call just placed');
  await screenshot(page, 'call-outbound-placed');

  // The fake Twilio rings the agent from the chosen number and plays the callbacks.
  const leg = outboundCallOf(fake, account);
  assert.equal(leg.created.params.To, AGENT);
  assert.equal(leg.created.params.From, NUMBERS[1]);
  await leg.agentStatus('initiated');
  await leg.agentStatus('ringing');
  assert.deepEqual(await reloadStages(page), ['Now: Ringing the agent']);
  await leg.answer();
  await leg.agentStatus('in-progress');
  assert.deepEqual(await reloadStages(page), ['Done: Ringing the agent', 'Now: The agent answered']);
  await leg.pressDigits('1');
  assert.deepEqual((await reloadStages(page)).at(-1), 'Now: Ringing the customer');
  await leg.customerStatus('initiated');
  await leg.customerStatus('ringing');
  await leg.customerStatus('in-progress');
  assert.deepEqual((await reloadStages(page)).at(-1), 'Now: Connected');
  await leg.customerStatus('completed', { CallDuration: '42' });
  await leg.dialEnded('completed', 42);
  await leg.agentStatus('completed', { CallDuration: '55' });
  assert.deepEqual(await reloadStages(page), [
    'Done: Ringing the agent',
    'Done: The agent answered',
    'Done: Ringing the customer',
    'Done: Connected',
    'Done: Completed',
  ]);
  const { rows } = await h.db.query('SELECT outbound_lifecycle FROM calls WHERE id = $1', [id]);
  assert.equal(rows[0]!.outbound_lifecycle, 'completed');

  // "Call back" on the call page: the customer's number and the agent's phone (remembered) are filled in.
  const back = page.locator('form#call-back');
  assert.equal(await back.getByLabel("Customer's number").inputValue(), '+14155552671');
  assert.equal(await back.getByLabel('Your phone').inputValue(), AGENT);
  await checkBoth(page, 'call page of a completed outbound call');
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('a number that cannot be dialled is refused on the page (400) and nothing rings', async () => {
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  const res = await page.goto(`${origin}/app/calls/new`);
  assert.equal(res?.status(), 200);
  const form = page.locator('form#new-call');
  assert.equal(await form.getByLabel('Your phone').inputValue(), AGENT, 'the last phone used');
  await form.getByLabel("Customer's number").fill('555');
  const placed = fake.createdCalls.length;
  const [reply] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    form.getByRole('button', { name: 'Call' }).click(),
  ]);
  await page.waitForLoadState();
  assert.equal(reply.status(), 400);
  assert.equal(
    (await page.getByRole('alert').textContent())?.replace(/\s+/g, ' ').trim(),
    "The customer's number is not a phone number that can be dialled. Write it with its country code (+14155552671) or as dialled in US.",
  );
  assert.equal(await page.locator('form#new-call').getByLabel("Customer's number").inputValue(), '555');
  assert.equal(fake.createdCalls.length, placed);
  await checkBoth(page, 'New call page with a refused number');
  assert.deepEqual(csp, []);
  await page.context().close();
});

test("a contact's Call link and the contact page's Call form", async () => {
  const { contact_id: id } = await createContact(h.deps, tenantScope(orgId), {
    phone: '+14155550177',
    first_name: 'Ana',
    last_name: 'Lima',
  });
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/contacts`);
  await checkBoth(page, 'contacts list with Call links');
  await Promise.all([
    page.waitForURL(new RegExp(`/app/calls/new\\?contact=${id}$`)),
    page.getByRole('link', { name: 'Call Ana Lima' }).click(),
  ]);
  assert.equal(await page.getByLabel("Customer's number").inputValue(), '+14155550177');
  await checkBoth(page, 'New call page for a contact');
  await page.goto(`${origin}/app/contacts/${id}`);
  const form = page.locator('form#call-contact');
  assert.equal(await form.getByLabel("Customer's number").inputValue(), '+14155550177');
  assert.equal(await form.getByLabel('Your phone').inputValue(), AGENT);
  await checkBoth(page, 'contact page with the Call form');
  await Promise.all([
    page.waitForURL(/\/app\/calls\/[0-9a-f-]{36}\?done=calling$/),
    form.getByRole('button', { name: 'Call' }).click(),
  ]);
  assert.deepEqual(await stages(page), ['Now: Ringing the agent']);
  assert.equal(outboundCallOf(fake, account).created.params.From, NUMBERS[0], 'the first number by default');
  assert.deepEqual(csp, []);
  await page.context().close();
});
