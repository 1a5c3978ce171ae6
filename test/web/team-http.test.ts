import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadCallSetup } from '../../src/capture/telephony/call-setup.ts';
import { DAY } from '../../src/clock.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { newId } from '../../src/ids.ts';
import {
  type ConsoleClient,
  cheapPasswordHash,
  login,
  orgWithLogin,
  PASSWORD,
  pageRequest,
} from '../helpers/app-api.ts';
import { MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The team, server side (no browser): roles refused by the server itself (pages: a 403 page;
 * console API: 403 FORBIDDEN), invitations (single use, 7 days, kept in email_outbox without
 * SMTP_URL), role changes and the last owner, removal ending sessions, the profile, time zones and
 * the API key's post/redirect/get. The Chromium walk through the same is test/web/team.test.ts.
 */
let h: Harness;
let orgId: string;
let owner: ConsoleClient;
let ownerId: string;

before(async () => {
  h = await createHarness();
  const org = await orgWithLogin(h.db, cheapPasswordHash());
  orgId = org.orgId;
  ownerId = org.ownerId;
  await h.db.query(`UPDATE organizations SET country = 'US' WHERE id = $1`, [orgId]);
  owner = await login(h, org.email);
});
after(async () => {
  await h?.close();
});

/** A member of the organization with `role` who can sign in with PASSWORD; their console client. */
async function member(role: 'owner' | 'admin' | 'agent'): Promise<ConsoleClient & { email: string }> {
  const email = `${role}-${newId()}@example.test`;
  await h.db.query(
    `INSERT INTO users (id, organization_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, $5, now())`,
    [newId(), orgId, email, cheapPasswordHash(), role],
  );
  return { ...(await login(h, email)), email };
}

/** A page request with the client's session; a post carries the form and the CSRF field. */
const page = (c: ConsoleClient, url: string, form?: Record<string, string>) =>
  pageRequest(h.app, c, url, form);

const alertOf = (body: string) =>
  /<p class="notice error" role="alert">\s*([^<]*?)\s*<\/p>/
    .exec(body)?.[1]
    ?.replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, '&');

const INVITE_LINK = /\/app\/invitation\?token=([A-Za-z0-9_-]{43})/;

async function invitationToken(email: string): Promise<string> {
  const { rows } = await h.db.query<{ body: string }>(
    'SELECT body FROM email_outbox WHERE to_address = $1 ORDER BY created_at DESC, id LIMIT 1',
    [email],
  );
  const token = INVITE_LINK.exec(rows[0]?.body ?? '')?.[1];
  assert.ok(token, `the invitation e-mail carries the link: ${rows[0]?.body}`);
  return token;
}

test('an agent is refused every admin page and console endpoint by the server: a 403 page, 403 FORBIDDEN', async () => {
  const agent = await member('agent');
  for (const url of [
    '/app/settings/integrations',
    `/app/settings/integrations/webhooks/${MISSING}`,
    '/app/settings/team',
    '/app/settings/organization',
  ]) {
    const res = await page(agent, url);
    assert.equal(res.statusCode, 403, url);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
    assert.match(alertOf(res.body) ?? '', /^Your role \(agent\) does not allow /, url);
  }
  const post = await page(agent, '/app/settings/integrations/api-keys', {
    name: 'agent key',
    scopes: 'read.calls',
  });
  assert.equal(post.statusCode, 403);
  const invite = await page(agent, '/app/settings/team/invitations', {
    email: 'x@example.test',
    role: 'agent',
  });
  assert.equal(invite.statusCode, 403);

  for (const [method, url] of [
    ['GET', '/app/api/api-keys'],
    ['POST', '/app/api/api-keys'],
    ['GET', '/app/api/webhook-subscriptions'],
    ['POST', '/app/api/webhook-subscriptions'],
  ] as const) {
    const res = method === 'GET' ? await agent.get(url) : await agent.post(url, { scopes: ['read.calls'] });
    assert.equal(res.status, 403, url);
    const body = res.json as { meta: { request_id?: string } };
    assert.equal(typeof body.meta.request_id, 'string');
    delete body.meta.request_id;
    assert.deepEqual(body, {
      success: false,
      error: {
        code: 'FORBIDDEN',
        message:
          'Your role (agent) does not allow managing API keys and webhooks: only owners and admins can. Ask an owner of your organization.',
      },
      meta: { timestamp: '2026-06-15T10:00:00.000Z' },
    });
  }
  const keys = await h.db.query(`SELECT 1 FROM api_keys WHERE organization_id = $1`, [orgId]);
  assert.equal(keys.rows.length, 0);

  // What an agent may: calls, contacts, their profile, their session.
  for (const url of ['/app/calls', '/app/contacts', '/app/trackers', '/app/settings/profile']) {
    assert.equal((await page(agent, url)).statusCode, 200, url);
  }
  assert.equal((await agent.get('/app/api/session')).status, 200);
  const calls = await page(agent, '/app/calls');
  assert.doesNotMatch(calls.body, /href="\/app\/settings\/integrations"/, 'no link to what is refused');

  // An admin may.
  const admin = await member('admin');
  assert.equal((await page(admin, '/app/settings/integrations')).statusCode, 200);
  assert.equal((await admin.get('/app/api/api-keys')).status, 200);
});

