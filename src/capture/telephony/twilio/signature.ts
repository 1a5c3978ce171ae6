import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * X-Twilio-Signature (https://www.twilio.com/docs/usage/security#validating-requests): base64 of
 * HMAC-SHA1, keyed with the account's auth token, over the full URL as requested (scheme, host,
 * path and query) followed by every POST parameter, sorted by name, as name + value (a repeated
 * name contributes each of its distinct values, sorted). Written here rather than taken from the
 * `twilio` package so the tests, which sign with the package's getExpectedTwilioSignature, check
 * this code against an independent implementation.
 */
export type FormParams = Record<string, string | string[]>;

export function twilioSignature(authToken: string, url: string, params: FormParams): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    if (Array.isArray(value)) for (const v of [...new Set(value)].sort()) data += name + v;
    else data += name + value;
  }
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/** Constant-time comparison of the header against the expected signature. */
export function signatureMatches(
  authToken: string,
  url: string,
  params: FormParams,
  header: string,
): boolean {
  const expected = Buffer.from(twilioSignature(authToken, url, params));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
