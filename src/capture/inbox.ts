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
 * transcript of a call (call_analyses.search_vector, stemmed in the call's detected language), the
 * carrier's caller name, and the contacts (name, company, notes, e-mail) whose number is the call's;
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
  /** the CTE `hits (id)` when searching, else '' */
  hits: string;
  /** the parameter of the search words, for ts_headline */
  wordsParam: string | null;
}

/** The expression of calls_caller_name_search_idx (migration 0025), for the index to be used. */
const NAME_VECTOR = `(to_tsvector('simple', coalesce(n.caller_name, '')) || call_search_org(n.organization_id))`;
const CONTACT_TEXT = `concat_ws(' ', k.first_name, k.last_name, k.company, k.notes, k.email)`;

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
  const parts: string[] = [];
  let wordsParam: string | null = null;
  if (q.words) {
    wordsParam = p(q.words);
    // The words AND the organization's lexeme: the GIN indexes find this organization's matches only.
    const tsq = `call_search_query(${wordsParam}::text, $1::uuid)`;
    parts.push(
      `SELECT ca.call_id AS id FROM call_analyses ca WHERE ca.organization_id = $1 AND ca.search_vector @@ ${tsq}`,
      `SELECT n.id FROM calls n WHERE n.organization_id = $1 AND n.erased_at IS NULL AND n.caller_name IS NOT NULL
         AND ${NAME_VECTOR} @@ ${tsq}`,
      `SELECT m.id FROM contacts k JOIN calls m ON m.organization_id = k.organization_id AND m.environment = k.environment
         AND m.erased_at IS NULL
         AND m.customer_phone_rdigits = reverse(regexp_replace(k.phone_e164, '[^0-9]', '', 'g'))
        WHERE k.organization_id = $1 AND k.environment = $2 AND k.phone_e164 IS NOT NULL
          AND to_tsvector('simple', ${CONTACT_TEXT}) @@ call_search_query(${wordsParam}::text)`,
    );
  }
  for (const digits of q.phoneDigits ?? []) {
    const [from, below] = prefixRange(digits.split('').reverse().join(''));
    parts.push(`SELECT d.id FROM calls d WHERE d.organization_id = $1 AND d.erased_at IS NULL
      AND d.customer_phone_rdigits ~>=~ ${p(from)}::text AND d.customer_phone_rdigits ~<~ ${p(below)}::text`);
  }
  const hits = parts.length > 0 ? `WITH hits AS (${parts.join(' UNION ')})` : '';
  if (hits) where.push('c.id IN (SELECT id FROM hits)');
  return { where, params, hits, wordsParam };
}

const ORDER: Record<InboxQuery['sort'], { inner: string; outer: string }> = {
  newest: { inner: 'c.created_at DESC, c.id DESC', outer: 'c.created_at DESC, c.id DESC' },
  oldest: { inner: 'c.created_at ASC, c.id ASC', outer: 'c.created_at ASC, c.id ASC' },
  score: {
    inner: 'sort_score DESC NULLS LAST, c.created_at DESC, c.id DESC',
    outer: 'c.sort_score DESC NULLS LAST, c.created_at DESC, c.id DESC',
  },
};

/**
 * One page of the inbox (limit + 1 rows read, so hasMore is exact) and the count of every view (the
 * filters and search applied, the view not), in ONE statement: the search's matches (`hits`) are found
 * once for both.
 */
export async function readInbox(
  db: Queryable,
  scope: TenantScope,
  q: InboxQuery,
): Promise<{ rows: InboxRow[]; hasMore: boolean; counts: InboxCounts }> {
  const { where, params, hits, wordsParam } = conditions(scope, q);
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
  // The lead score sort reads each candidate's analysis; the others find the page on the calls
  // indexes alone and read the page's analyses by primary key.
  // With a search the page comes from `matched` (its view condition only; the rest was applied there).
  const cond = hits ? (review ? [pageWhere[pageWhere.length - 1]] : ['true']) : pageWhere;
  const scored = (from: string, cols: string) =>
    q.sort === 'score'
      ? `SELECT ${cols}, (sa.analysis ->> 'lead_score')::numeric AS sort_score FROM ${from}
           LEFT JOIN call_analyses sa ON sa.call_id = c.id AND sa.organization_id = c.organization_id
          WHERE ${cond.join(' AND ')} ORDER BY ${order.inner} LIMIT ${limit} OFFSET ${offset}`
      : `SELECT ${cols} FROM ${from} WHERE ${cond.join(' AND ')} ORDER BY ${order.inner} LIMIT ${limit} OFFSET ${offset}`;
  // A search sorts its matches' narrow rows (`matched`), then reads the page's calls by primary key.
  const inner = hits
    ? `SELECT c.*${q.sort === 'score' ? ', p.sort_score' : ''} FROM (${scored('matched c', q.sort === 'score' ? 'c.id' : 'c.id, c.created_at')}) p
         JOIN calls c ON c.id = p.id`
    : scored('calls c', 'c.*');
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
  const countsSql = hits
    ? `SELECT count(*) FILTER (WHERE c.review_status = 'needs_review') AS n_needs_review,
              count(*) FILTER (WHERE c.review_status = 'needs_decision') AS n_needs_decision,
              count(*) FILTER (WHERE c.review_status = 'new') AS n_new, count(*) AS n_all
         FROM matched c`
    : `SELECT ${capped(" AND c.review_status = 'needs_review'")} AS n_needs_review,
              ${capped(" AND c.review_status = 'needs_decision'")} AS n_needs_decision,
              ${capped(" AND c.review_status = 'new'")} AS n_new, ${capped('')} AS n_all`;
  const sql = `${
    hits
      ? `${hits}, matched AS MATERIALIZED (
      SELECT c.id, c.organization_id, c.review_status, c.created_at FROM calls c WHERE ${all}),`
      : 'WITH'
  }
    counts AS (${countsSql}
    ), page AS (
    SELECT row_number() OVER (ORDER BY ${order.outer}) AS rn,
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
