/**
 * Byte helpers on plain `Uint8Array`, so the webhook code runs wherever there is `TextEncoder` (Node,
 * Deno, Bun, Cloudflare Workers, browsers) without Node's `Buffer`.
 */

/** The body exactly as sent or received: a string is taken as UTF-8. */
export type RawBody = string | Uint8Array;

const encoder = new TextEncoder();

/** The bytes of a raw body (a string is encoded as UTF-8; bytes are used as they are, not copied). */
export function toBytes(rawBody: RawBody): Uint8Array {
  return typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
}

/** UTF-8 decoding; `fatal` throws on invalid sequences instead of inserting U+FFFD. */
export function bytesToText(bytes: Uint8Array, fatal = false): string {
  return new TextDecoder('utf-8', { fatal }).decode(bytes);
}

/** `a` followed by `b`, as one new array. */
export function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

/** The bytes HMAC-signed for a delivery: `<unix seconds>.<exact raw body>`. */
export function signedPayload(rawBody: RawBody, timestampSeconds: number): Uint8Array {
  return concatBytes(encoder.encode(`${timestampSeconds}.`), toBytes(rawBody));
}

const HEX = '0123456789abcdef';

/** Lowercase hex. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += HEX[byte >> 4] + HEX[byte & 15];
  return out;
}

/** Bytes of an even-length lowercase hex string (callers validate the format first). */
export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * Equality whose running time depends only on the lengths, never on where the arrays differ (the
 * digests compared here always have the same length, 32 bytes).
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}
