import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { HOUR } from '../../src/clock.ts';
import { login, PASSWORD } from '../helpers/app-api.ts';
import {
  BROWSER_ENV,
  checkBoth,
  DEMO_OWNER,
  demoOrganization,
  fillSignIn,
  newPage,
  screenshot,
  serve,
  startBrowser,
  watchCsp,
} from '../helpers/browser.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { type SmtpCapture, startSmtpCapture } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';

let h: Harness;
let origin: string;
let browser: Browser;
let smtp: SmtpCapture;

before(async () => {
  smtp = await startSmtpCapture();
  h = await createHarness({
    ...BROWSER_ENV,
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Call Capture <no-reply@callcap.test>',
  });
  origin = await serve(h);
  browser = await startBrowser();
  await demoOrganization(h.db);
});
after(async () => {
  await browser?.close();
  await h?.close();
  await smtp?.close();
});

const LINK = /http:\/\/127\.0\.0\.1\/app\/reset-password\?token=([A-Za-z0-9_-]{43})/;

/** Asks for a link through the form's HTTP post; answers the status and the page. */
const ask = (email: string, ip = '10.0.0.1') =>
  h.app.inject({
    method: 'POST',
    url: '/app/forgot-password',
    remoteAddress: ip,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ email }).toString(),
  });

async function mailTo(address: string, already: number): Promise<string> {
  await waitFor(
    async () => smtp.inbox.filter((m) => m.to.includes(address)).length > already,
    'the reset e-mail',
  );
  const mail = smtp.inbox.filter((m) => m.to.includes(address))[already];
  const token = LINK.exec(mail?.text ?? '')?.[1];
  assert.ok(token, `the e-mail carries the link: ${mail?.text}`);
  return token;
}

test('forgot password in Chromium: the link arrives by e-mail, sets a new password once, ends the old sessions', async () => {
  const before = await login(h, DEMO_OWNER);
  assert.equal((await before.get('/app/api/session')).status, 200);
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await page.goto(`${origin}/app/login`);
  await page.getByRole('link', { name: 'Forgot your password?' }).click();
  await page.waitForURL(`${origin}/app/forgot-password`);
  await checkBoth(page, 'forgot password');
  await screenshot(page, 'forgot-password');

  // An invalid address is marked on its field, which has the focus.
  await page.getByLabel('E-mail').fill('not an address');
  await page.getByRole('button', { name: 'Send the link' }).click();
  await page.waitForSelector('#email[aria-invalid="true"]');
  assert.equal(await page.getAttribute('#email', 'aria-describedby'), 'email-error');
  assert.equal(await page.textContent('#email-error'), 'Enter an e-mail address such as name@example.com.');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'email');
  await checkBoth(page, 'forgot password, invalid address');

  const sent = smtp.inbox.length;
  await page.getByLabel('E-mail').fill(DEMO_OWNER.toUpperCase());
  await page.getByRole('button', { name: 'Send the link' }).click();
  await page.getByText('If an account uses this address, we have sent it a link').waitFor();
  const token = await mailTo(DEMO_OWNER, 0);
  assert.equal(smtp.inbox.length, sent + 1);
  assert.equal(smtp.inbox.at(-1)?.from, 'no-reply@callcap.test');
  assert.match(smtp.inbox.at(-1)?.raw ?? '', /^Subject: Reset your Call Capture password$/m);

  await page.goto(`${origin}/app/reset-password?token=${token}`);
  await checkBoth(page, 'choose a new password');
  await screenshot(page, 'reset-password');
  await page.getByLabel('New password').fill('a brand new password');
  await page.getByLabel('Type it again').fill('a brand new passwork');
  await page.getByRole('button', { name: 'Set the new password' }).click();
  await page.waitForSelector('#confirm[aria-invalid="true"]');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'confirm');
  assert.equal(
    await page.textContent('#confirm-error'),
    'The two passwords differ. Type the same password twice.',
  );

  await page.getByLabel('New password').fill('a brand new password');
  await page.getByLabel('Type it again').fill('a brand new password');
  await Promise.all([
    page.waitForURL(`${origin}/app/login?done=password_reset`),
    page.getByRole('button', { name: 'Set the new password' }).click(),
  ]);
  assert.equal(
    (await page.getByRole('status').textContent())?.trim(),
    'Your password was changed. Sign in with your new password.',
  );
  await fillSignIn(page, DEMO_OWNER, 'a brand new password');
  assert.equal(new URL(page.url()).pathname, '/app/calls');
  assert.deepEqual(csp, []);

  // The session opened with the old password is over; the old password no longer works.
  assert.equal((await before.get('/app/api/session')).status, 401);
  const old = await h.app.inject({
    method: 'POST',
    url: '/app/api/login',
    payload: { email: DEMO_OWNER, password: PASSWORD },
  });
  assert.equal(old.statusCode, 401);

  // The link worked once.
  const again = await h.app.inject({ method: 'GET', url: `/app/reset-password?token=${token}` });
  assert.equal(again.statusCode, 400);
  assert.match(again.body, /This reset link has expired or was already used\./);
  await page.context().close();
});

