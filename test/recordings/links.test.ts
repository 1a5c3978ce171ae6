import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MINUTE, SECOND } from '../../src/clock.ts';
import { newId } from '../../src/ids.ts';
import {
  checkRecordingLink,
  EVENT_LINK_TTL_MS,
  mintRecordingLink,
  REST_LINK_TTL_MS,
} from '../../src/recordings/links.ts';
import { insertApiKey, insertCallWithAudio, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer, errorOf, pathOf } from '../helpers/http.ts';
import { mp3Frames } from '../helpers/mp3.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';

const T = '2026-06-15T10:00:00.000Z';
const INVALID = 'This recording link is invalid; request a fresh one from GET /calls/{id}/recording-url.';
let h: Harness;
let callId: string;
let otherCallId: string;
let key: string;
const audio = mp3Frames(40);

before(async () => {
  h = await createHarness();
  const { orgId, ownerId } = await insertOrg(h.db);
  ({ key } = await insertApiKey(h.db, { orgId, userId: ownerId, scopes: ['read.recordings'] }));
  ({ callId } = await insertCallWithAudio(h.deps, orgId, audio));
  ({ callId: otherCallId } = await insertCallWithAudio(h.deps, orgId, audio));
});
after(() => h.close());

async function fetchLink(url: string, headers: Record<string, string> = {}) {
  const res = await h.app.inject({ method: 'GET', url: pathOf(url), headers });
  assertMatchesOpenApi('GET', '/calls/{id}/recording.mp3', res);
  return res;
}

const parts = (url: string) => {
  const u = new URL(url);
  return {
    path: u.pathname,
    token: u.searchParams.get('token') as string,
    exp: u.searchParams.get('exp') as string,
  };
};

test('link constants are 15 minutes for REST and seven days for events', () => {
  assert.equal(REST_LINK_TTL_MS, 15 * 60 * 1000);
  assert.equal(EVENT_LINK_TTL_MS, 7 * 24 * 60 * 60 * 1000);
});

test('a minted link has the shape {base_url}/calls/<call_id>/recording.mp3?token=…&exp=…', () => {
  h.clock.set(T);
  const link = mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS);
  const exp = Date.parse('2026-06-15T10:15:00.000Z') / 1000;
  assert.match(
    link.url,
    new RegExp(
      `^https://calls\\.example\\.test/api/v1/calls/${callId}/recording\\.mp3\\?token=[A-Za-z0-9_-]{43}&exp=${exp}$`,
    ),
  );
  assert.equal(link.expires_at, '2026-06-15T10:15:00.000Z');
});

test('a REST link still works at 14:59 and answers 401 naming the expiry at 15:01', async () => {
  h.clock.set(T);
  const link = mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS);
  h.clock.set(new Date(Date.parse(T) + 14 * MINUTE + 59 * SECOND));
  const ok = await fetchLink(link.url);
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.rawPayload, audio);

  h.clock.set(new Date(Date.parse(T) + 15 * MINUTE + 1 * SECOND));
  const late = await fetchLink(link.url);
  assert.equal(late.statusCode, 401);
  assert.deepEqual(errorOf(late), {
    code: 'UNAUTHORIZED',
    message:
      'This recording link expired at 2026-06-15T10:15:00.000Z; request a fresh one from GET /calls/{id}/recording-url.',
  });
  assert.equal(late.headers['cache-control'], 'private, no-store');
});

test('a link stops working at exactly its expires_at', async () => {
  h.clock.set(T);
  const link = mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS);
  h.clock.set(link.expires_at);
  assert.equal((await fetchLink(link.url)).statusCode, 401);
});

test('a link minted by GET /calls/{id}/recording-url works at 14:59 and not at 15:01', async () => {
  h.clock.set(T);
  const res = await h.app.inject({
    method: 'GET',
    url: `/api/v1/calls/${callId}/recording-url`,
    headers: bearer(key),
  });
  assert.equal(res.statusCode, 200);
  const { url, expires_at } = JSON.parse(res.body).data;
  assert.equal(expires_at, '2026-06-15T10:15:00.000Z');
  h.clock.set('2026-06-15T10:14:59.000Z');
  assert.equal((await fetchLink(url)).statusCode, 200);
  h.clock.set('2026-06-15T10:15:01.000Z');
  assert.equal((await fetchLink(url)).statusCode, 401);
});

