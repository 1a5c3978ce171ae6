import type { Queryable } from '../db/types.ts';
import { COUNT_CAP, type InboxCounts, type InboxQuery, reviewStatusOfView } from '../domain/inbox.ts';
import type { TenantScope } from '../domain/tenant.ts';
import { prefixRange } from './call-list.ts';

/**
 * The web app's lead inbox (/app/calls) as a read model: one statement for a page of calls — who
 * (the contact saved for the customer's number, else the caller's name), what (subject, service), how
 * hot (lead score), where it stands — and one for the count of every view. Scoped to the
 * organization; erased calls never show.
 *
 * Search (InboxQuery.words) is PostgreSQL full-text search (migration 0025): the analysis and
 * transcript of a call (call_analyses.search_vector, stemmed in the call's detected language, searched
 * through its copy calls.search_vector: migration 0030), the carrier's caller name, and the contacts (name, company, notes, e-mail) whose number is the call's;
 * a phone number in the box also matches the trailing digits of the customer's number. The matching
 * passage comes back as ts_headline with \u0002 … \u0003 around the matched words, for the page
 * to mark up (and escape) itself.
 */
export interface InboxRow {
  id: string;
  direction: 'inbound' | 'outbound';
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
  caller_name: string | null;
  crm_status: string;
  review_status: string | null;
  processing_state: string;
  recording_state: string;
  outbound_lifecycle: string | null;
  duration: number | null;
  trashed: boolean;
  created_at: Date;
  contact_name: string | null;
  contact_company: string | null;
  analysis_caller_name: string | null;
  subject: string | null;
  service_needed: string | null;
  lead_score: number | null;
  /** the passage that matched the search, \u0002…\u0003 around each matched word; null without a search */
  passage: string | null;
}

/** Marks of a matched word in InboxRow.passage (control characters: no transcript holds them). */
export const MATCH_START = '\u0002';
export const MATCH_END = '\u0003';

interface Conditions {
  /** the WHERE of calls c, without the view's review status */
  where: string[];
  params: unknown[];
  /** when searching: the statement of the matching calls' narrow rows (`matched`), else null */
  matched: string | null;
  /** the parameter of the search words, for ts_headline */
  wordsParam: string | null;
}

/** The expression of calls_caller_name_search_idx (migration 0025), for the index to be used. */
const NAME_VECTOR = `(to_tsvector('simple', coalesce(c.caller_name, '')) || call_search_org(c.organization_id))`;
const CONTACT_TEXT = `concat_ws(' ', k.first_name, k.last_name, k.company, k.notes, k.email)`;
/** What a search reads of each matching call: for the counts (review status) and the sorts. */
const MATCHED_COLUMNS = 'c.id, c.organization_id, c.review_status, c.created_at, c.lead_score';

