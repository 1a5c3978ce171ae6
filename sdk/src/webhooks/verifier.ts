/**
 * WebhookVerifier: authenticates a delivery from its raw bytes, then parses and checks the envelope.
 * The HMAC comes from the crypto provider chosen at construction (as stripe-node does), so this module
 * imports nothing platform-specific: `NodeCryptoProvider` verifies synchronously (`verify`),
 * `SubtleCryptoProvider` (Web Crypto) asynchronously (`verifyAsync`, which works with both).
 *
 * Order matters: the signature is checked over the exact bytes received BEFORE any JSON parsing, in
 * constant time, against every accepted secret; then the timestamp window; then the envelope.
 */
import type { CryptoProvider } from '../crypto/provider.ts';
import { SubtleCryptoProvider } from '../crypto/subtle.ts';
import { bytesToText, constantTimeEqual, type RawBody, signedPayload, toBytes, toHex } from './bytes.ts';
import {
  WebhookConfigurationError,
  WebhookPayloadError,
  WebhookSignatureMismatchError,
  WebhookSignatureMissingError,
  WebhookTimestampError,
} from './errors.ts';
import { API_VERSION, type VerifiedWebhookEvent } from './events.ts';
import {
  EVENT_ID_HEADER,
  EVENT_TYPE_HEADER,
  getHeader,
  type HeadersInput,
  parseSignatureHeader,
  SIGNATURE_HEADER,
} from './headers.ts';

/** Receiver policy of the spec: reject a timestamp more than 600 s old… */
export const DEFAULT_TOLERANCE_SECONDS = 600;
/** …or more than 300 s ahead of the receiver's clock. */
export const DEFAULT_FUTURE_TOLERANCE_SECONDS = 300;

export interface VerifyWebhookOptions {
  /** Oldest accepted signature timestamp, in seconds before now. Default 600. */
  toleranceSeconds?: number;
  /** Furthest accepted signature timestamp, in seconds after now. Default 300. */
  futureToleranceSeconds?: number;
  /** Clock in milliseconds since the epoch; inject a fake one in tests. Default Date.now. */
  now?: () => number;
  /**
   * Where the HMAC comes from. Defaults: `NodeCryptoProvider` for the synchronous `verifyWebhook` (from
   * `@callcap/sdk`), `SubtleCryptoProvider` (Web Crypto) for the asynchronous functions.
   */
  crypto?: CryptoProvider;
}

export interface WebhookVerifierOptions extends Omit<VerifyWebhookOptions, 'crypto'> {
  /** The signing secret, or both secrets during a rotation (any match is accepted). */
  secrets: string | readonly string[];
  /** `new NodeCryptoProvider()` on Node (sync and async), `new SubtleCryptoProvider()` elsewhere (async). */
  crypto: CryptoProvider;
}

/**
 * Drops empty and whitespace-only secrets (an unset environment variable must never become an accepted
 * key) and trims the rest (a trailing newline from a secrets file is never part of a secret).
 */
export function normalizeSecrets(secrets: string | readonly string[]): string[] {
  const list = typeof secrets === 'string' ? [secrets] : [...secrets];
  const kept = list.filter((s): s is string => typeof s === 'string' && s.trim() !== '').map((s) => s.trim());
  if (kept.length === 0) {
    throw new WebhookConfigurationError(
      'No webhook signing secret configured: every secret passed to verifyWebhook was empty. Set the ' +
        'secret shown when the subscription was created (for example from an environment variable) and ' +
        'check that the variable is actually set in this process.',
    );
  }
  return kept;
}

interface Pending {
  bytes: Uint8Array;
  payload: Uint8Array;
  timestamp: number;
  signatures: Uint8Array[];
}

export class WebhookVerifier {
  readonly crypto: CryptoProvider;
  readonly #secrets: string[];
  readonly #tolerance: number;
  readonly #futureTolerance: number;
  readonly #now: () => number;

