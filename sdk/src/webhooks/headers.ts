/**
 * Header lookup that works with a fetch `Headers` object, a plain record, and Node's
 * `IncomingHttpHeaders` (whose values can be arrays), plus the parser of `service-signature`.
 */
import { fromHex } from './bytes.ts';
import { WebhookSignatureMalformedError } from './errors.ts';

/** Anything a web framework hands you as request headers. */
export type HeadersInput = Headers | Record<string, string | string[] | undefined>;

export const SIGNATURE_HEADER = 'service-signature';
export const EVENT_ID_HEADER = 'service-event-id';
export const EVENT_TYPE_HEADER = 'service-event-type';
/** Carried by a webhook.test sent with a pending (not yet active) secret during a rotation. */
export const SECRET_ROTATION_ID_HEADER = 'service-secret-rotation-id';
/** `live` or `test`: the data environment the delivered event belongs to (test keys and test subscriptions). */
export const ENVIRONMENT_HEADER = 'service-environment';

/** The data environment of a delivery: a test subscription only ever receives `test` events. */
export type WebhookEnvironment = 'live' | 'test';

/**
 * The delivery's `service-environment` header as `live` or `test`; undefined when it is absent or
 * carries another value (a delivery from a release before test mode: treat it as live). The header
 * is not covered by the signature — the body is — so decide nothing security-relevant on it alone:
 * a test subscription has its own secret, and an event verified with it is a test event.
 */
export function webhookEnvironment(headers: HeadersInput): WebhookEnvironment | undefined {
  const v = getHeader(headers, ENVIRONMENT_HEADER)?.trim().toLowerCase();
  return v === 'live' || v === 'test' ? v : undefined;
}

function isHeadersObject(headers: HeadersInput): headers is Headers {
  // Duck-typed rather than `instanceof`, so a Headers from another fetch implementation works too.
  return typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function';
}

/**
 * Case-insensitive lookup. Repeated headers (arrays, or several keys differing only in case) are joined
 * with ", " as HTTP does; returns undefined when the header is absent.
 */
export function getHeader(headers: HeadersInput, name: string): string | undefined {
  const wanted = name.toLowerCase();
  if (isHeadersObject(headers)) return headers.get(wanted) ?? undefined;
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    if (Array.isArray(value)) values.push(...value);
    else values.push(value);
  }
  return values.length === 0 ? undefined : values.join(', ');
}

export interface ParsedSignatureHeader {
  /** Unix seconds. */
  timestamp: number;
  /** Raw v1 digests, 32 bytes each; unknown schemes are ignored. */
  signatures: Uint8Array[];
}

const TIMESTAMP = /^\d{1,12}$/;
const V1_HEX = /^[0-9a-f]{64}$/;

/**
 * Parses `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`. Several v1 entries are tolerated (any may match);
 * entries of other schemes (v0=, v2=…) are ignored, as are v1 values that are not 64 lowercase hex.
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader {
  let timestamp: number | undefined;
  const signatures: Uint8Array[] = [];
  for (const part of header.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw new WebhookSignatureMalformedError(header, `"${item.slice(0, 20)}" is not key=value`);
    const key = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (key === 't') {
      if (timestamp !== undefined) throw new WebhookSignatureMalformedError(header, 'more than one t=');
      if (!TIMESTAMP.test(value)) {
        throw new WebhookSignatureMalformedError(header, 't= must be a whole number of Unix seconds');
      }
      timestamp = Number(value);
    } else if (key === 'v1' && V1_HEX.test(value)) {
      signatures.push(fromHex(value));
    }
  }
  if (timestamp === undefined) throw new WebhookSignatureMalformedError(header, 'no t= timestamp');
  if (signatures.length === 0) {
    throw new WebhookSignatureMalformedError(header, 'no v1= signature of 64 lowercase hex characters');
  }
  return { timestamp, signatures };
}
