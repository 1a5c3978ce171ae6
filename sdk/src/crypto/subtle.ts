/**
 * The Web Crypto provider: HMAC-SHA256 through `crypto.subtle`, asynchronous only. Imports nothing, so
 * it runs on any runtime with Web Crypto (Cloudflare Workers, Deno, Bun, browsers, Node 20+).
 */
import { type CryptoProvider, CryptoProviderOnlySupportsAsyncError } from './provider.ts';

/** The part of `SubtleCrypto` used here (structural, so no DOM or Node type library is needed). */
export interface SubtleCryptoLike {
  importKey(
    format: 'raw',
    keyData: Uint8Array,
    algorithm: { name: 'HMAC'; hash: 'SHA-256' },
    extractable: false,
    keyUsages: ['sign'],
  ): Promise<unknown>;
  sign(algorithm: 'HMAC', key: never, data: Uint8Array): Promise<ArrayBuffer>;
}

/** Imported keys kept per secret (a receiver has one or two secrets; more means a misuse). */
const MAX_CACHED_KEYS = 16;

export class SubtleCryptoProvider implements CryptoProvider {
  readonly #subtle: SubtleCryptoLike;
  readonly #keys = new Map<string, Promise<unknown>>();

  /** @param subtle default: `globalThis.crypto.subtle` */
  constructor(subtle?: SubtleCryptoLike) {
    const found = subtle ?? (globalThis as { crypto?: { subtle?: SubtleCryptoLike } }).crypto?.subtle;
    if (found === undefined) {
      throw new TypeError(
        'SubtleCryptoProvider needs Web Crypto (globalThis.crypto.subtle), which this runtime lacks. Pass a ' +
          'SubtleCrypto implementation, or use NodeCryptoProvider on Node.',
      );
    }
    this.#subtle = found;
  }

  computeHmacSha256(_secret: string, _payload: Uint8Array): Uint8Array {
    throw new CryptoProviderOnlySupportsAsyncError('SubtleCryptoProvider');
  }

  async computeHmacSha256Async(secret: string, payload: Uint8Array): Promise<Uint8Array> {
    const key = await this.#key(secret);
    return new Uint8Array(await this.#subtle.sign('HMAC', key as never, payload));
  }

  #key(secret: string): Promise<unknown> {
    let key = this.#keys.get(secret);
    if (key === undefined) {
      key = this.#subtle.importKey(
        'raw',
        new TextEncoder().encode(secret),
        { name: 'HMAC', hash: 'SHA-256' },
        false,
        ['sign'],
      );
      // A failed import is not cached: the next call tries again.
      key.catch(() => this.#keys.delete(secret));
      if (this.#keys.size >= MAX_CACHED_KEYS) this.#keys.clear();
      this.#keys.set(secret, key);
    }
    return key;
  }
}