  /** Throws `WebhookConfigurationError` when `secrets` holds no non-empty secret. */
  constructor(options: WebhookVerifierOptions) {
    if (options.crypto === undefined || typeof options.crypto.computeHmacSha256Async !== 'function') {
      throw new TypeError(
        'WebhookVerifier needs a crypto provider: new NodeCryptoProvider() (from "@callcap/sdk") on Node, ' +
          'new SubtleCryptoProvider() where only Web Crypto exists.',
      );
    }
    this.crypto = options.crypto;
    this.#secrets = normalizeSecrets(options.secrets);
    this.#tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    this.#futureTolerance = options.futureToleranceSeconds ?? DEFAULT_FUTURE_TOLERANCE_SECONDS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Verifies synchronously and returns the parsed event. Needs a synchronous provider
   * (`NodeCryptoProvider`); `SubtleCryptoProvider` throws `CryptoProviderOnlySupportsAsyncError`.
   * Throws a `WebhookVerificationError` subclass when the request must be rejected (answer 400).
   */
  verify(rawBody: RawBody, headers: HeadersInput): VerifiedWebhookEvent {
    const pending = this.#prepare(rawBody, headers);
    let matched = false;
    for (const secret of this.#secrets) {
      const expected = this.crypto.computeHmacSha256(secret, pending.payload);
      // No early exit: the time taken does not depend on which secret or which entry matched.
      for (const candidate of pending.signatures) if (constantTimeEqual(expected, candidate)) matched = true;
    }
    return this.#finish(pending, matched, headers);
  }

  /** Like `verify`, with any provider. */
  async verifyAsync(rawBody: RawBody, headers: HeadersInput): Promise<VerifiedWebhookEvent> {
    const pending = this.#prepare(rawBody, headers);
    let matched = false;
    for (const secret of this.#secrets) {
      const expected = await this.crypto.computeHmacSha256Async(secret, pending.payload);
      for (const candidate of pending.signatures) if (constantTimeEqual(expected, candidate)) matched = true;
    }
    return this.#finish(pending, matched, headers);
  }

  /** A `service-signature` value for `rawBody`, signed with the first secret (for your own test fixtures). */
  sign(rawBody: RawBody, timestampSeconds: number): string {
    checkTimestamp(timestampSeconds);
    const digest = this.crypto.computeHmacSha256(this.#secrets[0], signedPayload(rawBody, timestampSeconds));
    return `t=${timestampSeconds},v1=${toHex(digest)}`;
  }

  /** Like `sign`, with any provider. */
  async signAsync(rawBody: RawBody, timestampSeconds: number): Promise<string> {
    checkTimestamp(timestampSeconds);
    const payload = signedPayload(rawBody, timestampSeconds);
    const digest = await this.crypto.computeHmacSha256Async(this.#secrets[0], payload);
    return `t=${timestampSeconds},v1=${toHex(digest)}`;
  }

  #prepare(rawBody: RawBody, headers: HeadersInput): Pending {
    if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
      throw new TypeError(
        `verifyWebhook needs the raw request body as a string or bytes (Uint8Array, Buffer), got ${describe(rawBody)}. ` +
          'Are you passing a body your framework already parsed as JSON? Configure it to keep the raw body ' +
          '(express.raw({ type: "application/json" }), a Fastify content-type parser with parseAs: "buffer", ' +
          'or await request.text() with fetch-style requests).',
      );
    }
    const header = getHeader(headers, SIGNATURE_HEADER);
    if (header === undefined || header.trim() === '') throw new WebhookSignatureMissingError();
    const { timestamp, signatures } = parseSignatureHeader(header);
    const bytes = toBytes(rawBody);
    return { bytes, payload: signedPayload(bytes, timestamp), timestamp, signatures };
  }

  #finish(pending: Pending, matched: boolean, headers: HeadersInput): VerifiedWebhookEvent {
    if (!matched) throw new WebhookSignatureMismatchError(this.#secrets.length);
    const { timestamp } = pending;
    const nowSeconds = Math.floor(this.#now() / 1000);
    if (nowSeconds - timestamp > this.#tolerance) {
      throw new WebhookTimestampError(timestamp, nowSeconds, this.#tolerance, false);
    }
    if (timestamp - nowSeconds > this.#futureTolerance) {
      throw new WebhookTimestampError(timestamp, nowSeconds, this.#futureTolerance, true);
    }
    const event = parseEnvelope(pending.bytes);
    checkDeliveryHeader(headers, EVENT_ID_HEADER, event.event_id);
    checkDeliveryHeader(headers, EVENT_TYPE_HEADER, event.event_type);
    return event;
  }
}

let sharedSubtle: SubtleCryptoProvider | undefined;
/** The Web Crypto provider, created on first use. */
export function defaultAsyncCryptoProvider(): CryptoProvider {
  sharedSubtle ??= new SubtleCryptoProvider();
  return sharedSubtle;
}

/**
 * Verifies a delivery asynchronously and returns the parsed event; works on every runtime (Web Crypto
 * unless `options.crypto` says otherwise). Same checks and errors as `WebhookVerifier#verify`.
 */
export function verifyWebhookAsync(
  rawBody: RawBody,
  headers: HeadersInput,
  secrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<VerifiedWebhookEvent> {
  const { crypto, ...rest } = options;
  return new WebhookVerifier({
    ...rest,
    secrets,
    crypto: crypto ?? defaultAsyncCryptoProvider(),
  }).verifyAsync(rawBody, headers);
}

/** `signPayload` for every runtime: the `service-signature` value `t=<seconds>,v1=<hex>` for a body. */
export async function signPayloadAsync(
  rawBody: RawBody,
  secret: string,
  timestampSeconds: number,
  crypto: CryptoProvider = defaultAsyncCryptoProvider(),
): Promise<string> {
  checkTimestamp(timestampSeconds);
  const digest = await crypto.computeHmacSha256Async(secret, signedPayload(rawBody, timestampSeconds));
  return `t=${timestampSeconds},v1=${toHex(digest)}`;
}

export function checkTimestamp(timestampSeconds: number): void {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError(
      `timestampSeconds must be whole Unix seconds, got ${timestampSeconds}; use Math.floor(Date.now() / 1000).`,
    );
  }
}

function parseEnvelope(bytes: Uint8Array): VerifiedWebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytesToText(bytes, true));
  } catch (cause) {
    throw new WebhookPayloadError('The signed body is not valid UTF-8 JSON.', { cause });
  }
  if (!isRecord(parsed)) throw new WebhookPayloadError('The signed body is not a JSON object.');
  if (parsed.api_version !== API_VERSION) {
    throw new WebhookPayloadError(
      `This SDK understands api_version ${API_VERSION}; the event says ${JSON.stringify(parsed.api_version)}. ` +
        'Upgrade @callcap/sdk to a release that supports it.',
    );
  }
  for (const field of ['event_id', 'event_type', 'resource_id', 'created_at'] as const) {
    if (typeof parsed[field] !== 'string' || parsed[field] === '') {
      throw new WebhookPayloadError(`The event envelope lacks a non-empty string "${field}".`);
    }
  }
  if (!isRecord(parsed.data)) throw new WebhookPayloadError('The event envelope lacks a "data" object.');
  return parsed as unknown as VerifiedWebhookEvent;
}

/** service-event-id / service-event-type, when present, must repeat the signed body's values. */
function checkDeliveryHeader(headers: HeadersInput, name: string, bodyValue: string): void {
  const value = getHeader(headers, name);
  if (value === undefined || value === bodyValue) return;
  throw new WebhookPayloadError(
    `The ${name} header (${JSON.stringify(value)}) differs from the signed body (${JSON.stringify(bodyValue)}). ` +
      'Something between the service and this receiver rewrote the request; trust neither.',
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'Object'})`;
  return typeof value;
}
