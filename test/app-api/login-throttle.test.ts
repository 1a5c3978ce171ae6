import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientNetwork } from '../../src/accounts/login-throttle.ts';

test('clientNetwork: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 as its /64', () => {
  assert.equal(clientNetwork('203.0.113.9'), '203.0.113.9');
  assert.equal(clientNetwork('::ffff:203.0.113.9'), '203.0.113.9');
  assert.equal(clientNetwork('2001:db8:1:2::5'), '2001:db8:1:2::/64');
  assert.equal(clientNetwork('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(clientNetwork('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(clientNetwork('::1'), '0:0:0:0::/64');
  assert.equal(clientNetwork('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(clientNetwork('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
});