function conditions(scope: TenantScope, q: InboxQuery): Conditions {
  const params: unknown[] = [scope.organizationId, scope.environment];
  const p = (v: unknown): string => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = ['c.organization_id = $1', 'c.environment = $2', 'c.erased_at IS NULL'];
  if (q.from) where.push(`c.created_at >= ${p(q.from)}::timestamptz`);
  if (q.to) where.push(`c.created_at <= ${p(q.to)}::timestamptz`);
  if (q.direction) where.push(`c.direction = ${p(q.direction)}::text`);
  if (q.status) where.push(`c.crm_status = ${p(q.status)}::text`);
  const all = where.join(' AND ');
  // Each way a call matches reads the matching calls' narrow rows directly (an index each), the
  // filters applied: no second read of a match by primary key.
  const parts: string[] = [];
  let wordsParam: string | null = null;
  if (q.words) {
    wordsParam = p(q.words);
    // The words AND the organization's lexeme: the GIN indexes find this organization's matches only.
    const tsq = `call_search_query(${wordsParam}::text, $1::uuid)`;
    parts.push(
      // the analysis and transcript (calls.search_vector, a copy of the analysis', migration 0030)
      `SELECT ${MATCHED_COLUMNS} FROM calls c WHERE ${all} AND c.search_vector @@ ${tsq}`,
      `SELECT ${MATCHED_COLUMNS} FROM calls c WHERE ${all} AND c.caller_name IS NOT NULL AND ${NAME_VECTOR} @@ ${tsq}`,
      `SELECT ${MATCHED_COLUMNS} FROM contacts k JOIN calls c ON c.organization_id = k.organization_id
         AND c.environment = k.environment
         AND c.customer_phone_rdigits = reverse(regexp_replace(k.phone_e164, '[^0-9]', '', 'g'))
        WHERE ${all} AND k.organization_id = $1 AND k.environment = $2 AND k.phone_e164 IS NOT NULL
          AND to_tsvector('simple', ${CONTACT_TEXT}) @@ call_search_query(${wordsParam}::text)`,
    );
  }
  for (const digits of q.phoneDigits ?? []) {
    const [from, below] = prefixRange(digits.split('').reverse().join(''));
    parts.push(`SELECT ${MATCHED_COLUMNS} FROM calls c WHERE ${all}
      AND c.customer_phone_rdigits ~>=~ ${p(from)}::text AND c.customer_phone_rdigits ~<~ ${p(below)}::text`);
  }
  const matched = parts.length > 0 ? parts.join(' UNION ') : null;
  return { where, params, matched, wordsParam };
}

const ORDER: Record<InboxQuery['sort'], string> = {
  newest: 'c.created_at DESC, c.id DESC',
  oldest: 'c.created_at ASC, c.id ASC',
  // calls.lead_score (the analysis', migration 0030): calls_org_score_created_idx walks it
  score: 'c.lead_score DESC NULLS LAST, c.created_at DESC, c.id DESC',
};

/**
 * One page of the inbox (limit + 1 rows read, so hasMore is exact) and the count of every view (the
 * filters and search applied, the view not), in ONE statement: the search's matches (`matched`) are
 * found once for both.
 */
