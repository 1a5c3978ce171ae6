import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HOUR, MINUTE } from '../../src/clock.ts';
import { cheapPasswordHash, login, orgWithLogin, PASSWORD, passwordHash } from '../helpers/app-api.ts';
import { insertApiKey } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let email: string;
let orgId: string;
let ownerId: string;

before(async () => {
  h = await createHarness();
  ({ email, orgId, ownerId } = await orgWithLogin(h.db, await passwordHash()));
});
after(() => h.close());

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers });

/** POST /app/api/login from a given client address. */
const loginFrom = (remoteAddress: string, email: string, password: string) =>
  h.app.inject({ method: 'POST', url: '/app/api/login', payload: { email, password }, remoteAddress });

/** A fresh account whose password is PASSWORD at a low scrypt cost (many checks stay fast). */
const cheapAccount = async () => (await orgWithLogin(h.db, cheapPasswordHash())).email;

/** How many answers had each status, e.g. { 401: 20, 429: 10 }. */
const tally = (answers: { statusCode: number }[]) => {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.statusCode] = (out[a.statusCode] ?? 0) + 1;
  return out;
};

test('login answers 200 with user, organization and CSRF token and sets the session cookie with exact flags', async () => {
  const res = await post('/app/api/login', { email, password: PASSWORD });
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['csrf_token', 'organization_id', 'user_id']);
  assert.equal(body.user_id, ownerId);
  assert.equal(body.organization_id, orgId);
  assert.match(body.csrf_token, /^[A-Za-z0-9_-]{43}$/);
  const cookie = res.headers['set-cookie'];
  assert.equal(typeof cookie, 'string');
  assert.match(cookie as string, /^cc_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/; Secure$/);
  assert.equal(res.headers['cache-control'], 'no-store');
});

test('the sessions table stores the SHA-256 of the cookie, never the cookie itself', async () => {
  const c = await login(h, email);
  const value = c.cookie.split('=')[1] as string;
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM sessions WHERE user_id = $1', [ownerId]);
  assert.ok(rows.length > 0);
  assert.ok(rows.every((r) => r.id !== value));
  const { createHash } = await import('node:crypto');
  assert.ok(rows.some((r) => r.id === createHash('sha256').update(value).digest('hex')));
});

test('the e-mail is matched case-insensitively', async () => {
  const res = await post('/app/api/login', { email: email.toUpperCase(), password: PASSWORD });
  assert.equal(res.statusCode, 200);
});

test('a wrong password and an unknown e-mail answer the same 401 UNAUTHORIZED', async () => {
  const wrong = await post('/app/api/login', { email, password: 'not the password' });
  const unknown = await post('/app/api/login', { email: 'nobody@example.test', password: PASSWORD });
  assert.equal(wrong.statusCode, 401);
  assert.equal(unknown.statusCode, 401);
  assert.equal(wrong.json().error.code, 'UNAUTHORIZED');
  assert.equal(wrong.json().error.message, unknown.json().error.message);
  assert.equal(wrong.json().success, false);
  assert.equal(wrong.headers['set-cookie'], undefined);
});

test('a login body without password answers 400 BAD_REQUEST naming the field', async () => {
  const res = await post('/app/api/login', { email });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'BAD_REQUEST');
  assert.match(res.json().error.message, /password/);
});

test('GET /session answers the session user, organization and CSRF token', async () => {
  const c = await login(h, email);
  const res = await c.get('/app/api/session');
  assert.equal(res.status, 200);
  assert.deepEqual(res.json, {
    user_id: ownerId,
    organization_id: orgId,
    environment: 'live',
    csrf_token: c.csrf,
  });
});

test('GET /session without a cookie answers 401 UNAUTHORIZED', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/app/api/session' });
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().error.code, 'UNAUTHORIZED');
});

test('a made-up session cookie answers 401 UNAUTHORIZED', async () => {
  const res = await h.app.inject({
    method: 'GET',
    url: '/app/api/session',
    headers: { cookie: 'cc_session=forged' },
  });
  assert.equal(res.statusCode, 401);
});

