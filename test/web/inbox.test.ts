/** The lead inbox, search and the pipeline board in Chromium: axe clean at 1280 and 390 px, keyboard-usable. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { newId } from '../../src/ids.ts';
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
import { insertAnalysis, insertCall, storedCall } from '../helpers/fixtures.ts';

let app: WebApp;
let email: string;
let orgId: string;
const ids: Record<string, string> = {};

async function lead(
  call: { name?: string; e164: string; national: string; review?: string; crm?: string; at: string },
  a: { caller?: string; subject: string; service?: string; score: number | null; summary: string },
  transcript: string,
): Promise<string> {
  const id = await insertCall(app.h.db, {
    orgId,
    callerName: call.name ?? null,
    customerE164: call.e164,
    customerNational: call.national,
    reviewStatus: call.review ?? null,
    crmStatus: call.crm ?? 'new',
    recordingState: 'available',
    duration: 95,
    createdAt: new Date(call.at),
  });
  await insertAnalysis(app.h.db, {
    callId: id,
    orgId,
    analysis: {
      caller_name: a.caller ?? null,
      subject: a.subject,
      service_needed: a.service ?? null,
      lead_score: a.score,
      summary: a.summary,
    },
  });
  await app.h.db.query(`UPDATE call_analyses SET transcript_original = $2 WHERE call_id = $1`, [
    id,
    transcript,
  ]);
  await app.h.db.query(`UPDATE calls SET processing_state = 'processed' WHERE id = $1`, [id]);
  return id;
}

before(async () => {
  app = await startWebApp();
  ({ orgId, email } = await demoOrganization(app.h.db));
  ids.maria = await lead(
    {
      e164: '+14155550101',
      national: '(415) 555-0101',
      review: 'needs_review',
      crm: 'to_call',
      at: '2026-06-14T09:30:00Z',
    },
    {
      caller: 'Maria Lopez',
      subject: 'Leaking water heater',
      service: 'Water heater repair',
      score: 8,
      summary: 'Water heater leaking in the garage.',
    },
    'Agent: Demo Plumbing, Sam speaking.\nCaller: My water heater is leaking all over the garage floor.',
  );
  ids.sarah = await lead(
    {
      name: 'Sarah Kim',
      e164: '+14155550102',
      national: '(415) 555-0102',
      review: 'needs_decision',
      at: '2026-06-14T08:10:00Z',
    },
    {
      subject: 'Bathroom remodel quote',
      service: 'Remodel',
      score: 6,
      summary: 'Wants a quote for a bathroom remodel.',
    },
    'Caller: We would like a quote to remodel the upstairs bathroom, new tiles and a walk-in shower.',
  );
  ids.tom = await lead(
    { e164: '+14155550103', national: '(415) 555-0103', review: 'new', at: '2026-06-13T16:45:00Z' },
    {
      caller: 'Tom Berger',
      subject: 'Blocked kitchen drain',
      service: 'Drain cleaning',
      score: 4,
      summary: 'Kitchen sink drains slowly.',
    },
    'Caller: The kitchen sink drains really slowly since the weekend.',
  );
  ids.anon = await lead(
    {
      e164: '+14155550104',
      national: '(415) 555-0104',
      review: 'needs_review',
      crm: 'contacted',
      at: '2026-06-13T11:00:00Z',
    },
    { subject: 'Boiler service', score: null, summary: 'Yearly boiler service.' },
    'Caller: It is time for the yearly boiler service.',
  );
  ids.noRecording = await insertCall(app.h.db, {
    orgId,
    customerE164: '+14155550105',
    customerNational: '(415) 555-0105',
    recordingState: 'not_captured',
    createdAt: new Date('2026-06-12T10:00:00Z'),
  });
  // A contact saved for Maria's number names her calls, with her company.
  await app.h.db.query(
    `INSERT INTO contacts (id, organization_id, phone, phone_e164, first_name, last_name, company, notes, created_at, updated_at)
     VALUES ($1, $2, '+14155550101', '+14155550101', 'Maria', 'Lopez', 'Elm Street Lofts', 'Prefers mornings', now(), now())`,
    [newId(), orgId],
  );
});
after(() => app?.close());

const whos = (page: Page) => page.locator('table.inbox tbody a.who').allTextContents();
const viewLinks = async (page: Page) =>
  (await page.locator('nav.views a').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());

test('the inbox: views with their counts, rows that say who, what, how hot and where it stands', async () => {
  const page = await newPage(app.browser);
  const csp = watchCsp(page);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, app.origin, email);
  assert.deepEqual(await viewLinks(page), ['Needs review 2', 'Needs decision 1', 'New 1', 'All calls 5']);
  assert.deepEqual(await whos(page), [
    'Maria Lopez',
    'Sarah Kim',
    'Tom Berger',
    '(415) 555-0104',
    '(415) 555-0105',
  ]);
  assert.equal((await page.locator('#total').textContent())?.trim(), '1–5 of 5 calls');
  const first = page.locator('table.inbox tbody tr').first();
  assert.match((await first.textContent()) ?? '', /Elm Street Lofts/);
  assert.match((await first.textContent()) ?? '', /Leaking water heater/);
  assert.match((await first.textContent()) ?? '', /Transcribed/);
  assert.match((await page.locator('table.inbox tbody tr').last().textContent()) ?? '', /No recording/);
  await checkBoth(page, 'inbox');
  await screenshot(page, 'inbox');

  await Promise.all([
    page.waitForURL(/view=needs_review/),
    page.getByRole('link', { name: /Needs review/ }).click(),
  ]);
  assert.deepEqual(await whos(page), ['Maria Lopez', '(415) 555-0104']);
  assert.equal(await page.locator('nav.views a[aria-current="page"]').count(), 1);
  await page.getByLabel('Sort').selectOption('score');
  await Promise.all([
    page.waitForURL(/sort=score/),
    page.getByRole('button', { name: 'Search', exact: true }).click(),
  ]);
  assert.deepEqual(await whos(page), ['Maria Lopez', '(415) 555-0104']);
  assert.match(page.url(), /view=needs_review/);

  await page.setViewportSize({ width: 390, height: 844 });
  await checkBoth(page, 'inbox on a phone');
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390);
  await screenshot(page, 'inbox-phone');
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('a quick status change from the keyboard: the row changes, the view and its counts follow', async () => {
  const page = await newPage(app.browser);
  await signIn(page, app.origin, email);
  await page.goto(`${app.origin}/app/calls?view=needs_review`);
  // j moves to the first call; Tab reaches its quick-action controls.
  await page.keyboard.press('j');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Maria Lopez');
  await page.getByLabel('Review status of Maria Lopez').focus();
  await page.getByLabel('Review status of Maria Lopez').selectOption('handled');
  await page.getByLabel('CRM status of Maria Lopez').selectOption('contacted');
  await page.getByLabel('CRM status of Maria Lopez').focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Save Maria Lopez');
  await Promise.all([page.waitForURL(/done=changed/), page.keyboard.press('Enter')]);
  assert.match(page.url(), /\/app\/calls\?view=needs_review&done=changed$/);
  assert.equal(
    (await page.getByRole('status').first().textContent())?.trim(),
    'Saved: the calls you chose have their new status.',
  );
  const stored = await storedCall(app.h.db, ids.maria!);
  assert.equal(stored.review_status, 'handled');
  assert.equal(stored.crm_status, 'contacted');
  assert.deepEqual(await whos(page), ['(415) 555-0104']);
  assert.deepEqual(await viewLinks(page), ['Needs review 1', 'Needs decision 1', 'New 1', 'All calls 5']);
  await checkBoth(page, 'inbox after a quick change');
  await page.context().close();
});

test('a bulk action: tick calls (x or a click), choose a status, apply to all of them at once', async () => {
  const page = await newPage(app.browser);
  await signIn(page, app.origin, email);
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('x'); // Sarah Kim
  await page.getByLabel('Select the call with Tom Berger').check();
  await page.getByLabel('Review status', { exact: true }).selectOption('no_action');
  await page.getByLabel('CRM status', { exact: true }).nth(1).selectOption('qualified');
  await Promise.all([
    page.waitForURL(/done=changed/),
    page.getByRole('button', { name: 'Apply to selected' }).click(),
  ]);
  for (const id of [ids.sarah!, ids.tom!]) {
    const c = await storedCall(app.h.db, id);
    assert.deepEqual([c.review_status, c.crm_status], ['no_action', 'qualified']);
  }
  const untouched = await storedCall(app.h.db, ids.anon!);
  assert.deepEqual([untouched.review_status, untouched.crm_status], ['needs_review', 'contacted']);
  assert.deepEqual(await viewLinks(page), ['Needs review 1', 'Needs decision 0', 'New 0', 'All calls 5']);
  await checkBoth(page, 'inbox after a bulk action');
  await screenshot(page, 'inbox-bulk-done');
  await page.context().close();
});

test('a refused bulk form: the error on its field (the boxes, then the status), focus there, the ticks kept', async () => {
  const page = await newPage(app.browser);
  const csp = watchCsp(page);
  await signIn(page, app.origin, email);
  await page.goto(`${app.origin}/app/calls?sort=oldest`);
  const before = await app.h.db.query('SELECT id, review_status, crm_status FROM calls ORDER BY id');
  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement;
      return el ? `${el.tagName} ${el.getAttribute('aria-label') ?? el.id}` : '';
    });
  const marks = (selector: string) =>
    page
      .locator(selector)
      .first()
      .evaluate((el) => [el.getAttribute('aria-invalid'), el.getAttribute('aria-describedby')]);

  // Nothing ticked: every box is marked, the focus is on the first one, the sentence under the form.
  await page.getByLabel('Review status', { exact: true }).selectOption('handled');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Apply to selected' }).click(),
  ]);
  assert.equal(res.status(), 400);
  await page.waitForLoadState();
  const idsError = 'Select the calls to change (tick their boxes), at most 100 at a time.';
  assert.equal((await page.getByRole('alert').textContent())?.trim(), idsError);
  assert.equal((await page.locator('#ids-error').textContent())?.trim(), idsError);
  assert.equal(await focused(), 'INPUT Select the call with (415) 555-0105');
  assert.equal(
    await page.locator('input[name="ids"][aria-invalid="true"][aria-describedby="ids-error"]').count(),
    5,
  );
  assert.equal(
    await page.getByLabel('Review status', { exact: true }).inputValue(),
    'handled',
    'the choice is kept',
  );
  assert.deepEqual(
    await whos(page),
    ['(415) 555-0105', '(415) 555-0104', 'Tom Berger', 'Sarah Kim', 'Maria Lopez'],
    'the same view, in the same order, as the form came from',
  );
  await checkBoth(page, 'inbox, bulk form refused: no call ticked');
  await screenshot(page, 'inbox-bulk-error');

  // A call ticked but no status to set: the CRM status is marked and focused; the tick is kept.
  await page.getByLabel('Review status', { exact: true }).selectOption('');
  await page.getByLabel('Select the call with Tom Berger').check();
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.status() === 400),
    page.getByRole('button', { name: 'Apply to selected' }).click(),
  ]);
  await page.waitForLoadState();
  assert.equal(await focused(), 'SELECT bulk-crm');
  assert.deepEqual(await marks('#bulk-crm'), ['true', 'crm_status-error']);
  assert.equal(
    (await page.locator('#crm_status-error').textContent())?.trim(),
    'Choose a CRM status (New, To call, Contacted, Qualified) or a review status to set.',
  );
  assert.equal(await page.locator('input[name="ids"][aria-invalid]').count(), 0);
  assert.equal(await page.getByLabel('Select the call with Tom Berger').isChecked(), true);
  assert.equal(await page.getByLabel('Select the call with Sarah Kim').isChecked(), false);
  await checkBoth(page, 'inbox, bulk form refused: no status');
  const after = await app.h.db.query('SELECT id, review_status, crm_status FROM calls ORDER BY id');
  assert.deepEqual(after.rows, before.rows, 'a refused form changes nothing');

  // Corrected on the same page: it applies, and comes back to the view it came from.
  await page.getByLabel('CRM status', { exact: true }).nth(1).selectOption('to_call');
  await Promise.all([
    page.waitForURL(/done=changed/),
    page.getByRole('button', { name: 'Apply to selected' }).click(),
  ]);
  assert.match(page.url(), /\/app\/calls\?sort=oldest&done=changed$/);
  assert.equal((await storedCall(app.h.db, ids.tom!)).crm_status, 'to_call');
  assert.deepEqual(csp, []);
  await page.context().close();
});

test('search finds a call by a word said in it and by a name, and shows the passage', async () => {
  const page = await newPage(app.browser);
  await signIn(page, app.origin, email);
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'f-q');
  await page.keyboard.type('tiles');
  await Promise.all([page.waitForURL(/q=tiles/), page.keyboard.press('Enter')]);
  assert.deepEqual(await whos(page), ['Sarah Kim']);
  assert.equal(await page.locator('p.passage mark').first().textContent(), 'tiles');
  await checkBoth(page, 'search by a word');
  await screenshot(page, 'inbox-search');

  await page.getByLabel('Search', { exact: true }).fill('maria');
  await Promise.all([
    page.waitForURL(/q=maria/),
    page.getByRole('button', { name: 'Search', exact: true }).click(),
  ]);
  assert.deepEqual(await whos(page), ['Maria Lopez']);
  await page.getByLabel('Search', { exact: true }).fill('Elm Street Lofts');
  await Promise.all([
    page.waitForURL(/q=Elm/),
    page.getByRole('button', { name: 'Search', exact: true }).click(),
  ]);
  assert.deepEqual(await whos(page), ['Maria Lopez']);
  // the drains of a drain: stemming finds another form of the word; a number in any spelling
  await page.goto(`${app.origin}/app/calls?q=${encodeURIComponent('draining')}`);
  assert.deepEqual(await whos(page), ['Tom Berger']);
  await page.goto(`${app.origin}/app/calls?q=${encodeURIComponent('+1 415-555-0105')}`);
  assert.deepEqual(await whos(page), ['(415) 555-0105']);
  await page.goto(`${app.origin}/app/calls?q=zebra`);
  assert.equal((await page.locator('#total').textContent())?.trim(), 'No calls match this search.');
  await page.setViewportSize({ width: 390, height: 844 });
  await checkBoth(page, 'search on a phone');
  await page.context().close();
});

test('the board: columns by CRM status; a card moves with its buttons and with the arrow keys', async () => {
  const page = await newPage(app.browser);
  const csp = watchCsp(page);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, app.origin, email);
  await Promise.all([
    page.waitForURL(/\/app\/calls\/board$/),
    page.getByRole('link', { name: 'Pipeline board' }).click(),
  ]);
  const heads = (await page.locator('.board h2').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
  const count = async (status: string) =>
    (
      await app.h.db.query<{ n: string }>(
        'SELECT count(*) AS n FROM calls WHERE organization_id = $1 AND crm_status = $2',
        [orgId, status],
      )
    ).rows[0]!.n;
  assert.deepEqual(heads, [
    `New ${await count('new')}`,
    `To call ${await count('to_call')}`,
    `Contacted ${await count('contacted')}`,
    `Qualified ${await count('qualified')}`,
  ]);
  await checkBoth(page, 'board');
  await screenshot(page, 'board');

  // A button: the boiler call (contacted) → qualified; the page comes back focused on the card.
  const card = page.locator(`#card-${ids.anon}`);
  await Promise.all([
    page.waitForURL(/done=changed/),
    card.getByRole('button', { name: /Qualified →/ }).click(),
  ]);
  assert.equal((await storedCall(app.h.db, ids.anon!)).crm_status, 'qualified');
  assert.equal(await page.evaluate(() => document.activeElement?.id), `card-${ids.anon}`);
  assert.equal(await page.locator(`section[aria-labelledby="col-qualified"] #card-${ids.anon}`).count(), 1);
  // Keys: ← on the focused card moves it back a column, and focus stays on it.
  await Promise.all([
    page.waitForURL((u) => u.hash === `#card-${ids.anon}`),
    page.keyboard.press('ArrowLeft'),
  ]);
  await page.locator(`section[aria-labelledby="col-contacted"] #card-${ids.anon}`).waitFor();
  assert.equal((await storedCall(app.h.db, ids.anon!)).crm_status, 'contacted');
  assert.equal(await page.evaluate(() => document.activeElement?.id), `card-${ids.anon}`);

  // Drag and drop with the mouse: Maria's card (contacted) dropped on "New", two columns back in one
  // move; the drop posts the buttons' form, the page comes back focused on the card in its new column.
  assert.equal((await storedCall(app.h.db, ids.maria!)).crm_status, 'contacted');
  const maria = page.locator(`#card-${ids.maria}`);
  assert.equal(await maria.getAttribute('draggable'), 'true');
  const [drop] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST'),
    page.waitForURL((u) => u.searchParams.get('done') === 'changed' && u.hash === `#card-${ids.maria}`),
    maria.dragTo(page.locator('section[aria-labelledby="col-new"]')),
  ]);
  assert.equal(new URL(drop.url()).pathname, '/app/calls/bulk', 'the same form action as the buttons');
  const sent = new URLSearchParams(drop.postData() ?? '');
  assert.deepEqual([...sent.keys()].sort(), ['_csrf', 'back', 'crm_status', 'ids']);
  assert.deepEqual(
    [sent.get('ids'), sent.get('crm_status'), sent.get('back')],
    [ids.maria, 'new', `/app/calls/board#card-${ids.maria}`],
  );
  assert.equal((await storedCall(app.h.db, ids.maria!)).crm_status, 'new');
  await page.locator(`section[aria-labelledby="col-new"] #card-${ids.maria}`).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), `card-${ids.maria}`);
  assert.equal(
    (await page.getByRole('status').first().textContent())?.trim(),
    'Saved: the calls you chose have their new status.',
  );

  await page.setViewportSize({ width: 390, height: 844 });
  await checkBoth(page, 'board on a phone');
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390);
  await screenshot(page, 'board-phone');
  assert.deepEqual(csp, []);
  await page.context().close();
});
