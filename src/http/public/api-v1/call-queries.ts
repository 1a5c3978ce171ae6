import type { Queryable } from '../../../db/types.ts';
import type { CallViewRow } from '../../../domain/call-view.ts';
import type { Piggyback } from './auth-query.ts';
import { type ListCallsFilter, MAX_LIMIT } from './calls-params.ts';

/**
 * The read queries of the REST API. One statement each: calls LEFT JOIN call_analyses (no query per
 * row), always scoped to the key's organization, never showing erased calls (trashed and scheduled
 * ones are still readable). Only the allowlisted analysis keys leave the database. created_at leaves
 * as the ISO 8601 text the API shows. Measurements behind these shapes: docs/benchmarks.md (REST API).
 */
const COLUMNS = `c.id, c.direction, c.caller_phone, c.customer_phone_e164, c.customer_phone_national,
  c.company_phone_e164, c.caller_name, c.duration, c.crm_status, c.review_status, c.outbound_lifecycle,
  to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  ca.call_id IS NOT NULL AS has_analysis, ca.analysis -> 'caller_name' AS tp_caller_name,
  ca.analysis -> 'summary' AS tp_summary, ca.analysis -> 'service_needed' AS tp_service_needed,
  ca.followup_email, ca.language AS analysis_language`;

const FROM = `calls c LEFT JOIN call_analyses ca ON ca.call_id = c.id AND ca.organization_id = c.organization_id`;

/**
 * One call by id, riding on the authentication round trip of GET /calls/{id} (auth-query.ts):
 * $7 is the call id, a.organization_id the key's organization. Comes back as JSON (timestamps as
 * strings), which toCallView reads like a row.
 */
export const callByIdPiggyback: Piggyback = {
  name: 'api_authenticate_get_call_v2',
  sql: `SELECT ${COLUMNS} FROM ${FROM}
         WHERE c.id = $7::uuid AND c.organization_id = a.organization_id AND c.erased_at IS NULL`,
};

/**
 * The byte-wise range of the strings that start with a non-empty digit string: [prefix, upper),
 * upper being the prefix with its last character's code + 1 ('9' + 1 = ':', still above every digit).
 */
export function prefixRange(prefix: string): [string, string] {
  const last = prefix.charCodeAt(prefix.length - 1);
  return [prefix, prefix.slice(0, -1) + String.fromCharCode(last + 1)];
}

/** The calls columns COLUMNS reads, plus organization_id for the analysis join. */
const CALL_COLUMNS = `c.id, c.organization_id, c.direction, c.caller_phone, c.customer_phone_e164,
  c.customer_phone_national, c.company_phone_e164, c.caller_name, c.duration, c.crm_status, c.review_status,
  c.outbound_lifecycle, c.created_at`;

/**
 * The analysis of each call of a page (as FROM's join), as a subquery the planner keeps apart
 * (OFFSET 0): it does not search join orders and methods, and every plan, generic ones included, is
 * one primary-key lookup per row of the page.
 */
const ANALYSIS_JOIN = `LEFT JOIN LATERAL (
    SELECT call_id, analysis, followup_email, language FROM call_analyses
     WHERE call_id = c.id AND organization_id = c.organization_id OFFSET 0
  ) ca ON true`;

const NEWEST_FIRST = 'ORDER BY c.created_at DESC, c.id DESC';

/**
 * One page, newest first; created_at DESC, id DESC is a total order, so pages never overlap or skip
 * when several calls share a created_at. Fetches limit + 1 rows so has_more is exact.
 * Page 1 uses a constant-capped subquery and one prepared statement per filter combination (the
 * phone filter's prefix is a range, so it is named too); why: docs/benchmarks.md (REST API).
 */
export async function listCalls(
  db: Queryable,
  organizationId: string,
  f: ListCallsFilter,
): Promise<{ rows: CallViewRow[]; hasMore: boolean }> {
  const params: unknown[] = [organizationId];
  const where = ['c.organization_id = $1', 'c.erased_at IS NULL'];
  let shape = '';
  const add = (flag: string, sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
    shape += flag;
  };
  if (f.from) add('f', (p) => `c.created_at >= ${p}::timestamptz`, f.from);
  if (f.to) add('t', (p) => `c.created_at <= ${p}::timestamptz`, f.to);
  if (f.direction) add('d', (p) => `c.direction = ${p}::text`, f.direction);
  if (f.status) add('s', (p) => `c.crm_status = ${p}::text`, f.status);
  if (f.phoneDigits) {
    // Trailing digits of the E.164 number = leading digits of its reversed digits: a prefix, asked as
    // the byte-wise range [prefix, prefix with its last digit + 1) — the operators of the
    // text_pattern_ops index — so a generic plan scans the phone index whatever the digits are
    // (a LIKE pattern is index-able only when known at planning time).
    const ors = f.phoneDigits.map((digits) => {
      const [from, below] = prefixRange(digits.split('').reverse().join(''));
      params.push(from, below);
      return `(c.customer_phone_rdigits ~>=~ $${params.length - 1}::text AND c.customer_phone_rdigits ~<~ $${params.length}::text)`;
    });
    where.push(`(${ors.join(' OR ')})`);
    shape += `p${ors.length}`;
  }
  const calls = `SELECT ${CALL_COLUMNS} FROM calls c WHERE ${where.join(' AND ')} ${NEWEST_FIRST}`;
  let sql: string;
  if (f.page === 1) {
    params.push(f.limit + 1);
    sql = `SELECT ${COLUMNS} FROM (${calls} LIMIT ${MAX_LIMIT + 1}) c ${ANALYSIS_JOIN}
      ${NEWEST_FIRST} LIMIT $${params.length}::int`;
  } else {
    params.push(f.limit + 1, f.limit, f.page);
    const n = params.length;
    sql = `SELECT ${COLUMNS} FROM (${calls} LIMIT $${n - 2}::int OFFSET ($${n}::bigint - 1) * $${n - 1}::int) c
      ${ANALYSIS_JOIN} ${NEWEST_FIRST}`;
  }
  const name = `api_list_calls_v3_${f.page === 1 ? 'first' : 'later'}_${shape}`;
  const { rows } = await db.query<CallViewRow>(sql, params, { name });
  const hasMore = rows.length > f.limit;
  return { rows: hasMore ? rows.slice(0, f.limit) : rows, hasMore };
}
