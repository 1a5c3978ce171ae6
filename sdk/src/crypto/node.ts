/**
 * The Node.js crypto provider: HMAC-SHA256 from `node:crypto`, synchronous and asynchronous. The only
 * module of the package that imports a `node:` built-in; `@callcap/sdk/web` never loads it.
 */
import { createHmac } from 'node:crypto';
import type { CryptoProvider } from './provider.ts';

export class NodeCryptoProvider implements CryptoProvider {
  computeHmacSha256(secret: string, payload: Uint8Array): Uint8Array {
    const digest = createHmac('sha256', secret).update(payload).digest();
    return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
  }

  async computeHmacSha256Async(secret: string, payload: Uint8Array): Promise<Uint8Array> {
    return this.computeHmacSha256(secret, payload);
  }
}
