/**
 * The verification handshake: an UNSIGNED POST whose body has exactly two keys,
 * `{"event_type": "webhook.subscription.verify", "challenge": "<string>"}`, sent when a subscription is
 * created or re-verified. Echoing `{"challenge": "<same>"}` with 200 satisfies both modes (permissive
 * accepts any 2xx, strict needs the exact echo). It is not an event: it is unauthenticated, so it must
 * never create business records; answer it and do nothing else.
 */

import { bytesToText, toBytes } from './bytes.ts';
import { WebhookPayloadError } from './errors.ts';

export const HANDSHAKE_EVENT_TYPE = 'webhook.subscription.verify';
/**
 * Bodies larger than this are never treated as a handshake, so an unsigned request cannot make the
 * receiver parse megabytes of JSON. A real handshake is well under 1 KiB.
 */
export const HANDSHAKE_MAX_BYTES = 4096;

/** Subscription verification mode, chosen at creation. */
export type VerificationMode = 'permissive' | 'strict';

export interface VerificationHandshake {
  event_type: typeof HANDSHAKE_EVENT_TYPE;
  challenge: string;
}

export interface WebhookAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * True when `body` (raw string/bytes, or an already parsed value) is a verification handshake: a JSON
 * object with exactly the keys event_type = "webhook.subscription.verify" and a string challenge.
 */
export function isVerificationHandshake(body: unknown): boolean {
  return parseHandshake(body) !== undefined;
}

/** Returns the handshake, or undefined when `body` is anything else. Never throws. */
export function parseHandshake(body: unknown): VerificationHandshake | undefined {
  let value = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const bytes = toBytes(body);
    if (bytes.byteLength > HANDSHAKE_MAX_BYTES) return undefined;
    try {
      value = JSON.parse(bytesToText(bytes));
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 2) return undefined;
  const record = value as Record<string, unknown>;
  if (record.event_type !== HANDSHAKE_EVENT_TYPE || typeof record.challenge !== 'string') return undefined;
  return { event_type: HANDSHAKE_EVENT_TYPE, challenge: record.challenge };
}

/**
 * The HTTP answer to a handshake: 200 with `{"challenge": "<same string>"}`. The echo satisfies both
 * modes, so `mode` only documents which one your subscription uses. Throws `WebhookPayloadError` when the
 * body is not a handshake (check with `isVerificationHandshake` first).
 */
export function answerHandshake(rawBody: unknown, _mode: VerificationMode = 'permissive'): WebhookAnswer {
  const handshake = parseHandshake(rawBody);
  if (handshake === undefined) {
    throw new WebhookPayloadError(
      'answerHandshake got a body that is not a verification handshake (expected exactly ' +
        `{"event_type": "${HANDSHAKE_EVENT_TYPE}", "challenge": "<string>"}). Check isVerificationHandshake ` +
        'first and send everything else to verifyWebhook.',
    );
  }
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ challenge: handshake.challenge }),
  };
}
