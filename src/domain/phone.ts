import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Phone numbers: pure functions on libphonenumber-js (full "max" metadata, so national formats and
 * number types are exact). Used when a call is stored (customer_phone_e164 / _national / _rdigits)
 * and by the `phone` filter of GET /calls.
 */
export interface NormalizedPhone {
  /** +<country code><national number>, e.g. +14155552671; Italian numbers keep their leading 0. */
  e164: string;
  /** the same number in its country's national format, e.g. (415) 555-2671, 020 7946 0958 */
  national: string;
  /** the E.164 digits reversed: the trailing-digit phone filter becomes an indexed prefix scan */
  rdigits: string;
}

/** Caller-id placeholders carriers send instead of a number. */
const NO_NUMBER = new Set(['', 'anonymous', 'unknown', 'restricted', 'private', 'unavailable', 'withheld']);

/** Longest input worth parsing; anything longer is not a phone number. */
const MAX_RAW_LENGTH = 64;

/**
 * Reads a carrier-provided number. International input (+…) parses on its own; national input
 * needs defaultCountry (the organization's country, ISO 3166-1 alpha-2). Returns null when the
 * input is no usable number: a placeholder (anonymous, unknown …), a short code (911, 12345), or a
 * digit string of impossible length for its country. "Usable" is libphonenumber's isPossible(): a
 * number of the right length for its country is kept even when its range is not (yet) in the
 * metadata, because it is still what the carrier reported and what a CRM would hold.
 */
export function normalizePhone(
  raw: string | null | undefined,
  defaultCountry?: string | null,
): NormalizedPhone | null {
  if (raw == null) return null;
  const input = raw.trim();
  if (NO_NUMBER.has(input.toLowerCase()) || input.length > MAX_RAW_LENGTH) return null;
  const country =
    defaultCountry && isSupportedCountry(defaultCountry) ? (defaultCountry as CountryCode) : undefined;
  const parsed = parsePhoneNumberFromString(input, country ? { defaultCountry: country } : {});
  if (!parsed?.isPossible()) return null;
  const e164 = parsed.number;
  return { e164, national: parsed.formatNational(), rdigits: reverseDigits(e164) };
}

/** The ASCII digits of s, last digit first. */
export function reverseDigits(s: string): string {
  return s
    .replace(/[^0-9]/g, '')
    .split('')
    .reverse()
    .join('');
}

export const PHONE_FILTER_MIN_LENGTH = 3;
export const PHONE_FILTER_MAX_LENGTH = 40;
/** Fewer digits than this would match a large share of all calls and is almost surely a typo. */
export const PHONE_FILTER_MIN_DIGITS = 3;
/**
 * A national number written with its trunk prefix (UK 020 7946 0958, FR 01 23 45 67 89) is also
 * matched without its leading zeros, but only when at least this many digits remain: the shortest
 * national significant numbers in common use have 7 digits, and shorter remainders would match
 * too broadly.
 */
export const TRUNK_REMAINDER_MIN_DIGITS = 7;
/** Characters the filter accepts: digits, ignored separators, and one optional leading +. */
export const PHONE_FILTER_PATTERN = '^[ .()-]*\\+?[0-9 .()-]*$';
const ACCEPTED = 'digits, spaces, hyphens, dots, parentheses and one leading +';

export type PhoneFilter = { ok: true; digits: string[] } | { ok: false; reason: string };

/**
 * The digit strings the `phone` filter of GET /calls matches as the trailing digits of
 * customer_phone_e164. Spaces, hyphens, dots and parentheses are ignored and the leading + is
 * optional, so "+1 (415) 555-2671", "1.415.555.2671" and "4155552671" all find +14155552671.
 * Without a +, a number starting with 0 is also tried without its leading zeros (trunk prefix
 * 0 or international prefix 00), so "020 7946 0958" and "0044 20 7946 0958" find +442079460958.
 */
export function phoneFilterDigits(query: string): PhoneFilter {
  if (query.length < PHONE_FILTER_MIN_LENGTH || query.length > PHONE_FILTER_MAX_LENGTH) {
    return {
      ok: false,
      reason: `must be ${PHONE_FILTER_MIN_LENGTH} to ${PHONE_FILTER_MAX_LENGTH} characters long`,
    };
  }
  if (!new RegExp(PHONE_FILTER_PATTERN).test(query))
    return { ok: false, reason: `may contain only ${ACCEPTED}` };
  const international = query.includes('+');
  const digits = query.replace(/[^0-9]/g, '');
  if (digits.length < PHONE_FILTER_MIN_DIGITS) {
    return { ok: false, reason: `must contain at least ${PHONE_FILTER_MIN_DIGITS} digits` };
  }
  const forms = [digits];
  if (!international && digits.startsWith('0')) {
    const rest = digits.replace(/^0+/, '');
    if (rest.length >= TRUNK_REMAINDER_MIN_DIGITS) forms.push(rest);
  }
  return { ok: true, digits: forms };
}
