import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { verifyWebhook } from '../../sdk/src/webhooks/verify.ts';
import { createContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
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
import { type ReceivedRequest, receiverPool } from '../helpers/receiver.ts';
import { drain } from '../helpers/webhooks.ts';

let h: Harness;
let browser: Browser;
let origin: string;
let email: string;
let orgId: string;
const receivers = receiverPool();
let app: WebApp;

before(async () => {
  app = await startWebApp();
  ({ h, origin, browser } = app);
  ({ orgId, email } = await demoOrganization(h.db));
});

after(async () => {
  await receivers.closeAll();
  await app?.close();
});

async function maskSecret(page: Page, selector: string): Promise<void> {
  await page.locator(selector).evaluate((el) => {
    el.textContent = `${(el.textContent ?? '').slice(0, 10)}… (hidden in this screenshot)`;
  });
}

/** The subscription's page with a one-time reveal of its new signing secret (post/redirect/get). */
const REVEAL_URL =
  /\/app\/settings\/integrations\/webhooks\/[0-9a-f-]{36}\?reveal=[A-Za-z0-9_-]{22}#secret-title$/;

const isHandshake = (r: ReceivedRequest) => r.body.includes('"webhook.subscription.verify"');

/** Verifies a delivery with the SDK's verifier (an independent check of the signature) against `secrets`. */
function verifies(r: ReceivedRequest, secrets: string | string[]): boolean {
  try {
    verifyWebhook(r.body, r.headers, secrets, { now: () => h.clock.now().getTime() });
    return true;
  } catch {
    return false;
  }
}

/**
 * Clicks a button that posts a form and answers with a page; returns that answer's status. The fake
 * clock moves on a second first, so what each click creates sorts after what came before.
 */
async function post(page: Page, name: string | RegExp): Promise<number> {
  h.clock.advance(1000);
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name }).click(),
  ]);
  await page.waitForLoadState();
  return res.status();
}

/** The visible text of the first element matching selector, whitespace collapsed (innerText: cells and terms separated). */
const text = async (page: Page, selector: string) =>
  (await page.locator(selector).first().innerText()).replace(/\s+/g, ' ').trim();

