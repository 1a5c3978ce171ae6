import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page, Response } from 'playwright-core';
import { CONTENT_SECURITY_POLICY } from '../../src/http/public/pages/kit/security.ts';
import { newId } from '../../src/ids.ts';
import { orgWithLogin } from '../helpers/app-api.ts';
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
import { insertAnalysis, insertCall, insertCallWithAudio, storedCall } from '../helpers/fixtures.ts';
import type { Harness } from '../helpers/harness.ts';
import { mp3 } from '../helpers/mp3.ts';

let h: Harness;
let browser: Browser;
let origin: string;
let email: string;
let orgId: string;
let memberEmail: string;
const ids: Record<string, string> = {};

const TRANSCRIPT = [
  'Agent: Demo Plumbing, this is Sam speaking.',
  "Caller: Hi, it's Maria Lopez. My water heater is leaking all over the garage floor.",
  'Agent: Sorry to hear that. Can we come by tomorrow morning?',
  'Caller: Tomorrow at nine works. The address is 42 Elm Street.',
].join('\n');
let app: WebApp;

before(async () => {
  app = await startWebApp();
  ({ h, origin, browser } = app);
  ({ orgId, email } = await demoOrganization(h.db, { member: true }));
  memberEmail = DEMO_MEMBER;
  // The call with everything: audio (60 s), analysis, transcript, a follow-up draft, a tracker match.
  const audio = mp3(60);
  ids.full = (
    await insertCallWithAudio(h.deps, orgId, audio.bytes, {
      callerName: 'Maria Lopez',
      duration: audio.duration,
      createdAt: new Date('2026-06-14T09:30:00Z'),
      crmStatus: 'to_call',
      reviewStatus: 'needs_review',
    })
  ).callId;
  await insertAnalysis(h.db, {
    callId: ids.full,
    orgId,
    analysis: {
      caller_name: 'Maria Lopez',
      summary: 'Water heater leaking in the garage; visit tomorrow at nine.',
      subject: 'Leaking water heater',
      service_needed: 'Water heater repair',
      services_match: true,
      lead_score: 8,
      preferred_date: 'tomorrow at nine',
      client_address: '42 Elm Street',
      proposal_items: [{ kind: 'callback', text: 'Confirm the visit by phone' }],
    },
    followupEmail: {
      subject: 'Your water heater visit',
      body: 'Dear Maria,\n\nthank you for your call. We will be there tomorrow at nine.\n\nDemo Plumbing',
      language: 'en',
    },
  });
  await h.db.query('UPDATE call_analyses SET transcript_original = $2, evidence = $3 WHERE call_id = $1', [
    ids.full,
    TRANSCRIPT,
    JSON.stringify({ preferred_date: { quote: 'Tomorrow at nine works', turn: 3, start: null } }),
  ]);
  // The matches as completion keeps them on the call (capture/completion.ts).
  await h.db.query('UPDATE calls SET tracker_matches = $2 WHERE id = $1', [
    ids.full,
    JSON.stringify([
      {
        tracker_id: newId(),
        name: 'Leaks',
        matched_terms: ['leaking'],
        excerpts: ['…My water heater is leaking all over the garage floor.'],
      },
    ]),
  ]);
  ids.outbound = await insertCall(h.db, {
    orgId,
    direction: 'outbound',
    callerName: 'Tom Berger',
    customerE164: '+4930901820',
    customerNational: '030 901820',
    outboundLifecycle: 'customer_no_answer',
    recordingState: 'not_captured',
    createdAt: new Date('2026-06-13T15:00:00Z'),
    crmStatus: 'contacted',
  });
  ids.trashed = await insertCall(h.db, {
    orgId,
    callerName: 'Kim Trash',
    customerE164: '+14155550199',
    customerNational: '(415) 555-0199',
    trashedAt: new Date('2026-06-12T00:00:00Z'),
    createdAt: new Date('2026-06-12T00:00:00Z'),
  });
  ids.erase = await insertCall(h.db, {
    orgId,
    callerName: 'Erin Erase',
    customerE164: '+14155550123',
    customerNational: '(415) 555-0123',
    createdAt: new Date('2026-06-11T00:00:00Z'),
  });
  // Another organization's call never shows.
  const other = await orgWithLogin(h.db, 'x');
  ids.foreign = await insertCall(h.db, { orgId: other.orgId, callerName: 'Not Yours' });
});

after(async () => {
  await app?.close();
});

/** Every document the page loads answers with the CSP and the frame headers. */
function watchDocuments(page: Page): Response[] {
  const docs: Response[] = [];
  page.on('response', (r) => {
    if (r.request().resourceType() === 'document') docs.push(r);
  });
  return docs;
}