export async function readInbox(
  db: Queryable,
  scope: TenantScope,
  q: InboxQuery,
): Promise<{ rows: InboxRow[]; hasMore: boolean; counts: InboxCounts }> {
  const { where, params, matched, wordsParam } = conditions(scope, q);
  const all = where.join(' AND ');
  const review = reviewStatusOfView(q.view);
  const pageWhere = [...where];
  if (review) {
    params.push(review);
    pageWhere.push(`c.review_status = $${params.length}::text`);
  }
  params.push(q.limit + 1, (q.page - 1) * q.limit);
  const [limit, offset] = [`$${params.length - 1}::int`, `$${params.length}::bigint`];
  const order = ORDER[q.sort];
  // Every sort finds the page on a calls index (the lead score is calls.lead_score) and reads the
  // page's analyses by primary key. With a search the page comes from `matched` (its view condition
  // only; the rest was applied there): its narrow rows sorted, then the page's calls by primary key.
  const cond = matched ? (review ? [pageWhere[pageWhere.length - 1]] : ['true']) : pageWhere;
  const inner = matched
    ? `SELECT c.* FROM (SELECT c.id, c.created_at, c.lead_score FROM matched c WHERE ${cond.join(' AND ')}
         ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}) p
         JOIN calls c ON c.id = p.id`
    : `SELECT c.* FROM calls c WHERE ${cond.join(' AND ')} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`;
  const passage = wordsParam
    ? `CASE WHEN ca.search_vector @@ call_search_query(${wordsParam}::text) THEN ts_headline(call_search_config(ca.language),
         call_search_text(ca.analysis, ca.transcript_original), call_search_query(${wordsParam}::text),
         'StartSel=${MATCH_START}, StopSel=${MATCH_END}, MaxWords=24, MinWords=10, MaxFragments=1') END`
    : 'NULL::text';
  // Without a search each count stops at COUNT_CAP + 1 calls (an index range each): an inbox says
  // "1,000+", and a count never costs more than that, however many calls the organization has. With
  // a search, the matching calls are read once (`matched`) and counted and paged from there.
  const capped = (cond: string) =>
    `(SELECT count(*) FROM (SELECT 1 FROM calls c WHERE ${all}${cond} LIMIT ${COUNT_CAP + 1}) x)`;
  const countsSql = matched
    ? `SELECT count(*) FILTER (WHERE c.review_status = 'needs_review') AS n_needs_review,
              count(*) FILTER (WHERE c.review_status = 'needs_decision') AS n_needs_decision,
              count(*) FILTER (WHERE c.review_status = 'new') AS n_new, count(*) AS n_all
         FROM matched c`
    : `SELECT ${capped(" AND c.review_status = 'needs_review'")} AS n_needs_review,
              ${capped(" AND c.review_status = 'needs_decision'")} AS n_needs_decision,
              ${capped(" AND c.review_status = 'new'")} AS n_new, ${capped('')} AS n_all`;
  const sql = `${matched ? `WITH matched AS MATERIALIZED (${matched}),` : 'WITH'}
    counts AS (${countsSql}
    ), page AS (
    SELECT row_number() OVER (ORDER BY ${order}) AS rn,
           c.id, c.direction, c.customer_phone_e164, c.customer_phone_national, c.caller_name, c.crm_status,
           c.review_status, c.processing_state, c.recording_state, c.outbound_lifecycle, c.duration,
           c.trashed_at IS NOT NULL AS trashed, c.created_at,
           nullif(concat_ws(' ', k.first_name, k.last_name), '') AS contact_name, k.company AS contact_company,
           ca.analysis ->> 'caller_name' AS analysis_caller_name, ca.analysis ->> 'subject' AS subject,
           ca.analysis ->> 'service_needed' AS service_needed, (ca.analysis ->> 'lead_score')::numeric AS lead_score,
           ${passage} AS passage
      FROM (${inner}) c
      LEFT JOIN LATERAL (
        SELECT analysis, language, transcript_original, search_vector FROM call_analyses
         WHERE call_id = c.id AND organization_id = c.organization_id OFFSET 0
      ) ca ON true
      LEFT JOIN LATERAL (
        SELECT first_name, last_name, company FROM contacts
         WHERE organization_id = c.organization_id AND environment = c.environment
           AND phone_e164 = c.customer_phone_e164
         ORDER BY created_at, id LIMIT 1
      ) k ON true
    )
    SELECT counts.*, page.* FROM counts LEFT JOIN page ON true ORDER BY page.rn`;
  const { rows } = await db.query<
    InboxRow &
      Record<'n_needs_review' | 'n_needs_decision' | 'n_new' | 'n_all', string> & { rn: string | null }
  >(sql, params);
  const head = rows[0]!;
  const counts: InboxCounts = {
    needs_review: Number(head.n_needs_review),
    needs_decision: Number(head.n_needs_decision),
    new: Number(head.n_new),
    all: Number(head.n_all),
  };
  const found = rows.filter((r) => r.rn !== null);
  const hasMore = found.length > q.limit;
  const page = hasMore ? found.slice(0, q.limit) : found;
  return {
    counts,
    hasMore,
    rows: page.map((r) => ({
      id: r.id,
      direction: r.direction,
      customer_phone_e164: r.customer_phone_e164,
      customer_phone_national: r.customer_phone_national,
      caller_name: r.caller_name,
      crm_status: r.crm_status,
      review_status: r.review_status,
      processing_state: r.processing_state,
      recording_state: r.recording_state,
      outbound_lifecycle: r.outbound_lifecycle,
      trashed: r.trashed,
      created_at: r.created_at,
      contact_name: r.contact_name,
      contact_company: r.contact_company,
      analysis_caller_name: r.analysis_caller_name,
      subject: r.subject,
      service_needed: r.service_needed,
      passage: r.passage,
      duration: r.duration === null ? null : Number(r.duration),
      lead_score: r.lead_score === null ? null : Number(r.lead_score),
    })),
  };
}
