/**
 * The signing scheme, shared by the verifier and by receivers' own tests:
 * HMAC-SHA256 over `<unix seconds>.<exact raw body bytes>`, keyed by the secret, hex encoded.
 */
import { createHmac } from 'node:crypto';

/** The body exactly as sent or received: a string is taken as UTF-8. */
export type RawBody = string | Uint8Array;

export function toBytes(rawBody: RawBody): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
}

/** The raw HMAC-SHA256 digest (32 bytes) of `${timestampSeconds}.${rawBody}`. */
export function computeSignature(rawBody: RawBody, secret: string, timestampSeconds: number): Buffer {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(toBytes(rawBody)).digest();
}

/**
 * Returns the `service-signature` header value `t=<seconds>,v1=<64 lowercase hex>` for a body, e.g. to
 * post signed fixtures at your own receiver in tests.
 */
export function signPayload(rawBody: RawBody, secret: string, timestampSeconds: number): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError(
      `timestampSeconds must be whole Unix seconds, got ${timestampSeconds}; use Math.floor(Date.now() / 1000).`,
    );
  }
  const digest = computeSignature(rawBody, secret, timestampSeconds).toString('hex');
  return `t=${timestampSeconds},v1=${digest}`;
}
