import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { NodeCryptoProvider } from '../src/crypto/node.ts';
import { CryptoProviderOnlySupportsAsyncError } from '../src/crypto/provider.ts';
import { SubtleCryptoProvider } from '../src/crypto/subtle.ts';
import { MemoryEventIdStore } from '../src/webhooks/dedupe.ts';
import { WebhookSignatureMismatchError } from '../src/webhooks/errors.ts';
import { handleWebhook } from '../src/webhooks/handle.ts';
import { signPayloadAsync, verifyWebhookAsync, WebhookVerifier } from '../src/webhooks/verifier.ts';
import { atT, callCompletedBody, deliveryHeaders, EVENT_ID, SECRET, T } from './fixtures.ts';

const body = callCompletedBody();
const headers = deliveryHeaders(body);
const payload = new TextEncoder().encode(`${T}.${body}`);
const expected = createHmac('sha256', SECRET).update(payload).digest();

test('both providers compute the HMAC-SHA256 node:crypto computes', async () => {
  const node = new NodeCryptoProvider();
  const subtle = new SubtleCryptoProvider();
  assert.deepEqual(Buffer.from(node.computeHmacSha256(SECRET, payload)), expected);
  assert.deepEqual(Buffer.from(await node.computeHmacSha256Async(SECRET, payload)), expected);
  assert.deepEqual(Buffer.from(await subtle.computeHmacSha256Async(SECRET, payload)), expected);
  // The imported key is cached per secret; a second call gives the same digest.
  assert.deepEqual(Buffer.from(await subtle.computeHmacSha256Async(SECRET, payload)), expected);
});

test('the Web Crypto provider is async only: verify() says to use verifyAsync', async () => {
  const verifier = new WebhookVerifier({ secrets: SECRET, crypto: new SubtleCryptoProvider(), now: atT() });
  assert.throws(() => verifier.verify(body, headers), CryptoProviderOnlySupportsAsyncError);
  assert.throws(() => verifier.verify(body, headers), /verifyAsync/);
  assert.equal((await verifier.verifyAsync(body, headers)).event_id, EVENT_ID);
});

test('a verifier chosen with either provider accepts the genuine delivery and rejects a tampered one', async () => {
  for (const crypto of [new NodeCryptoProvider(), new SubtleCryptoProvider()]) {
    const verifier = new WebhookVerifier({ secrets: ['', 'old', SECRET], crypto, now: atT() });
    assert.equal((await verifier.verifyAsync(new TextEncoder().encode(body), headers)).event_id, EVENT_ID);
    await assert.rejects(
      verifier.verifyAsync(body.replace('"duration":73', '"duration":74'), headers),
      WebhookSignatureMismatchError,
    );
  }
  const sync = new WebhookVerifier({ secrets: SECRET, crypto: new NodeCryptoProvider(), now: atT() });
  assert.equal(sync.verify(body, headers).event_id, EVENT_ID);
  assert.equal(sync.sign(body, T), headers['service-signature']);
  assert.equal(await sync.signAsync(body, T), headers['service-signature']);
});

test('verifyWebhookAsync, signPayloadAsync and handleWebhook default to Web Crypto', async () => {
  assert.equal(await signPayloadAsync(body, SECRET, T), headers['service-signature']);
  assert.equal((await verifyWebhookAsync(body, headers, SECRET, { now: atT() })).event_id, EVENT_ID);
  const result = await handleWebhook({
    rawBody: body,
    headers,
    secrets: SECRET,
    store: new MemoryEventIdStore(),
    onEvent: () => {},
    verifyOptions: { now: atT() },
  });
  assert.equal(result.outcome, 'processed');
});

test('a verifier without a provider, or without a usable Web Crypto, is refused with a hint', () => {
  assert.throws(
    () => new WebhookVerifier({ secrets: SECRET, crypto: undefined as never }),
    /NodeCryptoProvider|SubtleCryptoProvider/,
  );
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true });
  try {
    assert.throws(() => new SubtleCryptoProvider(), /Web Crypto/);
  } finally {
    if (saved) Object.defineProperty(globalThis, 'crypto', saved);
  }
});
