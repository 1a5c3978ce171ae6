import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  blockedAddressKind,
  isBlockedAddress,
  normaliseHost,
  parseIPv6,
  validateReceiverUrl,
} from '../../src/webhooks/delivery/ssrf.ts';

// [address, blocked, why]
const addresses: [string, boolean, string][] = [
  ['93.184.216.34', false, 'public IPv4'],
  ['8.8.8.8', false, 'public IPv4'],
  ['1.1.1.1', false, 'public IPv4'],
  ['127.0.0.1', true, 'loopback'],
  ['127.255.255.254', true, 'loopback /8'],
  ['10.0.0.1', true, 'private 10/8'],
  ['172.16.0.1', true, 'private 172.16/12'],
  ['172.31.255.255', true, 'private 172.16/12 end'],
  ['172.32.0.1', false, 'just outside 172.16/12'],
  ['192.168.1.1', true, 'private 192.168/16'],
  ['169.254.169.254', true, 'cloud metadata (link-local)'],
  ['169.254.0.1', true, 'link-local'],
  ['100.64.0.1', true, 'CGNAT 100.64/10'],
  ['100.127.255.255', true, 'CGNAT end'],
  ['100.128.0.1', false, 'just outside CGNAT'],
  ['0.0.0.0', true, '"this network"'],
  ['0.1.2.3', true, '0/8'],
  ['224.0.0.1', true, 'multicast'],
  ['239.255.255.250', true, 'multicast'],
  ['255.255.255.255', true, 'broadcast'],
  ['240.0.0.1', true, 'reserved 240/4'],
  ['192.0.2.10', true, 'documentation TEST-NET-1'],
  ['198.51.100.7', true, 'documentation TEST-NET-2'],
  ['203.0.113.9', true, 'documentation TEST-NET-3'],
  ['198.18.0.1', true, 'benchmarking'],
  ['192.0.0.8', true, 'IETF protocol assignments'],
  ['::1', true, 'IPv6 loopback'],
  ['::', true, 'IPv6 unspecified'],
  ['fc00::1', true, 'unique local'],
  ['fd12:3456:789a::1', true, 'unique local fd'],
  ['fe80::1', true, 'link-local'],
  ['fe80::1%eth0', true, 'link-local with zone'],
  ['ff02::1', true, 'multicast'],
  ['fec0::1', true, 'site-local (deprecated)'],
  ['::ffff:127.0.0.1', true, 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', true, 'IPv4-mapped loopback, hex form'],
  ['::ffff:10.1.2.3', true, 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', true, 'IPv4-mapped metadata'],
  ['::ffff:8.8.8.8', false, 'IPv4-mapped public'],
  ['::ffff:0:127.0.0.1', true, 'IPv4-translated loopback'],
  ['::127.0.0.1', true, 'IPv4-compatible (deprecated)'],
  ['64:ff9b::7f00:1', true, 'NAT64 of 127.0.0.1'],
  ['64:ff9b::a9fe:a9fe', true, 'NAT64 of 169.254.169.254'],
  ['64:ff9b::808:808', false, 'NAT64 of 8.8.8.8'],
  ['64:ff9b:1::1', true, 'local-use NAT64'],
  ['2002:7f00:1::1', true, '6to4 of 127.0.0.1'],
  ['2002:c0a8:101::1', true, '6to4 of 192.168.1.1'],
  ['2002:808:808::1', false, '6to4 of 8.8.8.8'],
  ['2001:db8::1', true, 'documentation'],
  ['3fff::1', true, 'documentation (RFC 9637)'],
  ['2001::1', true, 'Teredo'],
  ['2001:2::1', true, 'benchmarking'],
  ['100::1', true, 'discard'],
  ['2606:4700:4700::1111', false, 'public IPv6'],
  ['2a00:1450:4001:80b::200e', false, 'public IPv6'],
  ['not-an-ip', true, 'unparsable (fail closed)'],
  ['', true, 'empty (fail closed)'],
  ['1.2.3', true, 'incomplete (fail closed)'],
];
for (const [ip, blocked, why] of addresses) {
  test(`${ip || '(empty)'} is ${blocked ? 'blocked' : 'allowed'}: ${why}`, () => {
    assert.equal(isBlockedAddress(ip), blocked);
  });
}

test('parseIPv6 expands :: and embedded IPv4 tails', () => {
  assert.deepEqual(parseIPv6('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]);
  assert.deepEqual(parseIPv6('[2001:db8::1]')?.slice(0, 4), [0x20, 0x01, 0x0d, 0xb8]);
});

const strict = { allowPrivateTargets: false };
const loose = { allowPrivateTargets: true };
// [url, options, ok or failure reason]
const urls: [string, typeof strict, true | 'invalid_url' | 'blocked_address'][] = [
  ['https://crm.example.com/hooks', strict, true],
  ['https://93.184.216.34/hooks', strict, true],
  ['http://crm.example.com/hooks', strict, 'invalid_url'],
  ['http://crm.example.com/hooks', loose, true],
  ['ftp://crm.example.com/hooks', loose, 'invalid_url'],
  ['https://user:pass@crm.example.com/hooks', strict, 'invalid_url'],
  ['https://user@crm.example.com/hooks', loose, 'invalid_url'],
  ['crm.example.com/hooks', strict, 'invalid_url'],
  ['', strict, 'invalid_url'],
  [`https://crm.example.com/${'a'.repeat(2100)}`, strict, 'invalid_url'],
  ['https://127.0.0.1/hooks', strict, 'blocked_address'],
  ['https://2130706433/hooks', strict, 'blocked_address'],
  ['https://0x7f.1/hooks', strict, 'blocked_address'],
  ['https://[::1]/hooks', strict, 'blocked_address'],
  ['https://[::ffff:169.254.169.254]/latest', strict, 'blocked_address'],
  ['https://169.254.169.254/latest/meta-data', strict, 'blocked_address'],
  ['https://10.0.0.5:8443/hooks', strict, 'blocked_address'],
  ['https://localhost/hooks', strict, 'blocked_address'],
  ['https://api.localhost/hooks', strict, 'blocked_address'],
  ['https://localhost./hooks', strict, 'blocked_address'],
  ['https://LOCALHOST./hooks', strict, 'blocked_address'],
  ['https://Api.LocalHost./hooks', strict, 'blocked_address'],
  ['https://127.0.0.1./hooks', strict, 'blocked_address'],
  ['https://crm.example.com./hooks', strict, true],
  ['http://localhost.:3000/hooks', loose, true],
  ['http://127.0.0.1:3000/hooks', loose, true],
  ['http://localhost:3000/hooks', loose, true],
];
for (const [url, opts, expected] of urls) {
  test(`receiver url ${url.slice(0, 60) || '(empty)'} with private targets ${opts.allowPrivateTargets ? 'allowed' : 'refused'} is ${expected === true ? 'accepted' : expected}`, () => {
    const r = validateReceiverUrl(url, opts);
    if (expected === true) assert.equal(r.ok, true);
    else {
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.reason, expected);
      assert.ok(!r.ok && r.message.length > 10);
    }
  });
}

test('blockedAddressKind names what the refusal messages say, null for public addresses', () => {
  const kinds: [string, string | null][] = [
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['fd00::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['::', 'reserved'],
    ['not-an-ip', 'reserved'],
    ['93.184.216.34', null],
    ['2606:4700::1111', null],
  ];
  for (const [ip, kind] of kinds) assert.equal(blockedAddressKind(ip), kind, ip);
});

test('normaliseHost drops brackets and one trailing dot, and lowercases', () => {
  assert.equal(normaliseHost('LOCALHOST.'), 'localhost');
  assert.equal(normaliseHost('[::1]'), '::1');
  assert.equal(normaliseHost('Hooks.Example.com'), 'hooks.example.com');
  assert.equal(normaliseHost('localhost..'), 'localhost.');
});