test('an invitation: kept in the outbox without SMTP_URL, single use, valid 7 days, for an address without an account', async () => {
  const email = `new-${newId()}@example.test`;
  const res = await page(owner, '/app/settings/team/invitations', {
    email: email.toUpperCase(),
    role: 'agent',
  });
  assert.equal(res.statusCode, 303);
  // No SMTP_URL: the sender is shown the link once, after the redirect, never in the address.
  const location = String(res.headers.location);
  assert.match(location, /^\/app\/settings\/team\?done=kept&reveal=[A-Za-z0-9_-]{22}#kept-link-title$/);
  await waitFor(async () => {
    const { rows } = await h.db.query(
      `SELECT 1 FROM email_outbox WHERE to_address = $1 AND status = 'kept'`,
      [email],
    );
    return rows.length === 1;
  }, 'the invitation kept in email_outbox');
  const token = await invitationToken(email);
  const kept = await page(owner, location.split('#')[0] as string);
  assert.match(kept.body, /No mail server is set up \(SMTP_URL\), so the e-mail was not sent/);
  assert.equal(
    /<code id="invitation-link" class="secret">([^<]+)<\/code>/.exec(kept.body)?.[1],
    `https://calls.example.test/app/invitation?token=${token}`,
  );
  const again1 = await page(owner, location.split('#')[0] as string);
  assert.doesNotMatch(again1.body, /id="invitation-link"/, 'shown once');
  const team = await page(owner, '/app/settings/team');
  assert.match(team.body, new RegExp(`<td data-label="E-mail">${email}</td>`));

  const shown = await h.app.inject({ url: `/app/invitation?token=${token}` });
  assert.equal(shown.statusCode, 200);
  assert.match(shown.body, /You are invited to <strong>Acme Plumbing<\/strong> as agent/);

  const accept = (t: string, name: string, password: string, confirm = password) =>
    h.app.inject({
      method: 'POST',
      url: '/app/invitation',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: t, name, password, confirm }).toString(),
    });
  const short = await accept(token, 'Nia Agent', 'short');
  assert.equal(short.statusCode, 400);
  assert.match(short.body, /id="password"[^>]*aria-invalid="true"/);
  const noName = await accept(token, '  ', PASSWORD);
  assert.equal(noName.statusCode, 400);
  assert.equal(alertOf(noName.body), 'Enter your name (1 to 100 characters).');

  const ok = await accept(token, 'Nia Agent', PASSWORD);
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, '/app/settings/profile?done=welcome');
  const cookie = String(ok.headers['set-cookie']).split(';')[0] as string;
  const profile = await h.app.inject({ url: '/app/settings/profile?done=welcome', headers: { cookie } });
  assert.equal(profile.statusCode, 200);
  assert.match(profile.body, /Welcome! You are signed in\./);
  const { rows } = await h.db.query('SELECT role, name FROM users WHERE email = $1', [email]);
  assert.deepEqual(rows, [{ role: 'agent', name: 'Nia Agent' }]);

  // Used once: the link is dead, and the address now has an account.
  assert.equal((await accept(token, 'Again', PASSWORD)).statusCode, 400);
  const again = await page(owner, '/app/settings/team/invitations', { email, role: 'agent' });
  assert.equal(again.statusCode, 409);
  assert.match(again.body, /id="email"[^>]*aria-invalid="true"/);
  assert.equal(alertOf(again.body), `${email} already has a Call Capture account; invite another address.`);

  // Valid 7 days.
  const late = `late-${newId()}@example.test`;
  assert.equal(
    (await page(owner, '/app/settings/team/invitations', { email: late, role: 'admin' })).statusCode,
    303,
  );
  const lateToken = await invitationToken(late);
  h.clock.advance(7 * DAY - 1);
  assert.equal((await h.app.inject({ url: `/app/invitation?token=${lateToken}` })).statusCode, 200);
  h.clock.advance(1);
  const expired = await h.app.inject({ url: `/app/invitation?token=${lateToken}` });
  assert.equal(expired.statusCode, 400);
  assert.equal(alertOf(expired.body), 'This invitation has expired, was replaced or was already used.');
  owner = await login(
    h,
    (await h.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [ownerId])).rows[0]!.email,
  );
});

