/**
 * verifyWebhook: authenticate a delivery from its raw bytes, then parse and check the envelope.
 *
 * Order matters: the signature is checked over the exact bytes received BEFORE any JSON parsing, in
 * constant time, against every accepted secret; then the timestamp window; then the envelope.
 */
import { timingSafeEqual } from 'node:crypto';
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
import { computeSignature, type RawBody, toBytes } from './sign.ts';

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
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError(
      `verifyWebhook needs the raw request body as a string or Buffer, got ${describe(rawBody)}. Are you ` +
        'passing a body your framework already parsed as JSON? Configure it to keep the raw body ' +
        '(express.raw({ type: "application/json" }), or a Fastify content-type parser with parseAs: "buffer").',
    );
  }
  const keys = normalizeSecrets(secrets);
  const header = getHeader(headers, SIGNATURE_HEADER);
  if (header === undefined || header.trim() === '') throw new WebhookSignatureMissingError();
  const { timestamp, signatures } = parseSignatureHeader(header);

  const bytes = toBytes(rawBody);
  let matched = false;
  for (const key of keys) {
    const expected = computeSignature(bytes, key, timestamp);
    // No early exit: the time taken does not depend on which secret or which entry matched.
    for (const candidate of signatures) if (timingSafeEqual(expected, candidate)) matched = true;
  }
  if (!matched) throw new WebhookSignatureMismatchError(keys.length);

  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const futureTolerance = options.futureToleranceSeconds ?? DEFAULT_FUTURE_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  if (nowSeconds - timestamp > tolerance) {
    throw new WebhookTimestampError(timestamp, nowSeconds, tolerance, false);
  }
  if (timestamp - nowSeconds > futureTolerance) {
    throw new WebhookTimestampError(timestamp, nowSeconds, futureTolerance, true);
  }

  const event = parseEnvelope(bytes);
  checkDeliveryHeader(headers, EVENT_ID_HEADER, event.event_id);
  checkDeliveryHeader(headers, EVENT_TYPE_HEADER, event.event_type);
  return event;
}

function parseEnvelope(bytes: Buffer): VerifiedWebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
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
