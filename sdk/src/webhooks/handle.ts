/**
 * handleWebhook: verify + handshake + de-duplication in one call that returns the HTTP answer to send.
 * Framework-neutral: give it the raw body and headers, write back `status`, `headers` and `body`.
 */
import type { CryptoProvider } from '../crypto/provider.ts';
import type { RawBody } from './bytes.ts';
import type { EventIdStore } from './dedupe.ts';
import { WebhookVerificationError } from './errors.ts';
import { isKnownEvent, type UnknownWebhookEvent, type WebhookEvent } from './events.ts';
import { answerHandshake, parseHandshake, type VerificationMode, type WebhookAnswer } from './handshake.ts';
import {
  getHeader,
  type HeadersInput,
  SIGNATURE_HEADER,
  type WebhookEnvironment,
  webhookEnvironment,
} from './headers.ts';
import { defaultAsyncCryptoProvider, type VerifyWebhookOptions, WebhookVerifier } from './verifier.ts';

export interface HandleWebhookOptions {
  /** The body exactly as received. */
  rawBody: RawBody;
  headers: HeadersInput;
  /** The signing secret, or both secrets during a rotation. Not needed to answer a handshake. */
  secrets: string | readonly string[];
  store: EventIdStore;
  /**
   * Business processing of a verified, first-seen event. Throw to have the service retry it.
   * `context.environment` is the delivery's `service-environment` (`live` or `test`; undefined when absent).
   */
  onEvent: (event: WebhookEvent, context: WebhookContext) => unknown;
  /** A verified event of a type added to v1 after this SDK release. Default: acknowledged and ignored. */
  onUnknownEvent?: (event: UnknownWebhookEvent, context: WebhookContext) => unknown;
  /** Told about a handshake (for logging). Must not create business records: the handshake is unsigned. */
  onHandshake?: (challenge: string) => unknown;
  /** Your subscription's verification mode; the answer satisfies both. */
  mode?: VerificationMode;
  verifyOptions?: VerifyWebhookOptions;
  /**
   * HMAC provider. Default: Web Crypto (`SubtleCryptoProvider`), available on Node 20+ and every other
   * runtime; pass `new NodeCryptoProvider()` to use `node:crypto`.
   */
  crypto?: CryptoProvider;
}

/** What a delivery says about its event beside the body. */
export interface WebhookContext {
  /** `live` or `test` (the `service-environment` header); undefined when the header is absent. */
  environment: WebhookEnvironment | undefined;
}

export type WebhookOutcome = 'handshake' | 'processed' | 'duplicate' | 'unknown_type' | 'rejected' | 'failed';

export interface HandledWebhook extends WebhookAnswer {
  outcome: WebhookOutcome;
  /** The event, when one was verified. */
  event?: WebhookEvent | UnknownWebhookEvent;
  /** The delivery's environment (`service-environment`), when an event was verified and the header was sent. */
  environment?: WebhookEnvironment;
  /** Why the request was rejected (a WebhookVerificationError) or why processing failed; log it. */
  error?: unknown;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function answer(
  status: number,
  outcome: WebhookOutcome,
  payload: object,
  extra: Partial<HandledWebhook> = {},
) {
  return { status, headers: { ...JSON_HEADERS }, body: JSON.stringify(payload), outcome, ...extra };
}

/**
 * Answers, in order:
 * - an unsigned verification handshake: 200 with the challenge echoed (nothing else happens);
 * - a request failing verification: 400 (a 4xx other than 401/403/410/422, so the service retries it
 *   and a receiver misconfigured mid-rotation does not get its subscription paused at once);
 * - an event already claimed in `store`: 200, `onEvent` is not called again;
 * - a new event: `onEvent`, then 200; if `onEvent` throws, the claim is released and the answer is 500
 *   so that the service delivers it again.
 * Throws `WebhookConfigurationError` when no non-empty secret is configured (fail fast, fix the deploy).
 */
export async function handleWebhook(options: HandleWebhookOptions): Promise<HandledWebhook> {
  const { rawBody, headers, store } = options;

  if (getHeader(headers, SIGNATURE_HEADER) === undefined) {
    const handshake = parseHandshake(rawBody);
    if (handshake !== undefined) {
      await options.onHandshake?.(handshake.challenge);
      return { ...answerHandshake(handshake, options.mode), outcome: 'handshake' };
    }
  }

  const { crypto: verifyCrypto, ...verifyOptions } = options.verifyOptions ?? {};
  // Throws WebhookConfigurationError without a non-empty secret: fail loudly, the service retries.
  const verifier = new WebhookVerifier({
    ...verifyOptions,
    secrets: options.secrets,
    crypto: verifyCrypto ?? options.crypto ?? defaultAsyncCryptoProvider(),
  });
  let event: WebhookEvent | UnknownWebhookEvent;
  try {
    event = await verifier.verifyAsync(rawBody, headers);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return answer(400, 'rejected', { error: { code: error.code, message: error.message } }, { error });
  }

  const environment = webhookEnvironment(headers);
  const seen = environment ? { event, environment } : { event };
  if (!(await store.claim(event.event_id))) {
    return answer(200, 'duplicate', { received: true, duplicate: true }, seen);
  }
  try {
    if (isKnownEvent(event)) await options.onEvent(event, { environment });
    else await options.onUnknownEvent?.(event, { environment });
  } catch (error) {
    await store.release?.(event.event_id);
    return answer(500, 'failed', { error: { code: 'processing_failed' } }, { ...seen, error });
  }
  return answer(200, isKnownEvent(event) ? 'processed' : 'unknown_type', { received: true }, seen);
}
