/**
 * The signing scheme for Node, shared by receivers' own tests: HMAC-SHA256 over
 * `<unix seconds>.<exact raw body bytes>`, keyed by the secret, hex encoded. `signPayloadAsync` (every
 * runtime) is in verifier.ts.
 */
import { NodeCryptoProvider } from '../crypto/node.ts';
import { type RawBody, signedPayload, toHex } from './bytes.ts';
import { checkTimestamp } from './verifier.ts';

const nodeCrypto = new NodeCryptoProvider();

/** The raw HMAC-SHA256 digest (32 bytes) of `${timestampSeconds}.${rawBody}`. */
export function computeSignature(rawBody: RawBody, secret: string, timestampSeconds: number): Uint8Array {
  return nodeCrypto.computeHmacSha256(secret, signedPayload(rawBody, timestampSeconds));
}

/**
 * Returns the `service-signature` header value `t=<seconds>,v1=<64 lowercase hex>` for a body, e.g. to
 * post signed fixtures at your own receiver in tests.
 */
export function signPayload(rawBody: RawBody, secret: string, timestampSeconds: number): string {
  checkTimestamp(timestampSeconds);
  return `t=${timestampSeconds},v1=${toHex(computeSignature(rawBody, secret, timestampSeconds))}`;
}
