/**
 * A webhook subscription's new signing secret, server side (no browser): post/redirect/get like a
 * new API key. "Create subscription" and a rotation answer 303 to the subscription's page with a
 * one-time reveal id; that page shows the secret to the session that made it, once; the secret is
 * never in an address nor in the logs (at trace level). The Chromium walk is test/web/webhooks.test.ts.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { newId } from '../../src/ids.ts';
import {
  type ConsoleClient,
  cheapPasswordHash,
  login,
  orgWithLogin,
  pageRequest,
} from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { echoChallenge, type Receiver, receiverPool } from '../helpers/receiver.ts';

let h: Harness;
let orgId: string;
let owner: ConsoleClient;
let rx: Receiver;
const receivers = receiverPool();
let logged = '';

before(async () => {
  const logTo = new Writable({
    write(chunk, _enc, done) {
      logged += String(chunk);
      done();
    },
  });
  h = await createHarness({}, { logTo });
  const org = await orgWithLogin(h.db, cheapPasswordHash());
  orgId = org.orgId;
  owner = await login(h, org.email);
  rx = await receivers.start(echoChallenge);
});
after(async () => {
  await receivers.closeAll();
  await h?.close();
});

const page = (c: ConsoleClient, url: string, form?: Record<string, string>) =>
  pageRequest(h.app, c, url, form);

const secretOf = (body: string) => /<code id="signing-secret" class="secret">([^<]+)<\/code>/.exec(body)?.[1];
const statusOf = (body: string) => /<p class="notice ok" role="status">\s*([^<]*?)\s*<\/p>/.exec(body)?.[1];
const REVEAL =
  /^\/app\/settings\/integrations\/webhooks\/([0-9a-f-]{36})\?reveal=([A-Za-z0-9_-]{22})#secret-title$/;

test('"Create subscription": 303 to the page that shows the secret once to its session; a reload creates nothing', async () => {
  const created = await page(owner, '/app/settings/integrations/webhooks', {
    url: rx.url,
    verification_mode: 'strict',
  });
  assert.equal(created.statusCode, 303);
  const location = String(created.headers.location);
  const [, subId] = REVEAL.exec(location) ?? [];
  assert.ok(subId, location);
  const url = location.split('#')[0] as string;
  const subs = await h.db.query<{ id: string; state: string }>(
    'SELECT id, state FROM webhook_subscriptions WHERE organization_id = $1',
    [orgId],
  );
  assert.deepEqual(subs.rows, [{ id: subId, state: 'active' }]);

  // Another session of the same organization finds nothing under that address.
  const other = await login(h, await admin());
  const stranger = await page(other, url);
  assert.equal(stranger.statusCode, 200);
  assert.equal(secretOf(stranger.body), undefined);

  const shown = await page(owner, url);
  assert.equal(shown.statusCode, 200);
  assert.equal(shown.headers['cache-control'], 'no-store');
  const secret = secretOf(shown.body) ?? '';
  assert.match(secret, /^whsec_/);
  assert.equal(
    statusOf(shown.body),
    'Webhook subscription created. Copy its signing secret now: it is shown only this once.',
  );
  assert.match(shown.body, /id="handshake-outcome">Your endpoint answered HTTP 200 and echoed the challenge/);
  const kept = await h.db.query(`SELECT 1 FROM secret_reveals WHERE kind = 'webhook_secret'`);
  assert.equal(kept.rows.length, 0, 'taken out when shown');

  const reload = await page(owner, url);
  assert.equal(reload.statusCode, 200);
  assert.equal(secretOf(reload.body), undefined);
  assert.doesNotMatch(reload.body, /id="handshake-outcome"/);
  assert.equal(
    statusOf(reload.body),
    'The new signing secret was shown once and is not shown again. If you did not copy it, start a rotation below to get another.',
  );
  const after = await h.db.query('SELECT 1 FROM webhook_subscriptions WHERE organization_id = $1', [orgId]);
  assert.equal(after.rows.length, 1);

  // A rotation the same way; its reveal is bound to its subscription: asked on another, nothing.
  const rotated = await page(owner, `/app/settings/integrations/webhooks/${subId}/rotations`, {});
  assert.equal(rotated.statusCode, 303);
  const rotLocation = String(rotated.headers.location);
  assert.equal(REVEAL.exec(rotLocation)?.[1], subId);
  const [, , revealId] = REVEAL.exec(rotLocation) ?? [];
  const elsewhere = await page(
    owner,
    `/app/settings/integrations/webhooks/${await secondSubscription()}?reveal=${revealId}`,
  );
  assert.equal(elsewhere.statusCode, 200);
  assert.equal(secretOf(elsewhere.body), undefined);
  const spent = await page(owner, rotLocation.split('#')[0] as string);
  assert.equal(secretOf(spent.body), undefined, 'a reveal asked on the wrong page is spent');

  const again = await page(owner, `/app/settings/integrations/webhooks/${subId}/rotations`, {});
  const rotation = await page(owner, String(again.headers.location).split('#')[0] as string);
  const secret2 = secretOf(rotation.body) ?? '';
  assert.match(secret2, /^whsec_/);
  assert.notEqual(secret2, secret);
  assert.equal(
    statusOf(rotation.body),
    'A new secret is waiting for activation (up to 24 hours). Deliveries are still signed with the current one.',
  );

  // Neither secret was ever written to the logs (addresses included).
  assert.match(
    logged,
    /"url":"\/app\/settings\/integrations\/webhooks\/[0-9a-f-]{36}"/,
    'the requests were logged',
  );
  assert.ok(!logged.includes(secret), 'the first secret is not in the logs');
  assert.ok(!logged.includes(secret2), 'the rotation secret is not in the logs');
});

async function admin(): Promise<string> {
  const email = `admin-${newId()}@example.test`;
  await h.db.query(
    `INSERT INTO users (id, organization_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, 'admin', now())`,
    [newId(), orgId, email, cheapPasswordHash()],
  );
  return email;
}

async function secondSubscription(): Promise<string> {
  const res = await page(owner, '/app/settings/integrations/webhooks', { url: `${rx.url}/second` });
  assert.equal(res.statusCode, 303);
  const id = REVEAL.exec(String(res.headers.location))?.[1];
  assert.ok(id);
  return id;
}
