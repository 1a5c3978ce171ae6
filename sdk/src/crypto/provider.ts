/**
 * Crypto providers, chosen at construction as stripe-node does: the webhook code only needs
 * HMAC-SHA256, and gets it from a provider instead of importing `node:crypto` itself.
 *
 * - `NodeCryptoProvider` (`@callcap/sdk`, `@callcap/sdk/node-crypto`): `node:crypto`, synchronous and
 *   asynchronous; `verifyWebhook` / `WebhookVerifier#verify` need it.
 * - `SubtleCryptoProvider` (every entry point, also `@callcap/sdk/web`): Web Crypto (`crypto.subtle`),
 *   asynchronous only; for Cloudflare Workers, Deno, Bun, browsers, and Node itself.
 *
 * Your own provider (a KMS, a hardware module) implements the same two methods.
 */

export interface CryptoProvider {
  /** HMAC-SHA256 of `payload` keyed by the UTF-8 bytes of `secret` (32 bytes). May throw {@link CryptoProviderOnlySupportsAsyncError}. */
  computeHmacSha256(secret: string, payload: Uint8Array): Uint8Array;
  /** The same digest, asynchronously. Every provider supports it. */
  computeHmacSha256Async(secret: string, payload: Uint8Array): Promise<Uint8Array>;
}

/** A synchronous operation was asked of a provider that only works asynchronously (Web Crypto). */
export class CryptoProviderOnlySupportsAsyncError extends Error {
  constructor(provider: string) {
    super(
      `${provider} computes HMACs asynchronously only (Web Crypto has no synchronous API). Use the async ` +
        'variant (verifyAsync, verifyWebhookAsync, signAsync, handleWebhook), or construct with ' +
        'NodeCryptoProvider from "@callcap/sdk" on Node.',
    );
    this.name = 'CryptoProviderOnlySupportsAsyncError';
  }
}
