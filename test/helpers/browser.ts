/**
 * Browser tests of the web app: Debian's Chromium (/usr/bin/chromium) driven by playwright-core.
 *
 *   const browser = await startBrowser();            // one per test file; `after(() => browser.close())`
 *                                                    // (in the test worker: a lease on its one Chromium)
 *   const origin = await serve(h);                   // h.app on 127.0.0.1:<random port>: "http://127.0.0.1:PORT"
 *   const page = await newPage(browser);             // a fresh context: own cookies, no session
 *   await signIn(page, origin, email);               // the sign-in form's post (PASSWORD by default)
 *   await fillSignIn(page, email);                   // typed into the sign-in form the page shows
 *   const csp = watchCsp(page);                      // CSP violations the page reports; expect [] at the end
 *   await checkA11y(page, 'calls list');             // axe-core: fails on any serious or critical violation
 *   await checkBoth(page, 'calls list');             // the same at 1280 and 390 px, no sideways scroll at 390
 *   await screenshot(page, 'calls-list');            // <SCREENSHOT_DIR>/calls-list.png (full page, 1024 px)
 *                                                    // with SCREENSHOTS=docs or =tmp; none on an ordinary run
 *
 * The browser runs headless with --no-sandbox --disable-gpu --disable-background-networking
 * --disable-component-update --no-first-run, and without the address bar's WebUI popup (see
 * OMNIBOX_WEBUI_FEATURES: a renderer per context, 30–40 % of Chromium's CPU in these tests);
 * launch() gives it a fresh temporary profile (user-data dir), deleted when it closes. In the test
 * worker one Chromium serves every file the worker runs (startBrowser()); the files share no
 * state through it: each page is in a context of its own (a fresh one per test: no cookie, storage,
 * cache or permission of an earlier test), and a file's contexts are closed when it closes its
 * lease. Use a harness made with
 * `createHarness(BROWSER_ENV)`: an http PUBLIC_BASE_URL, so the session cookie is not marked Secure for the plain-http test origin
 * (Secure on https is tested without a browser).
 *
 * axe-core is injected with page.evaluate (the DevTools protocol), which the page's strict
 * Content-Security-Policy does not govern, so the pages are checked with their real headers on.
 */

import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type APIResponse, type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Queryable } from '../../src/db/types.ts';
import { cheapPasswordHash, orgWithLogin, PASSWORD } from './app-api.ts';
import { createHarness, type Harness } from './harness.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const BROWSER_ENV = { PUBLIC_BASE_URL: 'http://127.0.0.1' };

const root = resolve(import.meta.dirname, '../..');
/**
 * Where screenshots go: docs/console/ when SCREENSHOTS=docs (`npm run screenshots`, the command that
 * refreshes the pictures docs/console.md shows), a folder under the system temp folder when
 * SCREENSHOTS has another value (e.g. `SCREENSHOTS=tmp`, to look at them without touching tracked
 * files), nowhere on an ordinary run: no test asserts on a picture, and a full-page PNG costs
 * ~0.2 s of wall and CPU each (48 of them in test/web/).
 */
export const SCREENSHOT_DIR: string | undefined =
  process.env.SCREENSHOTS === 'docs'
    ? join(root, 'docs/console')
    : process.env.SCREENSHOTS
      ? join(tmpdir(), 'callcap-screenshots')
      : undefined;

/**
 * Chromium for one test file. Inside the test worker (scripts/test-worker.ts, which runs file after
 * file in one process) every file gets the worker's one Chromium, launched by the first file that
 * asks and again after a crash: a launch costs ~0.5 s of wall and CPU per file. What the file gets
 * is a lease on it: `close()` closes the contexts the file opened through it, not Chromium, so the
 * next file starts from no context, no cookie, no page, as with a browser of its own. Outside the
 * worker (`node --test`, TEST_ISOLATION=process) it is a browser of the file's own, as before.
 */
export async function startBrowser(): Promise<Browser> {
  const atExit = (globalThis as Record<symbol, unknown>)[Symbol.for(WORKER_AT_EXIT)] as
    | (() => Promise<void>)[]
    | undefined;
  if (!atExit) return launchBrowser();
  if (!shared) atExit.push(async () => (await shared?.catch(() => undefined))?.close());
  let browser = await shared?.catch(() => undefined);
  if (!browser?.isConnected()) {
    shared = launchKept();
    browser = await shared;
  }
  return lease(browser);
}

/** The key of scripts/test-worker.ts's registry of closers run when the worker exits. */
const WORKER_AT_EXIT = 'callcap.test-worker.at-exit';
let shared: Promise<Browser> | undefined;

