import type { CRM_STATUSES, DIRECTIONS } from './values.ts';

/** The most calls one page of a calls list holds (GET /calls `limit`, the web app's list). */
export const MAX_LIMIT = 100;

/** A calls list request, parsed: what `listCalls` (capture/call-list.ts) reads. */
export interface ListCallsFilter {
  page: number;
  limit: number;
  /** created_at >= from */
  from: Date | null;
  /** created_at <= to (inclusive; a date-only dateTo ends at 23:59:59.999Z of that day) */
  to: Date | null;
  direction: (typeof DIRECTIONS)[number] | null;
  status: (typeof CRM_STATUSES)[number] | null;
  /** digit strings matched as trailing digits of customer_phone_e164 (any of them) */
  phoneDigits: string[] | null;
}