test('the answer is the same for an unknown address, and no e-mail is sent', async () => {
  const mails = smtp.inbox.length;
  const known = await ask(DEMO_OWNER, '10.0.0.2');
  const unknown = await ask('nobody@demo-plumbing.example', '10.0.0.2');
  assert.equal(known.statusCode, 200);
  assert.equal(unknown.statusCode, 200);
  const notice = (body: string) => /<p class="notice ok" role="status">([^<]*)<\/p>/.exec(body)?.[1]?.trim();
  assert.equal(
    notice(unknown.body),
    'If an account uses this address, we have sent it a link to choose a new password.',
  );
  assert.equal(notice(known.body), notice(unknown.body));
  await mailTo(DEMO_OWNER, 1);
  assert.equal(smtp.inbox.length, mails + 1);
});

test('a link is dead after an hour, and a used link spends the user’s other links', async () => {
  const first = smtp.inbox.filter((m) => m.to.includes(DEMO_OWNER)).length;
  assert.equal((await ask(DEMO_OWNER, '10.0.0.3')).statusCode, 200);
  const stale = await mailTo(DEMO_OWNER, first);
  h.clock.advance(HOUR + 1);
  const late = await h.app.inject({ method: 'GET', url: `/app/reset-password?token=${stale}` });
  assert.equal(late.statusCode, 400);

  assert.equal((await ask(DEMO_OWNER, '10.0.0.3')).statusCode, 200);
  const a = await mailTo(DEMO_OWNER, first + 1);
  assert.equal((await ask(DEMO_OWNER, '10.0.0.3')).statusCode, 200);
  const b = await mailTo(DEMO_OWNER, first + 2);
  const post = (token: string, password: string, confirm = password) =>
    h.app.inject({
      method: 'POST',
      url: '/app/reset-password',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token, password, confirm }).toString(),
    });
  // Too short: the link stays live.
  const short = await post(a, 'short');
  assert.equal(short.statusCode, 400);
  assert.match(short.body, /Choose a password of 8 to 256 characters\./);
  const ok = await post(a, 'another good password');
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, '/app/login?done=password_reset');
  assert.equal((await post(b, 'yet another password')).statusCode, 400);
  assert.equal((await post('x'.repeat(43), 'yet another password')).statusCode, 400);
});

test('asking is throttled like sign-in: the sixth request a minute for one address answers 429 with Retry-After', async () => {
  h.clock.advance(HOUR);
  for (let i = 0; i < 5; i++) assert.equal((await ask('someone@example.com', '10.0.0.4')).statusCode, 200);
  const refused = await ask('someone@example.com', '10.0.0.4');
  assert.equal(refused.statusCode, 429);
  assert.match(String(refused.headers['retry-after']), /^\d+$/);
  assert.match(refused.body, /Too many requests for a reset link\. Wait \d+ seconds, then try again\./);
  // Another address from the same network still may.
  assert.equal((await ask('other@example.com', '10.0.0.4')).statusCode, 200);
});