function assertHeaders(docs: Response[]) {
  assert.ok(docs.length > 0);
  for (const d of docs) {
    const hd = d.headers();
    if (d.status() >= 300 && d.status() < 400) continue;
    assert.equal(hd['content-security-policy'], CONTENT_SECURITY_POLICY, d.url());
    assert.equal(hd['x-frame-options'], 'DENY', d.url());
    assert.equal(hd['x-content-type-options'], 'nosniff', d.url());
    assert.equal(hd['referrer-policy'], 'same-origin', d.url());
  }
}

const rowsOf = async (page: Page) => page.locator('table.calls tbody tr').allTextContents();

test('the calls list: newest first, filters by direction, status, dates and searches a phone in any spelling', async () => {
  const page = await newPage(browser);
  const docs = watchDocuments(page);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  let rows = await rowsOf(page);
  assert.equal(rows.length, 4);
  assert.match(rows[0]!, /Maria Lopez/);
  assert.match(rows[3]!, /Erin Erase/);
  assert.ok(!rows.some((r) => r.includes('Not Yours')));
  await checkBoth(page, 'calls list');
  await screenshot(page, 'calls-list');

  await page.getByLabel('Direction').selectOption('outbound');
  await Promise.all([
    page.waitForURL(/direction=outbound/),
    page.getByRole('button', { name: 'Search', exact: true }).click(),
  ]);
  rows = await rowsOf(page);
  assert.equal(rows.length, 1);
  assert.match(rows[0]!, /Tom Berger/);
  assert.equal(await page.getByLabel('Direction').inputValue(), 'outbound');

  await page.getByLabel('Direction').selectOption('');
  await page.locator('#f-status').selectOption('to_call');
  await Promise.all([
    page.waitForURL(/status=to_call/),
    page.getByRole('button', { name: 'Search', exact: true }).click(),
  ]);
  assert.deepEqual((await rowsOf(page)).length, 1);

  for (const spelling of ['+1 (415) 555-0199', '1.415.555.0199', '4155550199']) {
    await page.goto(`${origin}/app/calls?q=${encodeURIComponent(spelling)}`);
    rows = await rowsOf(page);
    assert.equal(rows.length, 1, spelling);
    assert.match(rows[0]!, /Kim Trash/);
  }

  await page.goto(`${origin}/app/calls?dateFrom=2026-06-12&dateTo=2026-06-13`);
  rows = await rowsOf(page);
  assert.deepEqual(
    rows.map((r) => /Tom Berger|Kim Trash/.exec(r)?.[0]),
    ['Tom Berger', 'Kim Trash'],
  );

  // The text box is a search box: a name is searched, not refused as a phone number (test/web/inbox.test.ts).
  const name = await page.goto(`${origin}/app/calls?q=ab`);
  assert.equal(name?.status(), 200);
  const swapped = await page.goto(`${origin}/app/calls?dateFrom=2026-06-13&dateTo=2026-06-12`);
  assert.equal(swapped?.status(), 400);
  assert.equal(
    (await page.getByRole('alert').textContent())?.trim(),
    '"From (date)" is after "To (date)". Pick a first day on or before the last one.',
  );
  await checkBoth(page, 'calls list with a refused filter');
  assertHeaders(docs);
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('the call page shows the call, plays and seeks its recording over Range requests', async () => {
  const page = await newPage(browser);
  const docs = watchDocuments(page);
  const csp = watchCsp(page);
  const audioReplies: { status: number; range: string | undefined }[] = [];
  page.on('response', (r) => {
    if (r.url().includes('/recording.mp3'))
      audioReplies.push({ status: r.status(), range: r.request().headers().range });
  });
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.full}`);
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Call from Maria Lopez');
  const facts = (await page.locator('dl.facts').first().textContent()) ?? '';
  assert.match(facts, /Came in on\(415\) 555-0100/);
  assert.match(facts, /Inbound \(the customer called\)/);
  assert.match(facts, /1 min 0 s/);
  assert.match(facts, /2026-06-14 09:30 UTC/);
  // Transcript by speaker, analysis, draft with a copy button (shown by the ES module), tracker excerpt.
  assert.equal(await page.locator('.transcript .speaker').first().textContent(), 'Agent:');
  assert.match((await page.locator('.transcript').textContent()) ?? '', /Caller: Tomorrow at nine works/);
  assert.match((await page.locator('main').textContent()) ?? '', /Lead score8 out of 10/);
  // the words a field was read from, beside it (issue 19's evidence)
  assert.equal(
    await page.locator('dl.facts dd', { hasText: 'tomorrow at nine' }).locator('q.evidence').textContent(),
    'Tomorrow at nine works',
  );
  assert.equal(await page.getByRole('button', { name: 'Copy e-mail text' }).isVisible(), true);
  assert.match((await page.locator('#draft-body').textContent()) ?? '', /We will be there tomorrow at nine/);
  // Copying is said in a polite live region too, so a screen reader announces it.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  await page.getByRole('button', { name: 'Copy e-mail text' }).click();
  await page.locator('#copy-status').filter({ hasText: 'Copied' }).waitFor();
  assert.equal(await page.getAttribute('#copy-status', 'role'), 'status');
  assert.match(
    await page.evaluate(() => navigator.clipboard.readText()),
    /We will be there tomorrow at nine/,
  );
  assert.match((await page.locator('main').textContent()) ?? '', /Leaks: leaking/);

  // Play, then seek to 40 s: the player asks for a byte range and the download answers 206.
  const audio = page.locator('audio');
  await audio.evaluate(
    (el: HTMLAudioElement) =>
      new Promise((ok) => {
        if (el.readyState >= 1) ok(null);
        else el.addEventListener('loadedmetadata', () => ok(null), { once: true });
      }),
  );
  const duration = await audio.evaluate((el: HTMLAudioElement) => el.duration);
  assert.ok(Math.abs(duration - 60) < 1, `duration ${duration}`);
  await audio.evaluate((el: HTMLAudioElement) => {
    el.muted = true;
    return el.play();
  });
  const at = await audio.evaluate(
    (el: HTMLAudioElement) =>
      new Promise<number>((ok) => {
        el.addEventListener('seeked', () => ok(el.currentTime), { once: true });
        el.currentTime = 40;
      }),
  );
  assert.ok(Math.abs(at - 40) < 0.5, `currentTime after seeking: ${at}`);
  assert.ok(
    audioReplies.some((r) => r.status === 206 && r.range !== undefined),
    `a Range request answered 206: ${JSON.stringify(audioReplies)}`,
  );
  assert.ok(audioReplies.every((r) => r.status === 200 || r.status === 206));
  await audio.evaluate((el: HTMLAudioElement) => el.pause());
  await checkBoth(page, 'call page');
  await screenshot(page, 'call-page');
  assertHeaders(docs);
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('an outbound call shows its lifecycle as a timeline and its recording state in words', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.outbound}`);
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Call to Tom Berger');
  assert.deepEqual(
    (await page.locator('ol.timeline li').allTextContents()).map((t) => t.trim()),
    [
      'Done: Ringing the agent',
      'Done: The agent answered',
      'Done: Ringing the customer',
      'Ended: The customer did not answer',
    ],
  );
  // An ending before the conversation is not drawn in the success colour.
  const colour = (sel: string) => page.locator(sel).evaluate((el) => getComputedStyle(el).color);
  assert.equal(await colour('ol.timeline li.ended'), 'rgb(164, 14, 38)');
  assert.match(
    (await page.locator('main').textContent()) ?? '',
    /Never captured No conversation was recorded/,
  );
  assert.match((await page.locator('dl.facts').first().textContent()) ?? '', /Went out from/);
  await checkBoth(page, 'outbound call page');
  await screenshot(page, 'call-page-outbound');
  await page.context().close();
});