test('a valid Bearer API key is not accepted by the console API: 401', async () => {
  const { key } = await insertApiKey(h.db, { orgId, userId: ownerId });
  for (const [method, url] of [
    ['GET', '/app/api/session'],
    ['GET', '/app/api/api-keys'],
    ['POST', '/app/api/api-keys'],
  ] as const) {
    const res = await h.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}` },
      payload: method === 'POST' ? { scopes: ['read.calls'] } : undefined,
    });
    assert.equal(res.statusCode, 401, `${method} ${url}`);
    assert.equal(res.json().error.code, 'UNAUTHORIZED');
    assert.match(res.json().error.message, /API keys are not accepted/);
  }
});

test('logout without the CSRF token answers 403 FORBIDDEN and keeps the session', async () => {
  const c = await login(h, email);
  const res = await h.app.inject({ method: 'POST', url: '/app/api/logout', headers: { cookie: c.cookie } });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().error.code, 'FORBIDDEN');
  assert.equal((await c.get('/app/api/session')).status, 200);
});

test('logout with a wrong CSRF token answers 403 FORBIDDEN', async () => {
  const c = await login(h, email);
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/api/logout',
    headers: { cookie: c.cookie, 'x-csrf-token': `${c.csrf}x` },
  });
  assert.equal(res.statusCode, 403);
});

test("another session's CSRF token is refused: 403", async () => {
  const a = await login(h, email);
  const b = await login(h, email);
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/api/logout',
    headers: { cookie: a.cookie, 'x-csrf-token': b.csrf },
  });
  assert.equal(res.statusCode, 403);
});

test('logout answers 204, clears the cookie and ends the session server-side', async () => {
  const c = await login(h, email);
  const res = await c.post('/app/api/logout');
  assert.equal(res.status, 204);
  assert.equal(res.headers['set-cookie'], 'cc_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0; Secure');
  const after = await c.get('/app/api/session');
  assert.equal(after.status, 401);
});

test('a session idle for two hours has expired: 401', async () => {
  const c = await login(h, email);
  h.clock.advance(2 * HOUR - MINUTE);
  assert.equal((await c.get('/app/api/session')).status, 200);
  h.clock.advance(2 * HOUR - MINUTE); // used a minute before the idle deadline, so it slid
  assert.equal((await c.get('/app/api/session')).status, 200);
  h.clock.advance(2 * HOUR);
  assert.equal((await c.get('/app/api/session')).status, 401);
});

test('a session in constant use still ends twelve hours after login', async () => {
  const c = await login(h, email);
  for (let i = 0; i < 11; i++) {
    h.clock.advance(HOUR);
    assert.equal((await c.get('/app/api/session')).status, 200, `hour ${i + 1}`);
  }
  h.clock.advance(HOUR);
  assert.equal((await c.get('/app/api/session')).status, 401);
});

test('twenty failed logins a minute for one e-mail from one address answer 429 with Retry-After, then reset', async () => {
  h.clock.set('2026-06-16T09:00:10.000Z');
  const target = `throttled-${Date.now()}@example.test`;
  for (let i = 0; i < 20; i++) {
    assert.equal((await post('/app/api/login', { email: target, password: 'bad' })).statusCode, 401);
  }
  const limited = await post('/app/api/login', { email: target, password: 'bad' });
  assert.equal(limited.statusCode, 429);
  assert.equal(limited.json().error.code, 'RATE_LIMITED');
  assert.equal(limited.headers['retry-after'], '50');
  // Another e-mail from the same address is not affected.
  assert.equal((await post('/app/api/login', { email, password: PASSWORD })).statusCode, 200);
  h.clock.advance(MINUTE);
  assert.equal((await post('/app/api/login', { email: target, password: 'bad' })).statusCode, 401);
});

test('30 concurrent wrong passwords for one account: exactly 20 reach the password check, 10 answer 429', async () => {
  h.clock.set('2026-06-16T10:00:15.000Z');
  const target = await cheapAccount();
  const ip = '198.51.100.30';
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => loginFrom(ip, target, `wrong password ${i}`)),
  );
  // 401 = the password was checked and was wrong; 429 = refused before the check.
  assert.deepEqual(tally(answers), { 401: 20, 429: 10 });
  for (const res of answers.filter((r) => r.statusCode === 429)) {
    assert.deepEqual(res.json().error, {
      code: 'RATE_LIMITED',
      message:
        'Too many login attempts for this e-mail from your address (at most 20 a minute); retry in 45 seconds.',
    });
    assert.equal(res.json().success, false);
    assert.equal(res.headers['retry-after'], '45');
  }
  // The cap holds for the right password too until the minute is over; then it signs in.
  assert.equal((await loginFrom(ip, target, PASSWORD)).statusCode, 429);
  h.clock.advance(MINUTE);
  assert.equal((await loginFrom(ip, target, PASSWORD)).statusCode, 200);
});

test('one address trying many accounts: at most 100 attempts a minute reach the password check, across all e-mails', async () => {
  h.clock.set('2026-06-16T11:00:00.000Z');
  // 11 accounts × 10 attempts: no single account comes near its own cap of 20.
  const targets = await Promise.all(Array.from({ length: 11 }, () => cheapAccount()));
  const ip = '198.51.100.100';
  const answers = await Promise.all(
    targets.flatMap((t) => Array.from({ length: 10 }, (_, i) => loginFrom(ip, t, `guess ${i}`))),
  );
  assert.deepEqual(tally(answers), { 401: 100, 429: 10 });
  const limited = answers.find((r) => r.statusCode === 429)!;
  assert.deepEqual(limited.json().error, {
    code: 'RATE_LIMITED',
    message: 'Too many login attempts from your address (at most 100 a minute); retry in 60 seconds.',
  });
  assert.equal(limited.headers['retry-after'], '60');
  // A fresh e-mail from the same address is refused before its password is checked …
  const other = await cheapAccount();
  assert.equal((await loginFrom(ip, other, PASSWORD)).statusCode, 429);
  // … another address is not affected, and the address gets its budget back the next minute.
  assert.equal((await loginFrom('198.51.100.101', other, PASSWORD)).statusCode, 200);
  h.clock.advance(MINUTE);
  assert.equal((await loginFrom(ip, other, PASSWORD)).statusCode, 200);
});

test('after a few typos the right password signs in, and that resets the count for the e-mail', async () => {
  h.clock.set('2026-06-16T12:00:00.000Z');
  const target = await cheapAccount();
  const ip = '198.51.100.12';
  for (let i = 0; i < 19; i++) assert.equal((await loginFrom(ip, target, 'typo')).statusCode, 401);
  assert.equal((await loginFrom(ip, target, PASSWORD)).statusCode, 200);
  // The success reset the e-mail's count: 20 more wrong passwords are checked, the 21st is not.
  for (let i = 0; i < 20; i++) {
    assert.equal((await loginFrom(ip, target, 'typo')).statusCode, 401, `attempt ${i + 1} after the success`);
  }
  assert.equal((await loginFrom(ip, target, 'typo')).statusCode, 429);
});

test('successful logins do not use up the address budget', async () => {
  h.clock.set('2026-06-16T13:00:00.000Z');
  const target = await cheapAccount();
  const ip = '198.51.100.13';
  for (let i = 0; i < 105; i++) {
    assert.equal((await loginFrom(ip, target, PASSWORD)).statusCode, 200, `login ${i + 1}`);
  }
  assert.equal((await loginFrom(ip, target, 'typo')).statusCode, 401);
});

test('IPv6 clients are counted per /64: addresses of one network share both caps', async () => {
  h.clock.set('2026-06-16T14:00:00.000Z');
  const target = await cheapAccount();
  for (let i = 1; i <= 20; i++) {
    assert.equal((await loginFrom(`2001:db8:1:2::${i.toString(16)}`, target, 'typo')).statusCode, 401);
  }
  assert.equal((await loginFrom('2001:db8:1:2:ffff:ffff:ffff:ffff', target, 'typo')).statusCode, 429);
  assert.equal((await loginFrom('2001:db8:1:3::1', target, 'typo')).statusCode, 401);
});
