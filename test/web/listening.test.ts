/**
 * The call page as a listening tool (issues 18 and 19) and contacts joined to calls, in Chromium:
 * click a transcript line and the recording plays from there, the playing line followed, speed,
 * keyboard shortcuts, play from an evidence quote, talk time; save a caller as a contact from the
 * call, a contact's call history, the New contact form with its errors on the fields. Every page
 * state axe-clean at 1280 and 390 px.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
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
import { insertAnalysis, insertCall, insertCallWithAudio } from '../helpers/fixtures.ts';
import type { Harness } from '../helpers/harness.ts';
import { mp3 } from '../helpers/mp3.ts';

let app: WebApp;
let h: Harness;
let browser: Browser;
let origin: string;
let email: string;
let orgId: string;
const ids: Record<string, string> = {};

const TRANSCRIPT = [
  'Agent: Demo Plumbing, this is Sam speaking.',
  "Customer: Hi, it's Maria Lopez. My water heater is leaking all over the garage floor.",
  'Agent: Sorry to hear that. Can we come by tomorrow morning?',
  'Customer: Tomorrow at nine works. The address is 42 Elm Street.',
  'Agent: Perfect, see you then.',
].join('\n');
/** Each line's [start, end] in seconds, as the transcribe stage stores them (calls.transcript_times). */
const TIMES = [
  [0.5, 4],
  [4.5, 14],
  [15, 21.5],
  [30, 36],
  [40, 42],
];
const TALK = {
  frame_seconds: 0.02,
  duration_seconds: 60,
  agent_seconds: 14.5,
  customer_seconds: 21.5,
  overlap_seconds: 0.4,
  silence_seconds: 24.4,
  longest_monologue: { speaker: 'customer', start: 4.5, seconds: 9.5 },
};

before(async () => {
  app = await startWebApp();
  ({ h, origin, browser } = app);
  ({ orgId, email } = await demoOrganization(h.db));
  const audio = mp3(60);
  ids.full = (
    await insertCallWithAudio(h.deps, orgId, audio.bytes, {
      callerName: 'Maria Lopez',
      customerE164: '+14155550123',
      customerNational: '(415) 555-0123',
      duration: audio.duration,
      createdAt: new Date('2026-06-14T09:30:00Z'),
      reviewStatus: 'needs_review',
    })
  ).callId;
  await insertAnalysis(h.db, {
    callId: ids.full,
    orgId,
    analysis: {
      caller_name: 'Maria Lopez',
      subject: 'Leaking water heater',
      summary: 'Water heater leaking in the garage; visit tomorrow at nine.',
      service_needed: 'Water heater repair',
      preferred_date: 'tomorrow at nine',
      client_address: '42 Elm Street',
      lead_score: 8,
    },
  });
  await h.db.query('UPDATE call_analyses SET transcript_original = $2, evidence = $3 WHERE call_id = $1', [
    ids.full,
    TRANSCRIPT,
    JSON.stringify({
      preferred_date: { quote: 'Tomorrow at nine works', turn: 3, start: 30 },
      client_address: { quote: 'The address is 42 Elm Street', turn: 3, start: null },
    }),
  ]);
  await h.db.query('UPDATE calls SET transcript_times = $2, talk_metrics = $3 WHERE id = $1', [
    ids.full,
    JSON.stringify(TIMES),
    JSON.stringify(TALK),
  ]);
  // an earlier call from the same number, and one from another number
  ids.earlier = await insertCall(h.db, {
    orgId,
    customerE164: '+14155550123',
    customerNational: '(415) 555-0123',
    createdAt: new Date('2026-06-02T15:00:00Z'),
    duration: 95,
    crmStatus: 'contacted',
  });
  ids.other = await insertCall(h.db, {
    orgId,
    customerE164: '+14155559999',
    customerNational: '(415) 555-9999',
  });
});
after(() => app.close());

const audioOf = (page: Page) => page.locator('audio#call-audio');

async function ready(page: Page): Promise<void> {
  await audioOf(page).evaluate(
    (el: HTMLAudioElement) =>
      new Promise((ok) => {
        el.muted = true;
        if (el.readyState >= 1) ok(null);
        else el.addEventListener('loadedmetadata', () => ok(null), { once: true });
      }),
  );
}

