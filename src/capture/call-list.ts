import type { Piggyback } from '../db/piggyback.ts';
import { inScope, scopeParams } from '../db/tenant-sql.ts';
import type { Queryable } from '../db/types.ts';
import { type ListCallsFilter, MAX_LIMIT } from '../domain/call-list-filter.ts';
import type { CallViewRow } from '../domain/call-view.ts';
import type { TenantScope } from '../domain/tenant.ts';

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
 * $7 is the call id, a.organization_id and a.environment the key's scope. Comes back as JSON
 * (timestamps as strings), which toCallView reads like a row.
 */
export const callByIdPiggyback: Piggyback = {
  name: 'api_authenticate_get_call_v3',
  sql: `SELECT ${COLUMNS} FROM ${FROM}
         WHERE c.id = $7::uuid AND ${inScope('c', 'a.organization_id', 'a.environment')} AND c.erased_at IS NULL`,
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
 *
 * `org` and `env` are the SQL expressions of the scope (listCalls passes '$1', '$2'); the filters'
 * parameters are numbered from `first`. Page 1 uses a constant-capped subquery. Later pages find their
 * first call with OFFSET on the organization's index alone (an index-only scan: the skipped calls'
 * rows are never read), then read the page as one range scan of that index from there (with a phone
 * filter: a deferred join, the page's calls read by primary key).
 * Both caps are the constant MAX_LIMIT + 1 and only the outer LIMIT is a parameter, so every filter
 * combination's generic plan estimates one page of rows and PostgreSQL keeps it instead of planning
 * each request (with a LIMIT parameter it costed 10 % of the organization's calls). Why these shapes:
 * docs/benchmarks.md (REST API).
 */
export function listCallsStatement(
  f: ListCallsFilter,
  org: string,
  env: string,
  first: number,
): { shape: string; sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (value: unknown): string => {
    params.push(value);
    return `$${first + params.length - 1}`;
  };
  const where = [inScope('c', org, env), 'c.erased_at IS NULL'];
  let shape = '';
  if (f.from) {
    where.push(`c.created_at >= ${p(f.from)}::timestamptz`);
    shape += 'f';
  }
  if (f.to) {
    where.push(`c.created_at <= ${p(f.to)}::timestamptz`);
    shape += 't';
  }
  if (f.direction) {
    where.push(`c.direction = ${p(f.direction)}::text`);
    shape += 'd';
  }
  if (f.status) {
    where.push(`c.crm_status = ${p(f.status)}::text`);
    shape += 's';
  }
  if (f.phoneDigits) {
    // Trailing digits of the E.164 number = leading digits of its reversed digits: a prefix, asked as
    // the byte-wise range [prefix, prefix with its last digit + 1) — the operators of the
    // text_pattern_ops index — so a generic plan scans the phone index whatever the digits are
    // (a LIKE pattern is index-able only when known at planning time). Each bound is a scalar
    // subquery, unknown while planning even with the values at hand: a custom plan then costs what
    // the generic one does, so PostgreSQL settles on the generic plan instead of planning every
    // request (with plain parameters the custom plan's 1-row estimate always looked cheaper, and
    // planning cost 0.19 ms against 0.03 ms of running).
    const ors = f.phoneDigits.map((digits) => {
      const [from, below] = prefixRange(digits.split('').reverse().join(''));
      return `(c.customer_phone_rdigits ~>=~ (SELECT ${p(from)}::text) AND c.customer_phone_rdigits ~<~ (SELECT ${p(below)}::text))`;
    });
    where.push(`(${ors.join(' OR ')})`);
    shape += `p${ors.length}`;
  }
  const cond = where.join(' AND ');
  const cap = MAX_LIMIT + 1;
  // With a phone filter the matching calls are read first, then sorted: `OFFSET 0` keeps the
  // ORDER BY … LIMIT out of the scan, so no plan walks the organization's calls newest first
  // looking for the number (the custom plans of a new connection's first five executions did, for
  // the 200,000-call organization: 37–50 ms each instead of 0.2 ms). A customer's number matches a
  // handful of calls, which the phone index finds directly.
  const source = f.phoneDigits ? `(SELECT * FROM calls c WHERE ${cond} OFFSET 0) c` : `calls c WHERE ${cond}`;
  if (f.page === 1) {
    const calls = `SELECT ${CALL_COLUMNS} FROM ${source} ${NEWEST_FIRST} LIMIT ${cap}`;
    const sql = `SELECT ${COLUMNS} FROM (${calls}) c ${ANALYSIS_JOIN}
      ${NEWEST_FIRST} LIMIT ${p(f.limit + 1)}::int`;
    return { shape: `first_${shape}`, sql, params };
  }
  const offset = `(${p(f.page)}::bigint - 1) * ${p(f.limit)}::int`;
  if (f.phoneDigits) {
    // A handful of matching calls: read by primary key after the OFFSET (a deferred join).
    const keys = `SELECT c.id, c.created_at FROM ${source} ${NEWEST_FIRST} LIMIT ${cap} OFFSET ${offset}`;
    const sql = `SELECT ${COLUMNS} FROM (${keys}) k JOIN calls c ON c.id = k.id ${ANALYSIS_JOIN}
      ORDER BY k.created_at DESC, k.id DESC LIMIT ${p(f.limit + 1)}::int`;
    return { shape: `later_${shape}`, sql, params };
  }
  // The page's first call (its created_at, id) is found with OFFSET on the index alone (an
  // index-only scan: the skipped calls' rows are never read); the page is then one range scan of the
  // same index from that call on, reading only the page's rows — not one primary-key lookup per row
  // (4 buffers each). The OFFSET is a scalar subquery, unknown while planning even with the values at
  // hand, so a custom plan costs what the generic one does and PostgreSQL keeps the generic plan
  // (with the plain parameters it planned every request: 0.8 ms). Past the last call the first call
  // is missing and the page is empty, as with the OFFSET alone.
  const start = `SELECT c.created_at, c.id FROM ${source} ${NEWEST_FIRST} LIMIT 1 OFFSET (SELECT ${offset})`;
  const page = `SELECT ${CALL_COLUMNS} FROM ${source}
      AND (c.created_at, c.id) <= (s.created_at, s.id) ${NEWEST_FIRST} LIMIT ${cap}`;
  const sql = `SELECT ${COLUMNS} FROM (${start}) s CROSS JOIN LATERAL (${page}) c ${ANALYSIS_JOIN}
    ${NEWEST_FIRST} LIMIT ${p(f.limit + 1)}::int`;
  return { shape: `range_${shape}`, sql, params };
}

/** The page of limit + 1 rows read: at most limit rows, and whether more follow. */
export const pageOf = <R>(rows: R[], f: ListCallsFilter): { rows: R[]; hasMore: boolean } => {
  const hasMore = rows.length > f.limit;
  return { rows: hasMore ? rows.slice(0, f.limit) : rows, hasMore };
};

/** One page of the scope's calls (see listCallsStatement), in its own round trip. */
export async function listCalls(
  db: Queryable,
  scope: TenantScope,
  f: ListCallsFilter,
): Promise<{ rows: CallViewRow[]; hasMore: boolean }> {
  const { shape, sql, params } = listCallsStatement(f, '$1', '$2', 3);
  const { rows } = await db.query<CallViewRow>(sql, [...scopeParams(scope), ...params], {
    name: `api_list_calls_v6_${shape}`,
  });
  return pageOf(rows, f);
}

/** One call of the scope as the REST API shows it (POST /calls answers with it), or null. */
export async function getCallView(
  db: Queryable,
  scope: TenantScope,
  callId: string,
): Promise<CallViewRow | null> {
  const { rows } = await db.query<CallViewRow>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE c.id = $1::uuid AND ${inScope('c', 2, 3)} AND c.erased_at IS NULL`,
    [callId, ...scopeParams(scope)],
    { name: 'api_get_call_v2' },
  );
  return rows[0] ?? null;
}