test('an empty or malformed invitation is refused on its field; an admin cannot invite an owner', async () => {
  const bad = await page(owner, '/app/settings/team/invitations', { email: 'not an address', role: 'agent' });
  assert.equal(bad.statusCode, 400);
  assert.equal(alertOf(bad.body), 'Enter an e-mail address such as name@example.com.');
  assert.match(bad.body, /id="email"[^>]*aria-invalid="true"[^>]*aria-describedby="email-error email-hint"/);
  const admin = await member('admin');
  const asOwner = await page(admin, '/app/settings/team/invitations', {
    email: `o-${newId()}@example.test`,
    role: 'owner',
  });
  assert.equal(asOwner.statusCode, 403);
  assert.match(
    alertOf(asOwner.body) ?? '',
    /^Your role \(admin\) does not allow making, demoting or removing an owner/,
  );
});

test('the last owner can be neither demoted nor removed; an admin cannot touch an owner', async () => {
  const demote = await page(owner, `/app/settings/team/members/${ownerId}/role`, { role: 'admin' });
  assert.equal(demote.statusCode, 409);
  assert.equal(
    alertOf(demote.body),
    'You cannot demote the last owner: make another member an owner first, then try again.',
  );
  const remove = await page(owner, `/app/settings/team/members/${ownerId}/remove`, {});
  assert.equal(remove.statusCode, 409);
  assert.equal(
    alertOf(remove.body),
    'You cannot remove the last owner: make another member an owner first, then try again.',
  );
  const admin = await member('admin');
  assert.equal(
    (await page(admin, `/app/settings/team/members/${ownerId}/role`, { role: 'agent' })).statusCode,
    403,
  );
  assert.equal((await page(admin, `/app/settings/team/members/${ownerId}/remove`, {})).statusCode, 403);
  const { rows } = await h.db.query('SELECT role FROM users WHERE id = $1', [ownerId]);
  assert.deepEqual(rows, [{ role: 'owner' }]);

  // With a second owner, the first may step down.
  const { rows: ids } = await h.db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [
    admin.email,
  ]);
  const promote = await page(owner, `/app/settings/team/members/${ids[0]!.id}/role`, { role: 'owner' });
  assert.equal(promote.statusCode, 303);
  assert.equal(promote.headers.location, '/app/settings/team?done=role_changed');
  assert.equal((await page(admin, '/app/settings/team')).statusCode, 200);
  await h.db.query(`UPDATE users SET role = 'admin' WHERE id = $1`, [ids[0]!.id]);
});

test('a role change applies at the next request: an agent made admin reaches the integrations', async () => {
  const agent = await member('agent');
  assert.equal((await agent.get('/app/api/api-keys')).status, 403);
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [agent.email]);
  assert.equal(
    (await page(owner, `/app/settings/team/members/${rows[0]!.id}/role`, { role: 'admin' })).statusCode,
    303,
  );
  assert.equal((await agent.get('/app/api/api-keys')).status, 200);
  assert.equal((await page(agent, '/app/settings/integrations')).statusCode, 200);
});