/** Waits until the audio's currentTime is within half a second of `t` (it plays on from there). */
async function waitForTime(page: Page, t: number): Promise<number> {
  await page.waitForFunction(
    (want) => {
      const a = document.getElementById('call-audio') as HTMLAudioElement;
      return Math.abs(a.currentTime - want) < 0.5;
    },
    t,
    { timeout: 10_000 },
  );
  return audioOf(page).evaluate((el: HTMLAudioElement) => el.currentTime);
}

const currentLine = (page: Page) => page.locator('#transcript li[aria-current="true"]');

test('click a transcript line: the recording plays from its time and the line is marked as playing', async () => {
  const page = await newPage(browser);
  const csp = watchCsp(page);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.full}`);
  await ready(page);
  // the lines with their times, the speakers apart
  const lines = page.locator('#transcript li.line');
  assert.equal(await lines.count(), 5);
  assert.deepEqual(await page.locator('#transcript button.seek').allTextContents(), [
    '0:00',
    '0:04',
    '0:15',
    '0:30',
    '0:40',
  ]);
  assert.equal(await lines.nth(0).getAttribute('class'), 'line side-agent playable');
  assert.equal(await lines.nth(1).getAttribute('class'), 'line side-customer playable');
  // a real button, named for what it does
  const fourth = page.getByRole('button', { name: 'Play from 0:30, Customer' });
  await fourth.click();
  const at = await waitForTime(page, 30);
  assert.ok(at >= 29.5, `currentTime ${at}`);
  assert.equal(await currentLine(page).getAttribute('data-start'), '30');
  assert.match((await currentLine(page).textContent()) ?? '', /Tomorrow at nine works/);
  // clicking the words of a line plays it too
  await lines.nth(2).locator('.text').click();
  await waitForTime(page, 15);
  assert.equal(await currentLine(page).getAttribute('data-start'), '15');
  await audioOf(page).evaluate((el: HTMLAudioElement) => el.pause());
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('speed buttons change the playback rate and say which one is on', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.full}`);
  await ready(page);
  const speeds = page.getByRole('group', { name: 'Playback speed' });
  assert.equal(
    await speeds.getByRole('button', { name: '1×', exact: true }).getAttribute('aria-pressed'),
    'true',
  );
  await speeds.getByRole('button', { name: '1.5×' }).click();
  assert.equal(await audioOf(page).evaluate((el: HTMLAudioElement) => el.playbackRate), 1.5);
  assert.equal(await speeds.getByRole('button', { name: '1.5×' }).getAttribute('aria-pressed'), 'true');
  assert.equal(
    await speeds.getByRole('button', { name: '1×', exact: true }).getAttribute('aria-pressed'),
    'false',
  );
  await speeds.getByRole('button', { name: '2×' }).click();
  assert.equal(await audioOf(page).evaluate((el: HTMLAudioElement) => el.playbackRate), 2);
  await page.context().close();
});

