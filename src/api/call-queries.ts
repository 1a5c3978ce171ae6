import type { Queryable } from '../db/types.ts';
import type { CallViewRow } from '../domain/call-view.ts';
import type { ListCallsFilter } from './calls-params.ts';

/**
 * The two read queries of the REST API. One statement each: calls LEFT JOIN call_analyses (no query
 * per row), always scoped to the key's organization, never showing erased calls. Only the
 * allowlisted analysis keys leave the database.
 */
const COLUMNS = `c.id, c.direction, c.caller_phone, c.customer_phone_e164, c.customer_phone_national,
  c.company_phone_e164, c.caller_name, c.duration, c.crm_status, c.review_status, c.outbound_lifecycle,
  c.created_at, a.call_id IS NOT NULL AS has_analysis, a.analysis -> 'caller_name' AS tp_caller_name,
  a.analysis -> 'summary' AS tp_summary, a.analysis -> 'service_needed' AS tp_service_needed,
  a.followup_email, a.language AS analysis_language`;

const FROM = `calls c LEFT JOIN call_analyses a ON a.call_id = c.id AND a.organization_id = c.organization_id`;

/** A call of this organization that is not erased (trashed and scheduled calls are still readable). */
export async function findCall(db: Queryable, organizationId: string, callId: string): Promise<CallViewRow | null> {
  const { rows } = await db.query<CallViewRow>(
    `SELECT ${COLUMNS} FROM ${FROM}
      WHERE c.id = $1 AND c.organization_id = $2 AND c.erased_at IS NULL`,
    [callId, organizationId],
    { name: 'api_find_call_v1' },
  );
  return rows[0] ?? null;
}

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
