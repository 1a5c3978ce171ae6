/**
 * verifyWebhook: the synchronous verifier for Node (`node:crypto` through `NodeCryptoProvider`). On
 * runtimes with only Web Crypto use `verifyWebhookAsync` or `WebhookVerifier` from `@callcap/sdk/web`.
 */
import { NodeCryptoProvider } from '../crypto/node.ts';
import type { RawBody } from './bytes.ts';
import type { VerifiedWebhookEvent } from './events.ts';
import type { HeadersInput } from './headers.ts';
import { type VerifyWebhookOptions, WebhookVerifier } from './verifier.ts';

const nodeCrypto = new NodeCryptoProvider();

/**
 * Verifies a delivery and returns the parsed event. Throws a `WebhookVerificationError` subclass when the
 * request must be rejected (answer 400), or `WebhookConfigurationError` when no secret is configured.
 *
 * @param rawBody the body exactly as received (string or bytes), never a re-serialised parsed object
 * @param headers request headers (fetch Headers, a plain record or Node's IncomingHttpHeaders)
 * @param secrets one secret, or several during a rotation (any match is accepted)
 */
export function verifyWebhook(
  rawBody: RawBody,
  headers: HeadersInput,
  secrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): VerifiedWebhookEvent {
  const { crypto, ...rest } = options;
  return new WebhookVerifier({ ...rest, secrets, crypto: crypto ?? nodeCrypto }).verify(rawBody, headers);
}