test('a subscription from creation to re-verification: handshake, test, rotations, pause, resend, bulk resend', async () => {
  let mode: 'echo' | 'reject' = 'echo';
  const rx = await receivers.start((req, res) => {
    if (isHandshake(req)) {
      const { challenge } = JSON.parse(req.body) as { challenge: string };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge }));
    } else if (mode === 'reject') {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad signature"}');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    }
  });
  const events = () => rx.requests.filter((r) => !isHandshake(r));
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/settings/integrations`);

  // Create: strict mode, every event type; the handshake runs at once. Post/redirect/get: the POST
  // answers 303 to the subscription's page with a one-time reveal id (never the secret) in the address.
  await page.getByLabel('Receiver URL').fill(rx.url);
  await page.getByRole('radio', { name: /^Strict/ }).check();
  assert.equal(await post(page, 'Create subscription'), 303);
  await page.waitForURL(REVEAL_URL);
  assert.equal(
    await text(page, '[role="status"]'),
    'Webhook subscription created. Copy its signing secret now: it is shown only this once.',
  );
  assert.match(
    await text(page, '#handshake-outcome'),
    /^Your endpoint answered HTTP 200 and echoed the challenge \(\d+ ms\), so the subscription is active\.$/,
  );
  const secret1 = (await page.locator('#signing-secret').textContent())?.trim() ?? '';
  assert.match(secret1, /^whsec_/);
  assert.ok(!page.url().includes(secret1), 'the secret is not in the address');
  const subId = await subscriptionId();
  assert.ok(page.url().startsWith(`${origin}/app/settings/integrations/webhooks/${subId}?reveal=`));
  assert.match(await text(page, 'dl.facts'), /State Active/);
  await checkBoth(page, 'subscription page after creation');
  await maskSecret(page, '#signing-secret');
  await screenshot(page, 'webhook-created');
  // A reload asks for the page again (GET), not the creation: no second subscription, no second
  // handshake, and the secret is not shown again.
  const handshakes = rx.requests.filter(isHandshake).length;
  await page.reload();
  assert.equal(await page.locator('#signing-secret').count(), 0);
  assert.equal(await page.locator('#handshake-outcome').count(), 0);
  assert.equal(
    await text(page, '[role="status"]'),
    'The new signing secret was shown once and is not shown again. If you did not copy it, start a rotation below to get another.',
  );
  assert.equal(rx.requests.filter(isHandshake).length, handshakes);
  const subs = await h.db.query(
    'SELECT 1 FROM webhook_subscriptions WHERE organization_id = $1 AND url = $2',
    [orgId, rx.url],
  );
  assert.equal(subs.rows.length, 1);
  const pagePath = `/app/settings/integrations/webhooks/${subId}`;
  const pageRes = await page.goto(`${origin}${pagePath}`);
  assert.equal(pageRes?.headers()['content-security-policy'], CONTENT_SECURITY_POLICY);
  assert.ok(!((await pageRes?.text()) ?? '').includes(secret1), 'the secret is shown once only');

  // Send a test: signed with the secret shown at creation.
  await post(page, 'Send a test event');
  assert.match(page.url(), /done=test_sent/);
  assert.equal(await drain(h.deps), 1);
  assert.equal(events().length, 1);
  assert.equal(events()[0]?.headers['service-event-type'], 'webhook.test');
  assert.ok(verifies(events()[0]!, secret1));
  await page.reload();
  const row = await text(page, 'table.deliveries tbody tr');
  assert.match(row, /webhook\.test/);
  assert.match(row, /Delivered/);
  assert.match(row, /HTTP 200 in \d+ ms \{"ok":true\}/);
  await checkBoth(page, 'subscription page with its delivery log');
  await screenshot(page, 'webhook-subscription');

  // Standard rotation: the new secret once (after a redirect, like at creation), pending for 24 h, a
  // test signed with it, activation, 1 h grace.
  assert.equal(await post(page, 'Start a rotation'), 303);
  await page.waitForURL(REVEAL_URL);
  assert.equal(
    await text(page, '[role="status"]'),
    'A new secret is waiting for activation (up to 24 hours). Deliveries are still signed with the current one.',
  );
  const secret2 = (await page.locator('#signing-secret').textContent())?.trim() ?? '';
  assert.match(secret2, /^whsec_/);
  assert.notEqual(secret2, secret1);
  assert.match(
    await text(page, '#pending-rotation'),
    /waiting for activation until 2026-06-16 10:00 UTC \(24 h 0 min left\)/,
  );
  await checkBoth(page, 'subscription page with a pending rotation');
  await maskSecret(page, '#signing-secret');
  await screenshot(page, 'webhook-rotation-pending');
  await post(page, 'Send a test signed with the new secret');
  assert.match(page.url(), /done=rotation_test_sent/);
  assert.equal(await drain(h.deps), 1);
  const rotationTest = events()[1]!;
  assert.ok(rotationTest.headers['service-secret-rotation-id']);
  assert.ok(verifies(rotationTest, secret2));
  assert.ok(!verifies(rotationTest, secret1), 'signed with the pending secret, not the current one');
  await post(page, 'Activate the new secret');
  assert.match(page.url(), /done=rotation_activated/);
  assert.match(await text(page, '#grace'), /until 2026-06-15 11:00 UTC \(1-hour grace, 1 h 0 min left\)/);
  await screenshot(page, 'webhook-rotation-activated');

  // Pause through the receiver's replies: a 401 pauses at once and dead-letters the delivery.
  mode = 'reject';
  await post(page, 'Send a test event');
  assert.equal(await drain(h.deps), 1);
  assert.ok(verifies(events()[2]!, secret2), 'signed with the activated secret');
  await page.goto(`${origin}${pagePath}`);
  assert.match(
    await text(page, 'dl.facts'),
    /State Paused Your endpoint answered 401, 403 or 422 \(often a wrong signing secret in the receiver\); that delivery was dead-lettered\. Paused at 2026-06-15 10:00 UTC\./,
  );
  assert.match(
    await text(page, 'table.deliveries tbody tr'),
    /Dead-lettered Your endpoint answered 401: not retried\..*HTTP 401 in \d+ ms \{"error":"bad signature"\}/,
  );
  assert.equal(
    await page.getByRole('button', { name: 'Send a test event' }).count(),
    0,
    'no test while paused',
  );
  await checkBoth(page, 'paused subscription');
  await screenshot(page, 'webhook-paused');
  const mail = await h.db.query<{ body: string }>(
    'SELECT body FROM email_outbox WHERE organization_id = $1',
    [orgId],
  );
  assert.equal(mail.rows.length, 1);
  assert.ok(
    mail.rows[0]?.body.includes(`Open the subscription: http://127.0.0.1${pagePath}`),
    'the e-mail links to the page',
  );

  // Re-verify: the handshake's outcome in words, active again.
  mode = 'echo';
  assert.equal(await post(page, 'Re-verify'), 200);
  assert.match(await text(page, '#handshake-outcome'), /answered HTTP 200 and echoed the challenge/);
  assert.match(await text(page, 'dl.facts'), /State Active/);

  // Resend one from the delivery log, filtered to dead-lettered deliveries.
  await page.goto(`${origin}${pagePath}`);
  await page.getByLabel('Status').selectOption('dead_lettered');
  await Promise.all([
    page.waitForURL(/status=dead_lettered/),
    page.getByRole('button', { name: 'Filter' }).click(),
  ]);
  assert.equal(await page.locator('table.deliveries tbody tr').count(), 1);
  const deadEventId = events()[2]!.headers['service-event-id'];
  await post(page, /^Resend webhook\.test/);
  assert.match(page.url(), /done=resent.*status=dead_lettered|status=dead_lettered.*done=resent/);
  assert.equal(await drain(h.deps), 1);
  assert.equal(events()[3]?.headers['service-event-id'], deadEventId, 'the same event_id again');
  await page.goto(`${origin}${pagePath}`);
  assert.match(await text(page, 'table.deliveries tbody tr'), /Delivered/);

  // Emergency rotation: paused at once, the queued delivery skipped.
  h.clock.advance(1000);
  await createContact(h.deps, tenantScope(orgId), { phone: '+14155550123', first_name: 'Ana' });
  await page.getByRole('checkbox', { name: /I understand that sending pauses/ }).check();
  assert.equal(await post(page, 'Rotate now (emergency)'), 303);
  await page.waitForURL(REVEAL_URL);
  const secret3 = (await page.locator('#signing-secret').textContent())?.trim() ?? '';
  assert.match(secret3, /^whsec_/);
  assert.match(await text(page, 'dl.facts'), /State Paused An emergency secret rotation paused it/);
  await maskSecret(page, '#signing-secret');
  await screenshot(page, 'webhook-emergency-rotation');
  assert.equal(await drain(h.deps), 0, 'nothing goes out while paused');
  assert.equal(await post(page, 'Re-verify'), 200);
  assert.match(await text(page, 'dl.facts'), /State Active/);

  // Bulk resend of the skipped delivery: a dry-run count first, then the resend.
  await page.goto(`${origin}${pagePath}`);
  assert.match(
    await text(page, 'table.deliveries'),
    /contact\.created.*Skipped Skipped by an emergency secret rotation\./,
  );
  assert.equal(await post(page, 'Count (dry run)'), 200);
  assert.match(
    await text(page, '#bulk-preview'),
    /^1 delivery would be sent again \(Dead-lettered and Skipped, 2026-05-17 to 2026-06-15\)\./,
  );
  await checkBoth(page, 'bulk resend dry run');
  await screenshot(page, 'webhook-bulk-resend-dry-run');
  assert.equal(await drain(h.deps), 0, 'a dry run sends nothing');
  await post(page, 'Resend 1 delivery');
  assert.match(await text(page, '[role="status"]'), /^1 delivery is queued again/);
  assert.equal(await drain(h.deps), 1);
  const last = events().at(-1)!;
  assert.equal(last.headers['service-event-type'], 'contact.created');
  assert.ok(verifies(last, secret3));
  assert.ok(!verifies(last, [secret1, secret2]), 'no grace after an emergency rotation');

  // Readable on a phone: the same page at 390 px, nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto(`${origin}${pagePath}`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than a phone screen`);
  await checkBoth(page, 'subscription page on a phone');
  await screenshot(page, 'webhook-subscription-phone');
  // Nor on the narrowest phones (320 px): the subscription, its delete confirmation (a long receiver
  // URL), the integrations page (its event-type checkboxes).
  await page.setViewportSize({ width: 320, height: 800 });
  for (const path of [pagePath, `${pagePath}/delete`, '/app/settings/integrations']) {
    await page.goto(`${origin}${path}`);
    const wider = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.equal(wider, 0, `${path} is ${wider} px wider than a 320 px screen`);
  }
  assert.deepEqual(csp, []);
  await page.context().close();

  async function subscriptionId(): Promise<string> {
    const { rows } = await h.db.query<{ id: string }>(
      'SELECT id FROM webhook_subscriptions WHERE organization_id = $1 AND url = $2 AND deleted_at IS NULL',
      [orgId, rx.url],
    );
    return rows[0]!.id;
  }
});