test('removing a member ends their sessions at once: their next request is signed out, their e-mail is free again', async () => {
  const agent = await member('agent');
  const second = await login(h, agent.email);
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [agent.email]);
  const id = rows[0]!.id;
  const confirm = await page(owner, `/app/settings/team/members/${id}/remove`);
  assert.equal(confirm.statusCode, 200);
  assert.match(confirm.body, /is signed out everywhere at once/);
  const removed = await page(owner, `/app/settings/team/members/${id}/remove`, {});
  assert.equal(removed.statusCode, 303);
  assert.equal(removed.headers.location, '/app/settings/team?done=removed');

  const sessions = await h.db.query('SELECT 1 FROM sessions WHERE user_id = $1', [id]);
  assert.equal(sessions.rows.length, 0);
  const next = await page(agent, '/app/contacts');
  assert.equal(next.statusCode, 303);
  assert.equal(next.headers.location, '/app/login?next=%2Fapp%2Fcontacts');
  assert.equal((await second.get('/app/api/session')).status, 401);
  const signIn = await h.app.inject({
    method: 'POST',
    url: '/app/api/login',
    payload: { email: agent.email, password: PASSWORD },
  });
  assert.equal(signIn.statusCode, 401);
  const team = await page(owner, '/app/settings/team');
  assert.doesNotMatch(team.body, new RegExp(agent.email));
  // The address can be invited again.
  assert.equal(
    (await page(owner, '/app/settings/team/invitations', { email: agent.email, role: 'agent' })).statusCode,
    303,
  );
});

test('profile: the phone is checked and used by click-to-call; the password changes with the current one, other sessions end', async () => {
  const agent = await member('agent');
  const other = await login(h, agent.email);
  const bad = await page(agent, '/app/settings/profile', { name: 'Ana', phone: '12', time_zone: '' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /id="phone"[^>]*aria-invalid="true"[^>]*aria-describedby="phone-error phone-hint"/);
  const badZone = await page(agent, '/app/settings/profile', {
    name: 'Ana',
    phone: '',
    time_zone: 'Mars/Olympus',
  });
  assert.equal(badZone.statusCode, 400);
  const ok = await page(agent, '/app/settings/profile', {
    name: 'Ana',
    phone: '(415) 555-2671',
    time_zone: '',
  });
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, '/app/settings/profile?done=saved');
  const { rows } = await h.db.query<{ id: string; phone_e164: string; name: string }>(
    'SELECT id, phone_e164, name FROM users WHERE email = $1',
    [agent.email],
  );
  assert.equal(rows[0]!.phone_e164, '+14155552671');
  const setup = await loadCallSetup(h.db, tenantScope(orgId), rows[0]!.id);
  assert.equal(setup.lastAgentPhone, '+14155552671');

  const wrong = await page(agent, '/app/settings/profile/password', {
    current_password: 'not it at all',
    new_password: 'a new password',
    confirm_password: 'a new password',
  });
  assert.equal(wrong.statusCode, 400);
  assert.match(wrong.body, /id="current_password"[^>]*aria-invalid="true"/);
  const differ = await page(agent, '/app/settings/profile/password', {
    current_password: PASSWORD,
    new_password: 'a new password',
    confirm_password: 'another',
  });
  assert.equal(differ.statusCode, 400);
  const changed = await page(agent, '/app/settings/profile/password', {
    current_password: PASSWORD,
    new_password: 'a new password',
    confirm_password: 'a new password',
  });
  assert.equal(changed.statusCode, 303);
  assert.equal(changed.headers.location, '/app/settings/profile?done=password_changed');
  assert.equal((await agent.get('/app/api/session')).status, 200, 'the session that changed it stays');
  assert.equal((await other.get('/app/api/session')).status, 401, 'the other session ended');
  await login(h, agent.email, 'a new password');
});