test('edit statuses, trash, restore and schedule a deletion from the call page', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.trashed}`);
  assert.match((await page.locator('main').textContent()) ?? '', /Withheld The call is in the trash/);

  await page.getByLabel('CRM status').selectOption('qualified');
  await page.getByLabel('Review status').selectOption('handled');
  await Promise.all([
    page.waitForURL(/done=statuses/),
    page.getByRole('button', { name: 'Save statuses' }).click(),
  ]);
  assert.equal((await page.getByRole('status').textContent())?.trim(), 'The statuses were saved.');
  let row = await storedCall(h.db, ids.trashed);
  assert.equal(row.crm_status, 'qualified');
  assert.equal(row.review_status, 'handled');

  await Promise.all([
    page.waitForURL(/done=restored/),
    page.getByRole('button', { name: 'Restore from trash' }).click(),
  ]);
  assert.equal((await storedCall(h.db, ids.trashed)).trashed_at, null);
  await Promise.all([
    page.waitForURL(/done=trashed/),
    page.getByRole('button', { name: 'Move to trash' }).click(),
  ]);
  assert.notEqual((await storedCall(h.db, ids.trashed)).trashed_at, null);

  await page.getByLabel('Reason').selectOption('consent_withdrawn');
  await page.getByLabel('Delete on').fill('2026-07-01');
  await Promise.all([
    page.waitForURL(/done=scheduled/),
    page.getByRole('button', { name: 'Schedule deletion' }).click(),
  ]);
  row = await storedCall(h.db, ids.trashed);
  assert.equal(row.deletion_reason, 'consent_withdrawn');
  assert.equal(row.pending_deletion_at?.toISOString(), '2026-07-01T00:00:00.000Z');
  const { rows } = await h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events WHERE call_id = $1 AND event_type = 'call.deletion_scheduled'`,
    [ids.trashed],
  );
  assert.equal(rows[0]!.n, 1);
  assert.match(
    (await page.locator('dl.facts').first().textContent()) ?? '',
    /Scheduled for 2026-07-01 00:00 UTC — The caller withdrew consent/,
  );
  await Promise.all([
    page.waitForURL(/done=cancelled/),
    page.getByRole('button', { name: 'Cancel the scheduled deletion' }).click(),
  ]);
  assert.equal((await storedCall(h.db, ids.trashed)).pending_deletion_at, null);
  await page.context().close();
});

