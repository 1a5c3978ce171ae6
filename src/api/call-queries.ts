import type { Queryable } from '../db/types.ts';
import type { CallViewRow } from '../domain/call-view.ts';
import type { Piggyback } from './auth-query.ts';
import type { ListCallsFilter } from './calls-params.ts';

/**
 * The read queries of the REST API. One statement each: calls LEFT JOIN call_analyses (no query per
 * row), always scoped to the key's organization, never showing erased calls (trashed and scheduled
 * ones are still readable). Only the allowlisted analysis keys leave the database.
 */
const COLUMNS = `c.id, c.direction, c.caller_phone, c.customer_phone_e164, c.customer_phone_national,
  c.company_phone_e164, c.caller_name, c.duration, c.crm_status, c.review_status, c.outbound_lifecycle,
  c.created_at, ca.call_id IS NOT NULL AS has_analysis, ca.analysis -> 'caller_name' AS tp_caller_name,
  ca.analysis -> 'summary' AS tp_summary, ca.analysis -> 'service_needed' AS tp_service_needed,
  ca.followup_email, ca.language AS analysis_language`;

const FROM = `calls c LEFT JOIN call_analyses ca ON ca.call_id = c.id AND ca.organization_id = c.organization_id`;

/**
 * One call by id, riding on the authentication round trip of GET /calls/{id} (auth-query.ts):
 * $7 is the call id, a.organization_id the key's organization. Comes back as JSON (timestamps as
 * strings), which toCallView reads like a row.
 */
export const callByIdPiggyback: Piggyback = {
  name: 'api_authenticate_get_call_v1',
  sql: `SELECT ${COLUMNS} FROM ${FROM}
         WHERE c.id = $7::uuid AND c.organization_id = a.organization_id AND c.erased_at IS NULL`,
};

/** LIKE pattern matching strings that start with `prefix`, wildcards in it escaped. */
export const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * One page, newest first; created_at DESC, id DESC is a total order, so pages never overlap or skip
 * when several calls share a created_at. Fetches limit + 1 rows so has_more is exact.
 */
export async function listCalls(
  db: Queryable,
  organizationId: string,
  f: ListCallsFilter,
): Promise<{ rows: CallViewRow[]; hasMore: boolean }> {
  const params: unknown[] = [organizationId];
  const where = ['c.organization_id = $1', 'c.erased_at IS NULL'];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (f.from) add((p) => `c.created_at >= ${p}::timestamptz`, f.from);
  if (f.to) add((p) => `c.created_at <= ${p}::timestamptz`, f.to);
  if (f.direction) add((p) => `c.direction = ${p}::text`, f.direction);
  if (f.status) add((p) => `c.crm_status = ${p}::text`, f.status);
  if (f.phoneDigits) {
    // Trailing digits of the E.164 number = leading digits of its reversed digits (indexed prefix scan).
    const ors = f.phoneDigits.map((digits) => {
      params.push(likePrefix(digits.split('').reverse().join('')));
      return `c.customer_phone_rdigits LIKE $${params.length}::text`;
    });
    where.push(`(${ors.join(' OR ')})`);
  }
  params.push(f.limit + 1, f.limit, f.page);
  const n = params.length;
  const { rows } = await db.query<CallViewRow>(
    `SELECT ${COLUMNS} FROM ${FROM}
      WHERE ${where.join(' AND ')}
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT $${n - 2}::int OFFSET ($${n}::bigint - 1) * $${n - 1}::int`,
    params,
  );
  const hasMore = rows.length > f.limit;
  return { rows: hasMore ? rows.slice(0, f.limit) : rows, hasMore };
}