test('times on the pages: the organization’s zone, the user’s own zone over it, the UTC time on hover', async () => {
  const admin = await member('admin');
  const span = async (c: ConsoleClient) =>
    /<td data-label="Member since"><time datetime="([^"]+)" title="([^"]+)">([^<]+)<\/time>/.exec(
      (await page(c, '/app/settings/team')).body,
    );
  const utc = await span(admin);
  assert.ok(utc);
  const at = new Date(utc[1] as string);
  assert.equal(utc[2], utc[3], 'in UTC the text is the absolute time');

  const bad = await page(admin, '/app/settings/organization', {
    language: 'en',
    time_zone: 'Europe/Nowhere',
  });
  assert.equal(bad.statusCode, 400);
  const saved = await page(admin, '/app/settings/organization', {
    language: 'en',
    time_zone: 'Europe/Paris',
  });
  assert.equal(saved.statusCode, 303);
  const paris = await span(admin);
  const fmt = (zone: string) =>
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(at);
  assert.match(paris?.[3] ?? '', new RegExp(` ${fmt('Europe/Paris')} GMT\\+[12]$`));
  assert.equal(paris?.[2], utc[2], 'the absolute UTC time on hover');

  assert.equal(
    (await page(admin, '/app/settings/profile', { name: 'Ad Min', phone: '', time_zone: 'America/New_York' }))
      .statusCode,
    303,
  );
  const ny = await span(admin);
  assert.match(ny?.[3] ?? '', new RegExp(` ${fmt('America/New_York')} E[DS]T$`));
  await page(admin, '/app/settings/organization', { language: 'en', time_zone: 'UTC' });
});

test('creating an API key: post/redirect/get, shown once to its session, a reload creates nothing; an empty form is refused on its field', async () => {
  const empty = await page(owner, '/app/settings/integrations/api-keys', { name: '', scopes: 'read.calls' });
  assert.equal(empty.statusCode, 400);
  assert.match(
    empty.body,
    /id="key-name"[^>]*aria-invalid="true"[^>]*aria-describedby="name-error key-name-hint"/,
  );
  assert.equal(
    alertOf(empty.body),
    'Give the key a name, e.g. "CRM sync", so that you can tell your keys apart.',
  );

  const created = await page(owner, '/app/settings/integrations/api-keys', {
    name: 'PRG key',
    scopes: 'read.calls',
  });
  assert.equal(created.statusCode, 303);
  const location = String(created.headers.location);
  assert.match(location, /^\/app\/settings\/integrations\?reveal=[A-Za-z0-9_-]{22}#new-key-title$/);
  const url = location.split('#')[0] as string;

  // Another session of the same organization finds nothing under that address.
  const admin = await member('admin');
  const stranger = await page(admin, url);
  assert.equal(stranger.statusCode, 200);
  assert.doesNotMatch(stranger.body, /id="new-key"/);

  const shown = await page(owner, url);
  assert.equal(shown.statusCode, 200);
  assert.equal(shown.headers['cache-control'], 'no-store');
  const key = /<code id="new-key" class="secret">([^<]+)<\/code>/.exec(shown.body)?.[1];
  assert.match(key ?? '', /^cc_live_[A-Za-z0-9_-]{43}$/);
  const stored = await h.db.query(`SELECT ciphertext FROM secret_reveals WHERE kind = 'api_key'`);
  assert.equal(stored.rows.length, 0, 'taken out when shown');

  const reload = await page(owner, url);
  assert.equal(reload.statusCode, 200);
  assert.doesNotMatch(reload.body, /id="new-key"/);
  assert.match(reload.body, /The new key was shown once and is not shown again\./);
  const { rows } = await h.db.query(`SELECT 1 FROM api_keys WHERE name = 'PRG key'`);
  assert.equal(rows.length, 1);
});

test('the operator API creates an admin by default, or the role it is given', async () => {
  const create = (body: object) =>
    h.operator.inject({
      method: 'POST',
      url: `/admin/v1/organizations/${orgId}/users`,
      headers: adminHeaders,
      payload: body,
    });
  const plain = await create({ email: `plain-${newId()}@example.test`, password: PASSWORD });
  const agent = await create({ email: `agent-${newId()}@example.test`, password: PASSWORD, role: 'agent' });
  const bad = await create({ email: `bad-${newId()}@example.test`, password: PASSWORD, role: 'member' });
  assert.equal(plain.statusCode, 201);
  assert.equal(agent.statusCode, 201);
  assert.equal(bad.statusCode, 400);
  const { rows } = await h.db.query<{ role: string }>(
    'SELECT role FROM users WHERE id = ANY($1) ORDER BY role',
    [[plain.json().user_id, agent.json().user_id]],
  );
  assert.deepEqual(
    rows.map((r) => r.role),
    ['admin', 'agent'],
  );
});
