import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  BROWSER_ENV,
  checkBoth,
  DEMO_OWNER,
  demoOrganization,
  fillSignIn,
  newPage,
  screenshot,
  serve,
  signIn,
  startBrowser,
  watchCsp,
} from '../helpers/browser.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { type SmtpCapture, startSmtpCapture } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * A team in Chromium: the owner invites an agent (the e-mail caught by a test SMTP server), the
 * link is followed, the new member joins and signs in, the server refuses them an admin page (403)
 * and the console API (403 FORBIDDEN); the owner changes their role, then removes them, which
 * signs them out at once; the organization's time zone on the pages; a new API key survives a
 * reload. Every page is checked with axe at 1280 and 390 px wide. Server-side details:
 * test/web/team-http.test.ts.
 */
let h: Harness;
let origin: string;
let browser: Browser;
let smtp: SmtpCapture;
let owner: Page;
let agent: Page;

const AGENT = 'nia@demo-plumbing.example';
const AGENT_PASSWORD = 'a long agent password';

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
  owner = await newPage(browser);
  await signIn(owner, origin, DEMO_OWNER);
});
after(async () => {
  await browser?.close();
  await h?.close();
  await smtp?.close();
});

const notice = async (page: Page) => ((await page.getByRole('status').first().textContent()) ?? '').trim();
const alert = async (page: Page) => ((await page.getByRole('alert').first().textContent()) ?? '').trim();

test('the invitation flow: mail caught by SMTP, link followed, the agent joins and signs in, the server refuses them an admin page', async () => {
  const csp = watchCsp(owner);
  const res = await owner.goto(`${origin}/app/settings/team`);
  assert.equal(res?.status(), 200);
  await checkBoth(owner, 'team page');
  await screenshot(owner, 'team');

  await owner.getByLabel('E-mail').fill(AGENT);
  await owner.getByRole('radio', { name: /^Agent/ }).check();
  await Promise.all([
    owner.waitForURL(`${origin}/app/settings/team?done=invited`),
    owner.getByRole('button', { name: 'Send invitation' }).click(),
  ]);
  assert.match(await notice(owner), /^Invitation sent\./);
  assert.match(
    (await owner.locator('table.invitations tbody tr').textContent()) ?? '',
    /nia@demo-plumbing\.example\s*Agent/,
  );
  await checkBoth(owner, 'team page with an open invitation');

  await waitFor(async () => smtp.inbox.some((m) => m.to.includes(AGENT)), 'the invitation e-mail');
  const mail = smtp.inbox.find((m) => m.to.includes(AGENT));
  assert.equal(mail?.from, 'no-reply@callcap.test');
  assert.match(
    mail?.raw ?? '',
    /^Subject: owner@demo-plumbing\.example invited you to Demo Plumbing Co\. on\r\n Call Capture\r$/m,
  );
  const link = /http:\/\/127\.0\.0\.1(\/app\/invitation\?token=[A-Za-z0-9_-]{43})/.exec(
    mail?.text ?? '',
  )?.[1];
  assert.ok(link, `the e-mail carries the link: ${mail?.text}`);

  agent = await newPage(browser);
  const agentCsp = watchCsp(agent);
  await agent.goto(`${origin}${link}`);
  assert.match(
    (await agent.locator('main').textContent()) ?? '',
    /You are invited to Demo Plumbing Co\. as agent/,
  );
  await checkBoth(agent, 'invitation page');
  await screenshot(agent, 'invitation-accept');
  await agent.getByLabel('Your name').fill('Nia Agent');
  await agent.getByLabel('Choose a password').fill(AGENT_PASSWORD);
  await agent.getByLabel('Type it again').fill(`${AGENT_PASSWORD}!`);
  await agent.getByRole('button', { name: 'Join Demo Plumbing Co.' }).click();
  await agent.waitForSelector('#confirm[aria-invalid="true"]');
  assert.equal(await agent.evaluate(() => document.activeElement?.id), 'confirm');
  await agent.getByLabel('Choose a password').fill(AGENT_PASSWORD);
  await agent.getByLabel('Type it again').fill(AGENT_PASSWORD);
  await Promise.all([
    agent.waitForURL(`${origin}/app/settings/profile?done=welcome`),
    agent.getByRole('button', { name: 'Join Demo Plumbing Co.' }).click(),
  ]);
  assert.match(await notice(agent), /^Welcome! You are signed in\./);
  await agent.getByLabel('Your phone').fill('+1 415 555 2671');
  await Promise.all([
    agent.waitForURL(`${origin}/app/settings/profile?done=saved`),
    agent.getByRole('button', { name: 'Save profile' }).click(),
  ]);
  assert.equal(await agent.getByLabel('Your phone').inputValue(), '+14155552671');
  await checkBoth(agent, 'profile page');
  await screenshot(agent, 'profile');

  // Signed out, the new member signs in with the password they chose.
  await Promise.all([
    agent.waitForURL(/\/app\/login/),
    agent.getByRole('button', { name: 'Sign out' }).click(),
  ]);
  await fillSignIn(agent, AGENT, AGENT_PASSWORD);
  assert.equal(new URL(agent.url()).pathname, '/app/calls');
  assert.equal(await agent.getByRole('link', { name: 'Integrations' }).count(), 0);

  // The server refuses, whatever the navigation shows: the page and the console API.
  const refused = await agent.goto(`${origin}/app/settings/integrations`);
  assert.equal(refused?.status(), 403);
  assert.match(await alert(agent), /^Your role \(agent\) does not allow managing API keys and webhooks/);
  await checkBoth(agent, '403 page');
  await screenshot(agent, 'team-agent-refused');
  const api = await agent.request.get(`${origin}/app/api/api-keys`);
  assert.equal(api.status(), 403);
  assert.equal(((await api.json()) as { error: { code: string } }).error.code, 'FORBIDDEN');
  assert.equal((await agent.goto(`${origin}/app/settings/team`))?.status(), 403);

  await owner.goto(`${origin}/app/settings/team`);
  assert.match(
    (await owner.locator('table.members').textContent()) ?? '',
    /Nia Agent\s*nia@demo-plumbing\.example\s*Agent/,
  );
  assert.equal(await owner.locator('table.invitations').count(), 0, 'the invitation was used');
  assert.deepEqual(csp, []);
  assert.deepEqual(agentCsp, []);
});