/**
 * Launches Chromium and unrefs its process and pipes: they neither keep the worker alive nor count
 * among the open resources the worker waits for after each file (the worker's IPC channel keeps it
 * alive; the worker closes the browser before it exits). Node gives no public way to the process
 * playwright spawns, so it is found among the handles that keep the loop alive (the one whose
 * spawnfile is CHROMIUM and was not there before); if that ever fails, the launch fails loudly.
 */
async function launchKept(): Promise<Browser> {
  const handles = () => (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  const before = new Set(handles());
  const browser = await launchBrowser();
  const child = handles().find(
    (x): x is ChildProcess => !before.has(x) && (x as ChildProcess).spawnfile === CHROMIUM,
  );
  if (!child) {
    await browser.close();
    throw new Error(`the Chromium process playwright started (${CHROMIUM}) is not among the active handles`);
  }
  const lists = child.spawnargs.filter((a) => a.startsWith('--disable-features='));
  const last = new Set(lists.at(-1)?.slice('--disable-features='.length).split(','));
  const lost = lists
    .flatMap((l) => l.slice('--disable-features='.length).split(','))
    .filter((f) => !last.has(f));
  if (lost.length > 0) {
    await browser.close();
    throw new Error(`only the last --disable-features counts; add to DISABLED_FEATURES: ${lost.join(', ')}`);
  }
  child.unref();
  for (const pipe of child.stdio) (pipe as { unref?(): void } | null)?.unref?.();
  return browser;
}

/** The shared browser as one file sees it: its contexts are its own, and close() closes them. */
function lease(browser: Browser): Browser {
  const mine = new Set<BrowserContext>();
  const own = (context: BrowserContext) => {
    mine.add(context);
    context.once('close', () => mine.delete(context));
    return context;
  };
  return new Proxy(browser, {
    get(target, prop) {
      if (prop === 'newContext')
        return async (...args: Parameters<Browser['newContext']>) => own(await target.newContext(...args));
      if (prop === 'newPage')
        return async (...args: Parameters<Browser['newPage']>) => {
          const page = await target.newPage(...args);
          own(page.context());
          return page;
        };
      if (prop === 'close') return async () => void (await Promise.all([...mine].map((c) => c.close())));
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * The features playwright-core (1.65, server/chromium/chromiumSwitches.ts) turns off with its own
 * --disable-features. Chromium reads only the last --disable-features on its command line, so the
 * one launchBrowser() passes repeats them; launchKept() fails loudly if playwright's list ever holds
 * one this list lacks.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * Chromium's own WebUI for the address bar's popup (chrome://omnibox-popup.top-chrome/ and its AI
 * Mode page), which headless Chromium 156 still builds, preloaded, for every window, i.e. for every
 * browser context: a renderer of its own per context, ~1 s of CPU to start and 0.1–0.17 s per
 * second after, with nobody looking (docs/benchmarks.md, branch webcpu). A test never shows the
 * address bar; test/web/browser.test.ts checks that no such page runs.
 */
const OMNIBOX_WEBUI_FEATURES = [
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
  'PreloadTopChromeWebUI',
];

const DISABLED_FEATURES = [...PLAYWRIGHT_DISABLED_FEATURES, ...OMNIBOX_WEBUI_FEATURES];

function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--autoplay-policy=no-user-gesture-required',
      `--disable-features=${DISABLED_FEATURES.join(',')}`,
    ],
  });
}

/** Starts the harness's public app on a random loopback port; h.close() stops it. */
export async function serve(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = h.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** A page in a fresh browser context (no cookies), 1024×768, English. */
export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale: 'en-US' });
  return context.newPage();
}

/**
 * Signs the page's context in as the sign-in form does, over HTTP in that context (its cookie jar):
 * GET /app/login for the form's hidden fields (the login CSRF token, with its cookie, and `next`),
 * POST them with the e-mail and password, then opens the page the answer leads to and waits for it.
 * Cheaper than typing into the rendered form (~0.4 s of wall and ~0.6 s of CPU less per sign-in,
 * 38 of them in test/web/); the form itself is typed into by fillSignIn() in sign-in.test.ts (and,
 * after a reset or a sign-out, on the sign-in page the app led to). Throws if the sign-in is refused.
 */
export async function signIn(page: Page, origin: string, email: string, password = PASSWORD): Promise<void> {
  const res = await postSignIn(page, origin, email, password);
  const to = res.headers().location;
  if (res.status() !== 303 || !to) throw new Error(`signing in as ${email} was refused: ${res.status()}`);
  await page.goto(new URL(to, origin).href);
}

