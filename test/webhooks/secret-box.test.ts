import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decryptSecret, encryptSecret } from '../../src/webhooks/delivery/secret-box.ts';

const key = Buffer.alloc(32, 3);

test('a secret encrypted with the key decrypts to the same string', () => {
  const box = encryptSecret(key, 'whsec_abc+/=');
  assert.equal(decryptSecret(key, box), 'whsec_abc+/=');
});

test('the stored form is v1.<iv>.<tag>.<ciphertext> in base64url with a 12-byte iv and 16-byte tag', () => {
  const box = encryptSecret(key, 'whsec_x');
  const parts = box.split('.');
  assert.equal(parts.length, 4);
  assert.equal(parts[0], 'v1');
  for (const p of parts.slice(1)) assert.match(p, /^[A-Za-z0-9_-]+$/);
  assert.equal(Buffer.from(parts[1] as string, 'base64url').length, 12);
  assert.equal(Buffer.from(parts[2] as string, 'base64url').length, 16);
  assert.ok(!box.includes('whsec_x'));
});

test('two encryptions of the same secret differ (random iv)', () => {
  assert.notEqual(encryptSecret(key, 's'), encryptSecret(key, 's'));
});

test('decrypting under another key throws', () => {
  const box = encryptSecret(key, 'whsec_x');
  assert.throws(() => decryptSecret(Buffer.alloc(32, 4), box), /failed authentication/);
});

test('a tampered ciphertext throws', () => {
  const [v, iv, tag, ct] = encryptSecret(key, 'whsec_secret').split('.') as [string, string, string, string];
  const bytes = Buffer.from(ct, 'base64url');
  bytes[0] = (bytes[0] as number) ^ 1;
  assert.throws(
    () => decryptSecret(key, [v, iv, tag, bytes.toString('base64url')].join('.')),
    /failed authentication/,
  );
});

test('a malformed value throws a format error', () => {
  assert.throws(() => decryptSecret(key, 'plain'), /format/);
  assert.throws(() => decryptSecret(key, 'v2.a.b.c'), /format/);
});
