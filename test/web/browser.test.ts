import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newPage, startWebApp, type WebApp } from '../helpers/browser.ts';

let app: WebApp;

before(async () => {
  app = await startWebApp();
});

after(async () => {
  await app?.close();
});

test("the test browser runs no page of its own beside the tests' (the address bar's WebUI popup is off)", async () => {
  const page = await newPage(app.browser);
  try {
    await page.goto(`${app.origin}/app/login`);
    const cdp = await app.browser.newBrowserCDPSession();
    try {
      const { targetInfos } = await cdp.send('Target.getTargets');
      assert.deepEqual(
        targetInfos.filter((t) => t.url.startsWith('chrome://')).map((t) => t.url),
        [],
      );
      assert.ok(targetInfos.some((t) => t.type === 'page' && t.url === `${app.origin}/app/login`));
    } finally {
      await cdp.detach();
    }
  } finally {
    await page.context().close();
  }
});