/**
 * One sign-in attempt as the form makes it, over HTTP in the page's context: the form's hidden
 * fields from GET /app/login (its CSRF token and cookie, `next`), the e-mail and password; the
 * answer is not followed (303 to the app when the sign-in is accepted).
 */
export async function postSignIn(
  page: Page,
  origin: string,
  email: string,
  password: string,
): Promise<APIResponse> {
  const form = await (await page.request.get(`${origin}/app/login`)).text();
  const hidden = Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]),
  );
  return page.request.post(`${origin}/app/login`, { form: { ...hidden, email, password }, maxRedirects: 0 });
}

/** Fills and sends the sign-in form of the current page (for a sign-in page reached by a redirect). */
export async function fillSignIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([
    page.waitForURL((u) => !u.pathname.startsWith('/app/login')),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
}

/** Collects the Content-Security-Policy violations the page reports from now on. */
export function watchCsp(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) seen.push(m.text());
  });
  return seen;
}

const AXE_SOURCE = readFileSync(join(root, 'node_modules/axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Runs axe-core on the current page; throws listing every serious or critical violation. */
export async function checkA11y(page: Page, what: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is injected into the page at run time
    const axe = (globalThis as any).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations as AxeViolation[];
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length > 0) {
    const lines = bad.map(
      (v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
    throw new Error(`axe found ${bad.length} serious/critical violation(s) on ${what}:\n${lines.join('\n')}`);
  }
}

/** The two widths every page state is checked at: a desktop and a phone. */
export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/**
 * axe at desktop (1280 px) and phone (390 px) width, and nothing scrolls sideways on the phone; the
 * page is left at the viewport it had. Every browser test checks its page states with this.
 */
export async function checkBoth(page: Page, what: string): Promise<void> {
  const was = page.viewportSize();
  try {
    await page.setViewportSize(DESKTOP);
    await checkA11y(page, `${what} at 1280 px`);
    await page.setViewportSize(PHONE);
    await checkA11y(page, `${what} at 390 px`);
    const sideways = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    if (sideways > 0) throw new Error(`${what} scrolls sideways at 390 px (${sideways} px too wide)`);
  } finally {
    if (was) await page.setViewportSize(was);
  }
}

/**
 * Saves a full-page screenshot as <SCREENSHOT_DIR>/<name>.png (docs/console/ under `npm run
 * screenshots`); takes none when SCREENSHOTS is unset. The page is scrolled to the top first (also
 * without a picture, so the page is left in the same state either way): a sticky element (the call
 * page's player) is drawn where the window was, so a page left scrolled would show it over the
 * middle of the page.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  if (SCREENSHOT_DIR === undefined) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** What a browser test file shares: the app on a loopback port and Chromium; close() in `after`. */
export interface WebApp {
  h: Harness;
  origin: string;
  browser: Browser;
  close(): Promise<void>;
}

/** One per browser test file (a fresh harness and browser each cost seconds). */
export async function startWebApp(): Promise<WebApp> {
  const h = await createHarness(BROWSER_ENV);
  let browser: Browser | undefined;
  try {
    const origin = await serve(h);
    browser = await startBrowser();
    const b = browser;
    return {
      h,
      origin,
      browser: b,
      close: async () => {
        await b.close();
        await h.close();
      },
    };
  } catch (err) {
    await browser?.close();
    await h.close();
    throw err;
  }
}

/** The owner's and the member's (an agent's, accounts/roles.ts) e-mail of demoOrganization: fixed, as the organization's name. */
export const DEMO_OWNER = 'owner@demo-plumbing.example';
export const DEMO_MEMBER = 'member@demo-plumbing.example';

/**
 * An organization named "Demo Plumbing Co." whose owner (and member, when asked) sign in with
 * PASSWORD under fixed e-mails, so the screenshots in docs/console/ only change when the pages do.
 */
export async function demoOrganization(
  db: Queryable,
  opts: { member?: boolean } = {},
): Promise<{ orgId: string; ownerId: string; email: string }> {
  const { orgId, ownerId } = await orgWithLogin(db, cheapPasswordHash());
  await db.query('UPDATE users SET email = $1 WHERE id = $2', [DEMO_OWNER, ownerId]);
  await db.query(`UPDATE organizations SET name = 'Demo Plumbing Co.' WHERE id = $1`, [orgId]);
  if (opts.member) {
    await db.query(
      `INSERT INTO users (id, organization_id, email, password_hash, role, created_at)
       VALUES (gen_random_uuid(), $1, $2, $3, 'agent', now())`,
      [orgId, DEMO_MEMBER, cheapPasswordHash()],
    );
  }
  return { orgId, ownerId, email: DEMO_OWNER };
}
