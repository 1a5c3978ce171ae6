/**
 * Creation-time SSRF refusals of the console (private targets NOT allowed, as in production): host
 * names are normalised (one trailing dot, case) before the name and literal-address checks, and names
 * are resolved (an injected lookup: no DNS query leaves the machine) and refused when any address is
 * not public. Nothing here sends a request off the machine: every handshake that gets past the
 * creation check is refused by the connect-time guard.
 */
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { after, before, test } from 'node:test';
import { resolvesToBlocked } from '../../src/webhooks/delivery/http-client.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let c: ConsoleClient;

before(async () => {
  h = await createHarness({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' });
  const { email } = await orgWithLogin(h.db, await passwordHash());
  c = await login(h, email);
});
after(async () => {
  await h?.close();
});

const ADVICE =
  'receivers must be reachable on the public internet (an operator can allow private targets with WEBHOOK_ALLOW_PRIVATE_TARGETS=1 for development).';

/** A lookup answering from a table (names as asked), recording every name it is asked for. */
function fakeLookup(table: Record<string, string[]>, asked: string[] = []): LookupFunction {
  return (hostname, _options, callback) => {
    asked.push(hostname);
    const list = table[hostname];
    const cb = callback as (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;
    if (!list)
      return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    cb(
      null,
      list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
}

async function withLookup<T>(lookup: LookupFunction, fn: () => Promise<T>): Promise<T> {
  h.deps.dnsLookup = lookup;
  try {
    return await fn();
  } finally {
    h.deps.dnsLookup = undefined;
  }
}

const create = (url: string) => c.post('/app/api/webhook-subscriptions', { url });

async function assertRefused(url: string, message: string) {
  const before = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_subscriptions');
  const res = await create(url);
  assert.equal(res.status, 400, url);
  assert.equal(res.json.error.code, 'BAD_REQUEST', url);
  assert.equal(res.json.error.message, `Field "url" is not acceptable: ${message}`, url);
  const after = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_subscriptions');
  assert.deepEqual(after.rows[0], before.rows[0]);
}

const nobodyAsked = (asked: string[]) => fakeLookup({}, asked);

test('localhost with a trailing dot, in any case, is refused by name without any lookup', async () => {
  const asked: string[] = [];
  await withLookup(nobodyAsked(asked), async () => {
    for (const url of [
      'https://localhost./hooks',
      'https://LOCALHOST./hooks',
      'https://Api.LocalHost./hooks',
    ]) {
      const host = new URL(url).hostname.replace(/\.$/, '');
      await assertRefused(url, `${host} is a loopback host name; ${ADVICE}`);
    }
  });
  assert.deepEqual(asked, []);
});

test('literal loopback addresses, with a trailing dot or as IPv6, are refused naming the address', async () => {
  await assertRefused('https://127.0.0.1./hooks', `url points at 127.0.0.1, a loopback address; ${ADVICE}`);
  await assertRefused('https://[::1]/hooks', `url points at ::1, a loopback address; ${ADVICE}`);
  await assertRefused('https://10.0.0.5./hooks', `url points at 10.0.0.5, a private address; ${ADVICE}`);
});

test('a name that resolves to loopback (among public addresses) is refused; the name is asked without its trailing dot, lowercased', async () => {
  const asked: string[] = [];
  const lookup = fakeLookup({ 'hooks.customer.example': ['93.184.216.34', '127.0.0.1'] }, asked);
  await withLookup(lookup, () =>
    assertRefused(
      'https://HOOKS.Customer.example./hooks',
      `hooks.customer.example resolves to a loopback address; ${ADVICE}`,
    ),
  );
  assert.deepEqual(asked, ['hooks.customer.example']);
});

test('names resolving to IPv6 loopback, cloud metadata or a private network are refused', async () => {
  const lookup = fakeLookup({
    'v6.customer.example': ['::1'],
    'meta.customer.example': ['169.254.169.254'],
    'lan.customer.example': ['192.168.1.20'],
  });
  await withLookup(lookup, async () => {
    await assertRefused(
      'https://v6.customer.example/h',
      `v6.customer.example resolves to a loopback address; ${ADVICE}`,
    );
    await assertRefused(
      'https://meta.customer.example/h',
      `meta.customer.example resolves to a link-local address; ${ADVICE}`,
    );
    await assertRefused(
      'https://lan.customer.example/h',
      `lan.customer.example resolves to a private address; ${ADVICE}`,
    );
  });
});

test('a name that does not resolve is accepted, inactive: the handshake fails with error class dns', async () => {
  await withLookup(fakeLookup({}), async () => {
    const res = await create('https://nowhere.customer.example/hooks');
    assert.equal(res.status, 201);
    assert.equal(res.json.state, 'inactive');
    assert.equal(res.json.verification.error_class, 'dns');
  });
});

test('a name that re-points at loopback after the creation check is still refused at connect time', async () => {
  let calls = 0;
  const lookup: LookupFunction = (_h, _o, cb) => {
    calls += 1;
    const address = calls === 1 ? '93.184.216.34' : '127.0.0.1';
    (cb as (e: null, a: LookupAddress[]) => void)(null, [{ address, family: 4 }]);
  };
  await withLookup(lookup, async () => {
    const res = await create('https://rebind.customer.example/hooks');
    assert.equal(res.status, 201);
    assert.equal(res.json.state, 'inactive');
    assert.equal(res.json.verification.error_class, 'blocked_address');
  });
  assert.equal(calls, 2);
});

test('resolvesToBlocked gives up after its time limit (null: the connect-time guard decides)', async () => {
  const never: LookupFunction = () => {};
  const started = Date.now();
  assert.equal(await resolvesToBlocked('slow.customer.example', never, 50), null);
  assert.ok(Date.now() - started < 1000);
  assert.equal(
    await resolvesToBlocked('x.example', fakeLookup({ 'x.example': ['10.1.2.3'] }), 50),
    '10.1.2.3',
  );
  assert.equal(
    await resolvesToBlocked('x.example', fakeLookup({ 'x.example': ['93.184.216.34'] }), 50),
    null,
  );
});
