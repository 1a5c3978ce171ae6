/**
 * Time zones the pages can spell times in: UTC and every IANA zone this Node's ICU knows
 * (Intl.supportedValuesOf, ~420 names such as Europe/Paris, America/New_York), in that order.
 */
export const TIME_ZONES: readonly string[] = [
  'UTC',
  ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC'),
];

const KNOWN = new Set(TIME_ZONES);

/** True for a zone name of TIME_ZONES, spelt exactly (Europe/Paris, not europe/paris). */
export const isTimeZone = (v: string): boolean => KNOWN.has(v);