const tampered: [string, (p: ReturnType<typeof parts>) => string][] = [
  [
    'one character of the token changed',
    (p) => {
      const c = p.token[5] === 'A' ? 'B' : 'A';
      return `${p.path}?token=${p.token.slice(0, 5)}${c}${p.token.slice(6)}&exp=${p.exp}`;
    },
  ],
  [
    'the last token character swapped for one decoding to the same bytes',
    (p) => {
      // 43 base64url characters carry 258 bits for 256: the last two bits are padding.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = alphabet.indexOf(p.token[42]);
      return `${p.path}?token=${p.token.slice(0, 42)}${alphabet[last ^ 1]}&exp=${p.exp}`;
    },
  ],
  ['another call’s token', (p) => `/api/v1/calls/${otherCallId}/recording.mp3?token=${p.token}&exp=${p.exp}`],
  ['a different exp', (p) => `${p.path}?token=${p.token}&exp=${Number(p.exp) + 3600}`],
  ['exp with a leading zero', (p) => `${p.path}?token=${p.token}&exp=0${p.exp}`],
  ['no token', (p) => `${p.path}?exp=${p.exp}`],
  ['no exp', (p) => `${p.path}?token=${p.token}`],
  ['no query at all', (p) => p.path],
  ['a truncated token', (p) => `${p.path}?token=${p.token.slice(0, 42)}&exp=${p.exp}`],
  ['an over-long token', (p) => `${p.path}?token=${p.token}A&exp=${p.exp}`],
  ['a token given twice', (p) => `${p.path}?token=${p.token}&token=${p.token}&exp=${p.exp}`],
  ['a non-numeric exp', (p) => `${p.path}?token=${p.token}&exp=soon`],
];

for (const [name, build] of tampered) {
  test(`a link with ${name} answers 401 UNAUTHORIZED`, async () => {
    h.clock.set(T);
    const p = parts(mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS).url);
    const res = await h.app.inject({ method: 'GET', url: build(p) });
    assertMatchesOpenApi('GET', '/calls/{id}/recording.mp3', res);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(errorOf(res), { code: 'UNAUTHORIZED', message: INVALID });
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  });
}

test('the download never accepts an API key instead of a token', async () => {
  const res = await h.app.inject({
    method: 'GET',
    url: `/api/v1/calls/${callId}/recording.mp3`,
    headers: bearer(key),
  });
  assert.equal(res.statusCode, 401);
  assert.equal(errorOf(res).code, 'UNAUTHORIZED');
});

test('a link for an unknown call id is just an invalid link', async () => {
  const res = await fetchLink(
    mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS).url.replace(callId, newId()),
  );
  assert.equal(res.statusCode, 401);
});

test('checkRecordingLink rejects wrong lengths and types without throwing', () => {
  h.clock.set(T);
  const { token, exp } = parts(mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS).url);
  assert.deepEqual(checkRecordingLink(h.deps, callId, token, exp), { ok: true });
  for (const t of ['', 'x', token.repeat(2), token.slice(1), undefined, ['a'], 42]) {
    assert.deepEqual(checkRecordingLink(h.deps, callId, t, exp), { ok: false, reason: 'invalid' });
  }
  assert.deepEqual(checkRecordingLink(h.deps, callId, token, undefined), { ok: false, reason: 'invalid' });
});

test('a seven-day event link works until just before its expiry', async () => {
  h.clock.set(T);
  const link = mintRecordingLink(h.deps, callId, EVENT_LINK_TTL_MS);
  assert.equal(link.expires_at, '2026-06-22T10:00:00.000Z');
  h.clock.set('2026-06-22T09:59:59.000Z');
  assert.equal((await fetchLink(link.url)).statusCode, 200);
  h.clock.set('2026-06-22T10:00:00.000Z');
  assert.equal((await fetchLink(link.url)).statusCode, 401);
});