test('a role change: the owner makes the agent an admin, whose next click reaches the integrations', async () => {
  await owner.goto(`${origin}/app/settings/team`);
  await owner.getByLabel('Role of Nia Agent', { exact: true }).selectOption('admin');
  await Promise.all([
    owner.waitForURL(`${origin}/app/settings/team?done=role_changed`),
    owner.getByRole('button', { name: 'Change the role of Nia Agent' }).click(),
  ]);
  assert.match(
    (await owner.locator('table.members').textContent()) ?? '',
    /Nia Agent\s*nia@demo-plumbing\.example\s*Admin/,
  );
  const res = await agent.goto(`${origin}/app/settings/integrations`);
  assert.equal(res?.status(), 200);

  // The last owner cannot step down.
  await owner.getByLabel('Role of owner@demo-plumbing.example', { exact: true }).selectOption('admin');
  const [refused] = await Promise.all([
    owner.waitForResponse((r) => r.request().method() === 'POST'),
    owner.getByRole('button', { name: 'Change the role of owner@demo-plumbing.example' }).click(),
  ]);
  assert.equal(refused.status(), 409);
  assert.equal(
    await alert(owner),
    'You cannot demote the last owner: make another member an owner first, then try again.',
  );
  await checkBoth(owner, 'team page, last owner refused');
});

test('removing a member: confirmed, and the member is signed out at their next click', async () => {
  await owner.goto(`${origin}/app/settings/team`);
  await owner.getByRole('link', { name: 'Remove Nia Agent' }).click();
  await owner.waitForURL(/\/remove$/);
  await checkBoth(owner, 'remove confirmation');
  await screenshot(owner, 'team-remove');
  await Promise.all([
    owner.waitForURL(`${origin}/app/settings/team?done=removed`),
    owner.getByRole('button', { name: 'Remove Nia Agent' }).click(),
  ]);
  assert.match(await notice(owner), /^Member removed/);
  assert.doesNotMatch((await owner.locator('table.members').textContent()) ?? '', /Nia Agent/);

  await agent.goto(`${origin}/app/contacts`);
  assert.equal(new URL(agent.url()).pathname, '/app/login');
  const { rows } = await h.db.query(
    `SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.name = 'Nia Agent'`,
  );
  assert.equal(rows.length, 0);
  await agent.context().close();
});

test("the organization's time zone: times on the pages in it, the UTC time on hover", async () => {
  await owner.goto(`${origin}/app/settings/organization`);
  await owner.getByLabel('Time zone').selectOption('Europe/Paris');
  await Promise.all([
    owner.waitForURL(`${origin}/app/settings/organization?done=saved`),
    owner.getByRole('button', { name: 'Save settings' }).click(),
  ]);
  assert.equal(await owner.getByLabel('Time zone').inputValue(), 'Europe/Paris');
  await checkBoth(owner, 'organization settings with a time zone');
  await screenshot(owner, 'organization-time-zone');

  await owner.goto(`${origin}/app/settings/team`);
  const time = owner.locator('table.members time').first();
  const at = new Date((await time.getAttribute('datetime')) ?? '');
  const paris = new Intl.DateTimeFormat('en-US', {
    timeZone: 'Europe/Paris',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(at);
  assert.match((await time.textContent()) ?? '', new RegExp(`^\\d{4}-\\d\\d-\\d\\d ${paris} GMT\\+[12]$`));
  assert.match((await time.getAttribute('title')) ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
  await screenshot(owner, 'team-time-zone');
});

test('creating an API key: the key shown after the redirect, a reload neither shows it again nor makes a second key', async () => {
  await owner.goto(`${origin}/app/settings/integrations`);
  // An empty name is refused on its field, which has the focus.
  await owner.getByRole('button', { name: 'Create API key' }).click();
  await owner.waitForSelector('#key-name[aria-invalid="true"]');
  assert.equal(await owner.evaluate(() => document.activeElement?.id), 'key-name');
  await checkBoth(owner, 'integrations, empty key form refused');

  await owner.getByLabel('Name').fill('Reload-safe key');
  await Promise.all([
    owner.waitForURL(/\/app\/settings\/integrations\?reveal=/),
    owner.getByRole('button', { name: 'Create API key' }).click(),
  ]);
  const key = ((await owner.locator('#new-key').textContent()) ?? '').trim();
  assert.match(key, /^cc_live_/);
  const reload = await owner.reload();
  assert.equal(reload?.status(), 200);
  assert.equal(await owner.locator('#new-key').count(), 0);
  assert.match(await notice(owner), /shown once and is not shown again/);
  const { rows } = await h.db.query(`SELECT 1 FROM api_keys WHERE name = 'Reload-safe key'`);
  assert.equal(rows.length, 1);
});