test('a form post without the CSRF token is refused with a 403 page and changes nothing', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  const before = await storedCall(h.db, ids.erase);
  const res = await page.request.post(`${origin}/app/calls/${ids.erase}/status`, {
    form: { crm_status: 'qualified', review_status: '' },
    maxRedirects: 0,
  });
  assert.equal(res.status(), 403);
  assert.equal(res.headers()['content-security-policy'], CONTENT_SECURITY_POLICY);
  assert.match(await res.text(), /security token is missing or out of date/);
  const wrong = await page.request.post(`${origin}/app/calls/${ids.erase}/trash`, {
    form: { _csrf: 'not-the-token' },
    maxRedirects: 0,
  });
  assert.equal(wrong.status(), 403);
  const after = await storedCall(h.db, ids.erase);
  assert.equal(after.crm_status, before.crm_status);
  assert.equal(after.trashed_at, null);
  await page.context().close();
});

test('another organization\'s call is "not found"; a member cannot erase', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, memberEmail);
  const res = await page.goto(`${origin}/app/calls/${ids.foreign}`);
  assert.equal(res?.status(), 404);
  await checkBoth(page, 'not-found page');
  await page.goto(`${origin}/app/calls/${ids.erase}`);
  assert.equal(await page.getByRole('link', { name: 'Erase this call…' }).count(), 0);
  const erase = await page.goto(`${origin}/app/calls/${ids.erase}/erase`);
  assert.equal(erase?.status(), 403);
  assert.match(
    (await page.getByRole('alert').textContent()) ?? '',
    /Only the organization's owner can erase a call/,
  );
  await checkBoth(page, '403 page');
  await page.context().close();
});

test('erase a call: the confirmation says what is lost, then the call is gone', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.erase}`);
  await page.getByRole('link', { name: 'Erase this call…' }).click();
  await page.waitForURL(/\/erase$/);
  const text = (await page.locator('main').textContent()) ?? '';
  assert.match(text, /cannot be undone/);
  assert.match(text, /the transcript, the analysis and the follow-up e-mail draft/);
  await checkBoth(page, 'erase confirmation');
  await screenshot(page, 'call-erase');
  page.on('dialog', (d) => d.accept());
  await page.getByLabel(/I understand/).check();
  await Promise.all([
    page.waitForURL(/done=erased/),
    page.getByRole('button', { name: 'Erase the call' }).click(),
  ]);
  assert.equal((await page.getByRole('status').textContent())?.trim(), 'The call was erased.');
  assert.notEqual((await storedCall(h.db, ids.erase)).erased_at, null);
  assert.ok(!(await rowsOf(page)).some((r) => r.includes('Erin Erase')));
  const gone = await page.goto(`${origin}/app/calls/${ids.erase}`);
  assert.equal(gone?.status(), 404);
  await page.context().close();
});

test('on a phone every cell of the calls list keeps its column name', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await signIn(page, origin, email);
  const before = (label: string) =>
    page
      .locator(`table.calls tbody tr:first-child td[data-label="${label}"]`)
      .evaluate((td) => getComputedStyle(td, '::before').content);
  for (const label of ['Who', 'What', 'Lead score', 'Where it stands', 'Quick actions']) {
    assert.notEqual(await before(label), 'none', label);
  }
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390);
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.equal(await before('Who'), 'none');
  await context.close();
});

test('with JavaScript off the call page reads, the copy buttons stay hidden, and forms still post', async () => {
  const context = await browser.newContext({
    javaScriptEnabled: false,
    viewport: { width: 390, height: 844 },
  });
  const page = await context.newPage();
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.full}`);
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Call from Maria Lopez');
  assert.equal(await page.getByRole('button', { name: 'Copy e-mail text' }).isVisible(), false);
  assert.match((await page.locator('#draft-body').textContent()) ?? '', /Dear Maria/);
  await page.getByLabel('Review status').selectOption('no_action');
  await Promise.all([
    page.waitForURL(/done=statuses/),
    page.getByRole('button', { name: 'Save statuses' }).click(),
  ]);
  assert.equal((await storedCall(h.db, ids.full)).review_status, 'no_action');
  await screenshot(page, 'call-page-phone');
  await context.close();
});

test('keyboard: the skip link comes first and moves focus to the content', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => location.hash), '#main');
  await page.context().close();
});
