/**
 * dateFrom / dateTo of GET /calls: "YYYY-MM-DD or ISO 8601". Accepted:
 * - a calendar date, 2026-06-15: as dateFrom it starts at 00:00:00Z, as dateTo it includes that
 *   whole UTC day;
 * - a date-time with Z or a numeric offset: 2026-06-15T08:30Z, 2026-06-15T08:30:00.250+02:00,
 *   +0200 also accepted; seconds and fractions are optional; fractions beyond milliseconds are
 *   truncated (stored times have millisecond precision).
 * A date-time without a zone is refused: it would be read in an unknown time zone.
 * An unencoded "+" in a query string arrives as a space ("…T08:30:00 02:00"); a space exactly where
 * the offset sign belongs is read as "+", the obvious intent.
 */
export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
export const DATE_TIME_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?([Zz]|[+-][0-9]{2}:?[0-9]{2})$';

const DATE_TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

export type DateBound = { kind: 'date'; start: Date; nextDay: Date } | { kind: 'datetime'; at: Date };

/** A space where the offset sign of a date-time belongs becomes "+" (see above). */
export function restoreOffsetPlus(raw: string): string {
  return raw.replace(/^([0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9:.]+) ([0-9]{2}:?[0-9]{2})$/, '$1+$2');
}

/** UTC midnight of a real calendar date, or null (2026-02-30, month 13, year 0000). */
function utcDate(y: number, m: number, d: number): Date | null {
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > 31) return null;
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) return null;
  return t;
}

export function parseDateParam(value: string): DateBound | null {
  const d = DATE_RE.exec(value);
  if (d) {
    const start = utcDate(+d[1], +d[2], +d[3]);
    if (!start) return null;
    return { kind: 'date', start, nextDay: new Date(start.getTime() + 86_400_000) };
  }
  const m = DATE_TIME_RE.exec(value);
  if (!m) return null;
  const day = utcDate(+m[1], +m[2], +m[3]);
  const [hh, mm, ss] = [+m[4], +m[5], m[6] === undefined ? 0 : +m[6]];
  if (!day || hh > 23 || mm > 59 || ss > 59) return null;
  const ms = m[7] === undefined ? 0 : +m[7].slice(0, 3).padEnd(3, '0');
  let offsetMin = 0;
  if (!m[8]) {
    const [oh, om] = [+m[10], +m[11]];
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const at = day.getTime() + ((hh * 60 + mm - offsetMin) * 60 + ss) * 1000 + ms;
  return { kind: 'datetime', at: new Date(at) };
}

/**
 * Instants outside years 0001–9999 (reachable with an offset, e.g. 0001-01-01T00:00+05:00) are
 * clamped to that range: no call lies outside it, and both databases accept every instant inside it.
 */
const FIRST = new Date('0001-01-01T00:00:00.000Z').getTime();
const LAST = new Date('9999-12-31T23:59:59.999Z').getTime();
export const clampInstant = (d: Date): Date => new Date(Math.min(LAST, Math.max(FIRST, d.getTime())));

/** The earliest instant a bound admits as dateFrom, and the last one it admits as dateTo. */
export const boundStart = (b: DateBound): Date => (b.kind === 'date' ? b.start : b.at);
export const boundEnd = (b: DateBound): Date =>
  b.kind === 'date' ? new Date(b.nextDay.getTime() - 1) : b.at;