test('strict mode without the challenge echo stays inactive and says why; delete after a confirmation', async () => {
  const rx = await receivers.start((_req, res) => res.writeHead(200).end('ok'));
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/settings/integrations`);
  await page.getByLabel('Receiver URL').fill(rx.url);
  await page.getByRole('checkbox', { name: /contact\.updated/ }).check();
  await page.getByRole('radio', { name: /^Strict/ }).check();
  assert.equal(await post(page, 'Create subscription'), 303);
  await page.waitForURL(REVEAL_URL);
  assert.match(
    await text(page, '#handshake-outcome'),
    /^Your endpoint answered HTTP 200 \(\d+ ms\) but did not echo the challenge as the JSON body \{"challenge": "…"\}, which strict mode requires, so the subscription did not activate\.$/,
  );
  assert.match(await text(page, 'dl.facts'), /State Inactive/);
  assert.match(await text(page, 'dl.facts'), /Events contact\.updated/);
  await checkBoth(page, 'inactive subscription');
  await maskSecret(page, '#signing-secret');
  await screenshot(page, 'webhook-inactive');

  await page.getByRole('link', { name: 'Delete…' }).click();
  await page.waitForURL(/\/delete$/);
  await checkBoth(page, 'delete confirmation');
  await Promise.all([
    page.waitForURL(/done=subscription_deleted/),
    page.getByRole('button', { name: 'Delete the subscription' }).click(),
  ]);
  assert.match(await text(page, '[role="status"]'), /deleted/);
  assert.doesNotMatch(await text(page, 'main'), new RegExp(rx.url.replace(/[.]/g, '\\.')));
  assert.deepEqual(csp, []);
  await page.context().close();
});