test('keyboard: J and K move between lines, the arrows on a line, Space plays and pauses; a field keeps its keys', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.full}`);
  await ready(page);
  // the shortcuts are told on the page
  await page.getByText('Keyboard shortcuts').click();
  assert.match((await page.locator('.shortcuts').textContent()) ?? '', /Space.*play or pause/s);
  await page.getByRole('button', { name: 'Play from 0:00, Agent' }).focus();
  await page.keyboard.press('j');
  await waitForTime(page, 4.5);
  assert.equal(await currentLine(page).getAttribute('data-start'), '4.5');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), '0:04');
  await page.keyboard.press('ArrowDown');
  await waitForTime(page, 15);
  await page.keyboard.press('k');
  await waitForTime(page, 4.5);
  // Space on the page (not on a button) pauses and plays
  await page.locator('h1').click();
  const pausedBefore = await audioOf(page).evaluate((el: HTMLAudioElement) => el.paused);
  await page.keyboard.press('Space');
  assert.equal(await audioOf(page).evaluate((el: HTMLAudioElement) => el.paused), !pausedBefore);
  await audioOf(page).evaluate((el: HTMLAudioElement) => el.pause());
  // typing in a field: the letters go into the field, the player does not move
  const before = await audioOf(page).evaluate((el: HTMLAudioElement) => el.currentTime);
  await page.locator('#sc-last').fill('');
  await page.locator('#sc-last').type('jk ');
  assert.equal(await page.locator('#sc-last').inputValue(), 'jk ');
  assert.equal(await audioOf(page).evaluate((el: HTMLAudioElement) => el.currentTime), before);
  await page.context().close();
});

test('evidence with a time plays from there; talk time is shown; axe-clean at 1280 and 390 px', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.full}`);
  await ready(page);
  const date = page.locator('dl.facts dd', { hasText: 'tomorrow at nine' });
  assert.equal(await date.locator('q.evidence').textContent(), 'Tomorrow at nine works');
  await date.getByRole('button', { name: 'Play from 0:30' }).click();
  await waitForTime(page, 30);
  await audioOf(page).evaluate((el: HTMLAudioElement) => el.pause());
  // a quote without a time has no play button
  const address = page.locator('dl.facts dd', { hasText: '42 Elm Street' }).first();
  assert.equal(await address.locator('button').count(), 0);
  const talk = (await page.locator('#talk-metrics').textContent())?.replace(/\s+/g, ' ') ?? '';
  assert.match(talk, /Customer talked21\.5 s \(60 % of the talk\)/);
  assert.match(talk, /Agent talked14\.5 s \(40 % of the talk\)/);
  assert.match(talk, /Talk ratioCustomer 60 : Agent 40/);
  assert.match(talk, /Longest monologue9\.5 s by the customer, from 0:04/);
  assert.match(talk, /Silence24\.4 s \(41 % of the recording\)/);
  assert.equal(await page.locator('#talk-share').getAttribute('value'), '60');
  await page.getByRole('button', { name: 'Play the monologue from 0:04' }).click();
  await waitForTime(page, 4.5);
  await audioOf(page).evaluate((el: HTMLAudioElement) => {
    el.pause();
    el.currentTime = 30;
  });
  await waitForTime(page, 30);
  await checkBoth(page, 'call page with talk time and evidence');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'call-page-listening');
  await page.setViewportSize({ width: 390, height: 844 });
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= 390), true);
  await screenshot(page, 'call-page-listening-phone');
  await page.context().close();
});

test('without JavaScript the transcript reads and the play buttons stay hidden', async () => {
  const context = await browser.newContext({
    javaScriptEnabled: false,
    viewport: { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.full}`);
  assert.match((await page.locator('#transcript').textContent()) ?? '', /Customer: Tomorrow at nine works/);
  assert.equal(await page.locator('button.play-from').first().isVisible(), false);
  assert.equal(await page.locator('#transcript button.seek').first().isVisible(), false);
  assert.deepEqual(await page.locator('#transcript .time').allTextContents(), [
    '0:00',
    '0:04',
    '0:15',
    '0:30',
    '0:40',
  ]);
  assert.equal(await page.locator('#player-controls').isVisible(), false);
  await context.close();
});

test("save as contact from a call, then the contact's call history lists the number's calls", async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/calls/${ids.full}`);
  assert.match(
    (await page.locator('dl.facts').first().textContent()) ?? '',
    /ContactNot a contact yet \(save as contact\)/,
  );
  const form = page.locator('form#save-contact');
  assert.equal(await form.locator('#sc-phone').inputValue(), '+14155550123');
  assert.equal(await form.locator('#sc-first').inputValue(), 'Maria');
  assert.equal(await form.locator('#sc-last').inputValue(), 'Lopez');
  await checkBoth(page, 'call page with the Save as contact form');
  await Promise.all([
    page.waitForURL(/done=contact_saved/),
    form.getByRole('button', { name: 'Save as contact' }).click(),
  ]);
  assert.equal(new URL(page.url()).pathname, `/app/calls/${ids.full}`);
  assert.match((await page.getByRole('status').textContent()) ?? '', /The contact was saved/);
  const link = page.locator('#call-contact a');
  assert.equal(await link.textContent(), 'Maria Lopez');
  // and beside the caller, at the top
  assert.equal(await page.locator('dl.facts').first().getByRole('link', { name: 'Maria Lopez' }).count(), 1);
  // a reload shows the page again, it creates nothing (post/redirect/get)
  await page.reload();
  assert.equal(
    Number(
      (
        await h.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM contacts WHERE organization_id = $1',
          [orgId],
        )
      ).rows[0].n,
    ),
    1,
  );
  // the earlier call from the same number shows the contact too
  await page.goto(`${origin}/app/calls/${ids.earlier}`);
  assert.equal(await page.locator('#call-contact a').textContent(), 'Maria Lopez');
  await page.locator('#call-contact a').click();
  const rows = page.locator('#contact-calls tbody tr');
  assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.callId)), [
    ids.full,
    ids.earlier,
  ]);
  const first = (await rows.nth(0).textContent())?.replace(/\s+/g, ' ') ?? '';
  assert.match(first, /Leaking water heater/);
  assert.match((await rows.nth(1).textContent()) ?? '', /1 min 35 s/);
  await checkBoth(page, 'contact page with its calls');
  await screenshot(page, 'contact-calls');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'contact-calls-phone');
  await rows.nth(1).getByRole('link').click();
  assert.equal(new URL(page.url()).pathname, `/app/calls/${ids.earlier}`);
  await page.context().close();
});

