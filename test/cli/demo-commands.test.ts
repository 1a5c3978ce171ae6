import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { seedDemoIfEmpty } from '../../src/seed/seed.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { ADMIN_TOKEN } from '../helpers/deps.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, bearer } from '../helpers/http.ts';

/**
 * `callcap demo reset-password [--api-key]` and `callcap user set-password` against a real operator
 * listener: the demo owner (the first start's seed) gets a new password that signs in at
 * POST /app/api/login, the old one stops working; --api-key adds a working key.
 */
let h: Harness;
let base: string;
before(async () => {
  h = await createHarness();
  await h.operator.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.operator.server.address() as AddressInfo).port}`;
});
after(async () => {
  await h?.close();
});

function cli(args: string[], input = '') {
  return cliInProcess(args, { CALLCAP_ADMIN_URL: base, ADMIN_TOKEN }, { input });
}

const signIn = (email: string, password: string) =>
  h.app.inject({ method: 'POST', url: '/app/api/login', payload: { email, password } });

test('demo reset-password on a service without the demo says so and changes nothing', async () => {
  for (const setup of [
    async () => {},
    // an organization whose owner is someone else is not the demo
    async () =>
      assert.equal(
        (
          await admin(h, 'POST', '/organizations', {
            name: 'Demo Plumbing Co.',
            owner_email: 'boss@acme.example',
            owner_password: 'long enough',
          })
        ).statusCode,
        201,
      ),
  ]) {
    await setup();
    const r = await cli(['demo', 'reset-password']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'callcap: this service has no demo organization (no user owner@demo-plumbing.example): the demo is created ' +
        'by the first start on an empty embedded database. Another user\'s password: "callcap user find --email ' +
        '<email>", then "callcap user set-password <user-id> --password -".\n',
    );
  }
  assert.equal((await signIn('boss@acme.example', 'long enough')).statusCode, 200);
  await h.db.query('DELETE FROM sessions');
  await h.db.query('DELETE FROM users');
  await h.db.query('DELETE FROM organizations');
});

test('demo reset-password --api-key: the new password signs in, the old one does not; the key works', async () => {
  const printed = (await seedDemoIfEmpty(h.deps)) ?? '';
  const oldPassword = /password (\S+)/.exec(printed)?.[1] ?? '';
  assert.ok(oldPassword, printed);
  // a later organization does not hide the demo
  assert.equal(
    (
      await admin(h, 'POST', '/organizations', {
        name: 'Later Co',
        owner_email: 'later@acme.example',
        owner_password: 'long enough',
      })
    ).statusCode,
    201,
  );
  const before = await signIn('owner@demo-plumbing.example', oldPassword);
  assert.equal(before.statusCode, 200);
  const oldCookie = String(before.headers['set-cookie']).split(';')[0];

  const r = await cli(['demo', 'reset-password', '--api-key']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const out = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(out), ['organization_id', 'user_id', 'email', 'password', 'api_key']);
  const { rows } = await h.db.query<{ id: string; organization_id: string }>(
    "SELECT id, organization_id FROM users WHERE email = 'owner@demo-plumbing.example'",
  );
  assert.deepEqual([out.user_id, out.organization_id], [rows[0].id, rows[0].organization_id]);
  assert.equal(out.email, 'owner@demo-plumbing.example');
  assert.match(out.password, /^[A-Za-z0-9_-]{16}$/);
  assert.match(out.api_key, /^cc_live_/);

  const old = await signIn('owner@demo-plumbing.example', oldPassword);
  assert.equal(old.statusCode, 401);
  assert.equal(old.json().error.code, 'UNAUTHORIZED');
  const fresh = await signIn('owner@demo-plumbing.example', out.password);
  assert.equal(fresh.statusCode, 200);
  assert.equal(fresh.json().user_id, out.user_id);
  const stale = await h.app.inject({
    method: 'GET',
    url: '/app/api/session',
    headers: { cookie: oldCookie },
  });
  assert.equal(stale.statusCode, 401, 'the session of the old password ended');

  const me = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(out.api_key) });
  assert.equal(me.statusCode, 200, me.body);
  assert.equal(me.json().data.organization_id, out.organization_id);
  const keys = await h.db.query<{ name: string; scopes: string[] }>(
    'SELECT name, scopes FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id',
    [out.organization_id],
  );
  assert.deepEqual(
    keys.rows.map((k) => k.scopes),
    [
      ['read.calls', 'read.recordings'],
      ['read.calls', 'read.recordings'],
    ],
  );
});

test('user find --email, then user set-password with the password from stdin ("-")', async () => {
  const { rows } = await h.db.query<{ id: string; organization_id: string }>(
    "SELECT id, organization_id FROM users WHERE email = 'later@acme.example'",
  );
  const found = await cli(['user', 'find', '--email', 'Later@Acme.example']);
  assert.equal(found.code, 0, found.stderr);
  assert.deepEqual(JSON.parse(found.stdout), {
    users: [
      {
        user_id: rows[0].id,
        organization_id: rows[0].organization_id,
        email: 'later@acme.example',
        role: 'owner',
        created_at: '2026-06-15T10:00:00.000Z',
      },
    ],
  });
  const r = await cli(['user', 'set-password', rows[0].id, '--password', '-'], 'from stdin 123\n');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { user_id: rows[0].id, password_set: true });
  assert.equal((await signIn('later@acme.example', 'from stdin 123')).statusCode, 200);
  assert.equal((await signIn('later@acme.example', 'long enough')).statusCode, 401);

  const short = await cli(['user', 'set-password', rows[0].id, '--password', 'short']);
  assert.equal(short.code, 1);
  assert.equal(
    short.stderr,
    'callcap: 400 BAD_REQUEST: Field "password" must be 8 to 256 characters long.\n',
  );
  const missing = await cli([
    'user',
    'set-password',
    '00000000-0000-4000-8000-000000000000',
    '--password',
    'long enough',
  ]);
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'callcap: 404 NOT_FOUND: No user 00000000-0000-4000-8000-000000000000.\n');
});
