import { parseDateParam } from '../../../../domain/date-param.ts';

/**
 * The one reading of a date typed into a page (an <input type="date">: YYYY-MM-DD): the start of
 * that UTC day, or null when it is no real calendar date (2026-02-30, month 13, year 0000). The
 * same rules as the REST API's dateFrom/dateTo (domain/date-param.ts), which the calls list's
 * filters go through as they are.
 */
export function parseDay(raw: string): Date | null {
  const bound = parseDateParam(raw);
  return bound?.kind === 'date' ? bound.start : null;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The day of an instant as a date field's value (YYYY-MM-DD, UTC). */
export const dayOf = (d: Date): string =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