test('new contact: errors are marked on their fields and focused, then the contact is created', async () => {
  const page = await newPage(browser);
  await signIn(page, origin, email);
  await page.goto(`${origin}/app/contacts`);
  await page.getByRole('link', { name: 'New contact' }).click();
  assert.equal(new URL(page.url()).pathname, '/app/contacts/new');
  await checkBoth(page, 'new contact form');
  // no phone, a wrong e-mail
  await page.getByLabel('E-mail').fill('not-an-address');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Save contact' }).click(),
  ]);
  assert.equal(res.status(), 400);
  await page.waitForLoadState();
  assert.match((await page.getByRole('alert').textContent()) ?? '', /2 fields need a change/);
  const phone = page.locator('#nc-phone');
  assert.equal(await phone.getAttribute('aria-invalid'), 'true');
  assert.equal(await phone.getAttribute('aria-describedby'), 'nc-phone-hint nc-phone-error');
  assert.match(
    (await page.locator('#nc-phone-error').textContent()) ?? '',
    /phone number that can be dialled/,
  );
  assert.equal(await page.locator('#nc-email').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#nc-email').getAttribute('aria-describedby'), 'nc-email-error');
  assert.equal(await page.locator('#nc-first_name').getAttribute('aria-invalid'), null);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'nc-phone');
  // what was typed is kept
  assert.equal(await page.locator('#nc-email').inputValue(), 'not-an-address');
  await checkBoth(page, 'new contact form with errors');
  await screenshot(page, 'contact-new-errors');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.setViewportSize({ width: 1280, height: 900 });
  // a number that cannot be dialled: the service's refusal, on the phone field alone
  await phone.fill('12');
  await page.locator('#nc-email').fill('');
  await page.getByRole('button', { name: 'Save contact' }).click();
  await page.waitForLoadState();
  assert.match((await page.getByRole('alert').textContent()) ?? '', /one field needs a change/);
  assert.equal(await page.locator('#nc-phone').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#nc-email').getAttribute('aria-invalid'), null);
  // the number of an existing contact: refused on the phone field, with a link to that contact
  await page.locator('#nc-phone').fill('+1 415 555 0123');
  await page.getByRole('button', { name: 'Save contact' }).click();
  await page.waitForLoadState();
  assert.match(
    (await page.locator('#nc-phone-error').textContent()) ?? '',
    /A contact already has this number/,
  );
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'nc-phone');
  // then a good one
  await page.locator('#nc-phone').fill('+1 (415) 555-9999');
  await page.locator('#nc-first_name').fill('Ben');
  await page.locator('#nc-last_name').fill('Okafor');
  await page.locator('#nc-email').fill('ben@example.com');
  await Promise.all([
    page.waitForURL(/done=created/),
    page.getByRole('button', { name: 'Save contact' }).click(),
  ]);
  assert.match(new URL(page.url()).pathname, /^\/app\/contacts\/[0-9a-f-]{36}$/);
  assert.match((await page.getByRole('status').textContent()) ?? '', /Contact created/);
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Ben Okafor');
  // its number's call is in its history
  assert.deepEqual(
    await page
      .locator('#contact-calls tbody tr')
      .evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.callId)),
    [ids.other],
  );
  await page.context().close();
});
