import { z } from 'zod';
import { type ListCallsFilter, MAX_LIMIT } from '../../../domain/call-list-filter.ts';
import {
  boundEnd,
  boundStart,
  clampInstant,
  DATE_PATTERN,
  DATE_TIME_PATTERN,
  parseDateParam,
  restoreOffsetPlus,
} from '../../../domain/date-param.ts';
import {
  PHONE_FILTER_MAX_LENGTH,
  PHONE_FILTER_MIN_LENGTH,
  PHONE_FILTER_PATTERN,
  phoneFilterDigits,
} from '../../../domain/phone.ts';
import { CRM_STATUSES, DIRECTIONS } from '../../../domain/values.ts';
import { badRequest } from '../../../errors.ts';
import { type QueryParams, type QueryValues, readQuery } from './query.ts';

/** Page size bounds (spec "Limits"). */
export { type ListCallsFilter, MAX_LIMIT };
export const DEFAULT_LIMIT = 20;

const dateSchema = z
  .union([
    z.string().regex(new RegExp(DATE_PATTERN)).meta({ format: 'date' }),
    z.string().regex(new RegExp(DATE_TIME_PATTERN)).meta({ format: 'date-time' }),
  ])
  .refine((s) => parseDateParam(s) !== null)
  .optional();

const DATE_ACCEPTS =
  'a date YYYY-MM-DD or an ISO 8601 date-time with Z or a numeric offset, e.g. 2026-06-15 or 2026-06-15T08:30:00Z';

/** The query parameters of GET /calls: validation and OpenAPI parameters in one place. */
export const listCallsParams = {
  page: {
    schema: z.int().min(1).max(Number.MAX_SAFE_INTEGER).default(1),
    integer: true,
    description: 'Page number, 1-based.',
    accepts: 'an integer of at least 1 (default 1)',
  },
  limit: {
    schema: z.int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT),
    integer: true,
    description: 'Page size.',
    accepts: `an integer from 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`,
  },
  dateFrom: {
    schema: dateSchema,
    normalize: restoreOffsetPlus,
    description:
      'Earliest created_at, inclusive. A date (YYYY-MM-DD) starts at 00:00:00Z; a date-time needs Z or a numeric offset.',
    accepts: DATE_ACCEPTS,
  },
  dateTo: {
    schema: dateSchema,
    normalize: restoreOffsetPlus,
    description:
      'Latest created_at, inclusive. A date (YYYY-MM-DD) includes that whole UTC day; a date-time needs Z or a numeric offset.',
    accepts: DATE_ACCEPTS,
  },
  direction: {
    schema: z.enum(DIRECTIONS).optional(),
    description: 'Only calls of this direction.',
    accepts: DIRECTIONS.join(' or '),
  },
  status: {
    schema: z.enum(CRM_STATUSES).optional(),
    description: 'Only calls with this crm_status.',
    accepts: `one of ${CRM_STATUSES.join(', ')}`,
  },
  phone: {
    schema: z
      .string()
      .min(PHONE_FILTER_MIN_LENGTH)
      .max(PHONE_FILTER_MAX_LENGTH)
      .regex(new RegExp(PHONE_FILTER_PATTERN))
      .refine((s) => phoneFilterDigits(s).ok)
      .optional(),
    description:
      'Matches the trailing digits of customer_phone_e164 (the caller on inbound calls, the counterparty on outbound). ' +
      'Spaces, hyphens, dots and parentheses are ignored and the leading + is optional, so +1 (415) 555-2671, ' +
      '1.415.555.2671 and 4155552671 all find +14155552671. A national number written with its leading 0 ' +
      '(020 7946 0958) also matches without it.',
    accepts: `${PHONE_FILTER_MIN_LENGTH} to ${PHONE_FILTER_MAX_LENGTH} characters: digits, spaces, hyphens, dots, parentheses and one leading +, with at least 3 digits`,
  },
} satisfies QueryParams;

/** Reads GET /calls' query string; throws 400 BAD_REQUEST naming the parameter. */
export function readListCallsQuery(url: string): ListCallsFilter {
  const q: QueryValues<typeof listCallsParams> = readQuery(url, listCallsParams);
  const from = q.dateFrom === undefined ? null : boundStart(parseDateParam(q.dateFrom)!);
  const to = q.dateTo === undefined ? null : boundEnd(parseDateParam(q.dateTo)!);
  if (from && to && from > to) {
    throw badRequest(
      `Query parameter "dateFrom" (${from.toISOString()}) is after "dateTo" (${to.toISOString()}); give a dateFrom on or before dateTo.`,
      'dateFrom',
    );
  }
  const phone = q.phone === undefined ? null : phoneFilterDigits(q.phone);
  return {
    page: q.page,
    limit: q.limit,
    from: from && clampInstant(from),
    to: to && clampInstant(to),
    direction: q.direction ?? null,
    status: q.status ?? null,
    phoneDigits: phone?.ok ? phone.digits : null,
  };
}
