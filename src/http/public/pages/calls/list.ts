import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { type InboxRow, readInbox } from '../../../../capture/inbox.ts';
import type { Deps } from '../../../../deps.ts';
import {
  countInWords,
  INBOX_SORTS,
  INBOX_VIEWS,
  type InboxCounts,
  type InboxQuery,
  type InboxSort,
  type InboxView,
  SEARCH_MAX_LENGTH,
} from '../../../../domain/inbox.ts';
import { phoneFilterDigits } from '../../../../domain/phone.ts';
import { CRM_STATUSES, DIRECTIONS } from '../../../../domain/values.ts';
import { AppError } from '../../../../errors.ts';
import { readListCallsQuery } from '../../api-v1/calls-params.ts';
import { type PageUser, requireUser, scopeOf } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { Time, words } from '../kit/ui.ts';
import {
  type BulkState,
  nationalNumber,
  Passage,
  processingInWords,
  Score,
  StatusForm,
  whoOf,
} from './lead-parts.ts';

/**
 * GET /app/calls: the lead inbox. Each row says who called (contact, caller name, number), about what
 * (subject, service), how hot (lead score) and where it stands (processing, review, CRM status); views
 * by review status with their counts; a search box (full-text over transcripts, summaries, names,
 * companies and notes, and phone numbers in any spelling) combined with the filters; sorting; a
 * quick-action form on each row and a bulk form for the selected rows (both post to bulk.ts, which
 * comes back here with the same address). Keys (assets/inbox.js): j/k move between rows, x selects,
 * / goes to the search box.
 */

/** Messages after an action that ends on the list (?done=<key>). */
export const DONE: Record<string, string> = {
  erased: 'The call was erased.',
  changed: 'Saved: the calls you chose have their new status.',
  unchanged: 'Nothing to change: the calls you chose already had that status.',
};

/** Calls per page of the inbox. */
export const PAGE_SIZE = 25;

const VIEW_LABELS: Record<InboxView, string> = {
  needs_review: 'Needs review',
  needs_decision: 'Needs decision',
  new: 'New',
  all: 'All calls',
};
const SORT_LABELS: Record<InboxSort, string> = {
  newest: 'Newest first',
  oldest: 'Oldest first',
  score: 'Lead score, highest first',
};

/** The query-string fields of the inbox; `phone` is an older address's name for the search box. */
const FIELDS = ['q', 'dateFrom', 'dateTo', 'direction', 'status', 'sort', 'view'] as const;
type Fields = Partial<Record<(typeof FIELDS)[number], string>>;

function readFields(url: string): { fields: Fields; page: number } {
  const i = url.indexOf('?');
  const search = new URLSearchParams(i < 0 ? '' : url.slice(i + 1));
  const fields: Fields = {};
  for (const name of FIELDS) {
    const v = search.get(name)?.trim();
    if (v) fields[name] = v.slice(0, name === 'q' ? SEARCH_MAX_LENGTH : 100);
  }
  const phone = search.get('phone')?.trim();
  if (!fields.q && phone) fields.q = phone.slice(0, SEARCH_MAX_LENGTH);
  const page = Number(search.get('page') ?? '1');
  return { fields, page: Number.isSafeInteger(page) && page >= 1 ? page : 1 };
}

/** The inbox's address with these fields (and page), for links, the views and coming back after a post. */
export const inboxHref = (fields: Fields, page = 1): string => {
  const p = new URLSearchParams();
  for (const name of FIELDS) if (fields[name]) p.set(name, fields[name] as string);
  if (page > 1) p.set('page', String(page));
  const s = p.toString();
  return s ? `/app/calls?${s}` : '/app/calls';
};

/** A refused field: its name in the form and the sentence shown beside it. */
interface Refusal {
  field: 'f-from' | 'f-to' | 'f-direction' | 'f-status';
  text: string;
}

function readInboxRequest(url: string): {
  fields: Fields;
  page: number;
  query: InboxQuery | null;
  refusal: Refusal | null;
} {
  const { fields, page } = readFields(url);
  const view = (INBOX_VIEWS as readonly string[]).includes(fields.view ?? '')
    ? (fields.view as InboxView)
    : 'all';
  const sort = (INBOX_SORTS as readonly string[]).includes(fields.sort ?? '')
    ? (fields.sort as InboxSort)
    : 'newest';
  try {
    const rest: Record<string, string> = { page: String(page), limit: String(PAGE_SIZE) };
    for (const name of ['dateFrom', 'dateTo', 'direction', 'status'] as const)
      if (fields[name]) rest[name] = fields[name];
    const f = readListCallsQuery(`/?${new URLSearchParams(rest)}`);
    const words = fields.q ?? null;
    const phone = words ? phoneFilterDigits(words) : null;
    return {
      fields,
      page,
      refusal: null,
      query: {
        view,
        sort,
        page: f.page,
        limit: f.limit,
        from: f.from,
        to: f.to,
        direction: f.direction,
        status: f.status,
        words,
        phoneDigits: phone?.ok ? phone.digits : null,
      },
    };
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'BAD_REQUEST') throw err;
    return { fields, page, query: null, refusal: refusalInWords(err) };
  }
}

/** Why a filter is refused, in the words of the form, and the field it is shown on. */
function refusalInWords(err: AppError): Refusal {
  switch (err.param) {
    case 'dateFrom':
    case 'dateTo':
      return / is after /.test(err.message)
        ? {
            field: 'f-from',
            text: '"From (date)" is after "To (date)". Pick a first day on or before the last one.',
          }
        : {
            field: err.param === 'dateFrom' ? 'f-from' : 'f-to',
            text: `"${err.param === 'dateFrom' ? 'From' : 'To'} (date)" is not a day. Pick one such as 2026-06-15.`,
          };
    case 'direction':
      return { field: 'f-direction', text: 'Choose a direction from the list.' };
    case 'status':
      return { field: 'f-status', text: 'Choose a CRM status from the list.' };
    default:
      return { field: 'f-from', text: 'These filters cannot be used. Clear them and try again.' };
  }
}

/** An input's error marks: aria-invalid and the id of the sentence that says why. */
const invalid = (id: Refusal['field'], r: Refusal | null) =>
  r?.field === id ? { 'aria-invalid': 'true', 'aria-describedby': `${id}-error` } : {};
const ErrorText = ({ id, r }: { id: Refusal['field']; r: Refusal | null }) =>
  r?.field === id ? html`<small id=${`${id}-error`} class="field-error">${r.text}</small>` : null;

/** The search box and the filters: a GET form, so a search has an address one can bookmark or share. */
function SearchForm({ fields, refusal }: { fields: Fields; refusal: Refusal | null }): VNode {
  return html`<form method="get" action="/app/calls" class="filters" role="search" aria-label="Search calls">
    ${fields.view ? html`<input type="hidden" name="view" value=${fields.view} />` : null}
    <div class="search">
      <label for="f-q">Search</label>
      <input type="search" id="f-q" name="q" value=${fields.q ?? ''} maxlength=${SEARCH_MAX_LENGTH}
        aria-describedby="f-q-hint" aria-keyshortcuts="/" />
      <small id="f-q-hint" class="muted">Words said in the call, a name, a company, a note, or a number in any spelling</small>
    </div>
    <div>
      <label for="f-from">From (date)</label>
      <input type="date" id="f-from" name="dateFrom" value=${fields.dateFrom ?? ''} ...${invalid('f-from', refusal)} />
      <${ErrorText} id="f-from" r=${refusal} />
    </div>
    <div>
      <label for="f-to">To (date)</label>
      <input type="date" id="f-to" name="dateTo" value=${fields.dateTo ?? ''} ...${invalid('f-to', refusal)} />
      <${ErrorText} id="f-to" r=${refusal} />
    </div>
    <div>
      <label for="f-direction">Direction</label>
      <select id="f-direction" name="direction" ...${invalid('f-direction', refusal)}>
        <option value="">Any</option>
        ${DIRECTIONS.map((d) => html`<option value=${d} selected=${fields.direction === d}>${words(d)}</option>`)}
      </select>
      <${ErrorText} id="f-direction" r=${refusal} />
    </div>
    <div>
      <label for="f-status">CRM status</label>
      <select id="f-status" name="status" ...${invalid('f-status', refusal)}>
        <option value="">Any</option>
        ${CRM_STATUSES.map((s) => html`<option value=${s} selected=${fields.status === s}>${words(s)}</option>`)}
      </select>
      <${ErrorText} id="f-status" r=${refusal} />
    </div>
    <div>
      <label for="f-sort">Sort</label>
      <select id="f-sort" name="sort">
        ${INBOX_SORTS.map((s) => html`<option value=${s} selected=${(fields.sort ?? 'newest') === s}>${SORT_LABELS[s]}</option>`)}
      </select>
    </div>
    <div class="actions">
      <button type="submit">Search</button>
      <a href=${inboxHref({ view: fields.view })}>Clear</a>
    </div>
  </form>`;
}

function Views({ fields, counts }: { fields: Fields; counts: InboxCounts | null }): VNode {
  const current =
    fields.view && (INBOX_VIEWS as readonly string[]).includes(fields.view) ? fields.view : 'all';
  return html`<nav class="views" aria-label="Views">
    <ul>
      ${INBOX_VIEWS.map(
        (v) => html`<li>
          <a href=${inboxHref({ ...fields, view: v === 'all' ? undefined : v })} aria-current=${v === current ? 'page' : undefined}>
            ${VIEW_LABELS[v]} <span class="count">${counts ? countInWords(counts[v]) : '—'}</span>
          </a>
        </li>`,
      )}
    </ul>
  </nav>`;
}

function Row({
  r,
  user,
  back,
  bulk,
  first,
}: {
  r: InboxRow;
  user: PageUser;
  back: string;
  bulk: BulkState | null;
  first: boolean;
}): VNode {
  const who = whoOf(r);
  const number = nationalNumber(r);
  const what = r.subject ?? r.service_needed;
  // "Select the calls to change": every box marked, the focus on the first.
  const pickErr =
    bulk?.err?.field === 'ids'
      ? { 'aria-invalid': 'true', 'aria-describedby': 'ids-error', autofocus: first }
      : {};
  return html`<tr data-row>
    <td class="pick"><input type="checkbox" name="ids" value=${r.id} form="bulk" aria-label=${`Select the call with ${who}`}
      checked=${bulk?.ids.has(r.id) ?? false} ...${pickErr} /></td>
    <td data-label="Who">
      <a href=${`/app/calls/${r.id}`} class="who">${who}</a>
      ${r.contact_company ? html`<br /><span class="muted">${r.contact_company}</span>` : null}
      <br /><span class="muted">${number && number !== who ? html`${number} · ` : null}${r.direction === 'inbound' ? 'In' : 'Out'} · <${Time} at=${r.created_at} /></span>
    </td>
    <td data-label="What">
      ${what ?? html`<span class="muted">—</span>`}
      ${r.subject && r.service_needed ? html`<br /><span class="muted">${r.service_needed}</span>` : null}
      <${Passage} text=${r.passage} />
    </td>
    <td data-label="Lead score"><${Score} score=${r.lead_score} /></td>
    <td data-label="Where it stands">
      ${processingInWords(r)}${r.trashed ? ' · In trash' : ''}
      <br /><span class="muted">Review: ${r.review_status ? words(r.review_status) : 'none'} · CRM: ${words(r.crm_status)}</span>
    </td>
    <td data-label="Quick actions"><${StatusForm} user=${user} back=${back}
      row=${{ id: r.id, crm_status: r.crm_status, review_status: r.review_status, who }} /></td>
  </tr>`;
}

function Inbox(p: {
  rows: InboxRow[];
  user: PageUser;
  back: string;
  sort: InboxSort;
  bulk: BulkState | null;
}): VNode {
  return html`<${StatusForm} user=${p.user} back=${p.back} id="bulk" bulk=${p.bulk} />
    <table class="calls inbox">
      <caption class="sr-only">Calls, ${SORT_LABELS[p.sort].toLowerCase()}</caption>
      <thead>
        <tr>
          <th scope="col"><span class="sr-only">Selected</span></th>
          <th scope="col">Who</th>
          <th scope="col">What</th>
          <th scope="col">Lead score</th>
          <th scope="col">Where it stands</th>
          <th scope="col">Quick actions</th>
        </tr>
      </thead>
      <tbody>
        ${p.rows.map((r, i) => html`<${Row} r=${r} user=${p.user} back=${p.back} bulk=${p.bulk} first=${i === 0} />`)}
      </tbody>
    </table>`;
}

/**
 * The inbox at `url` (an /app/calls address): for GET /app/calls, and for a refused bulk form
 * (bulk.ts), shown again at the address it came from with `bulk`'s error on its field.
 */
export async function renderInbox(
  deps: Deps,
  reply: FastifyReply,
  user: PageUser,
  url: string,
  x: { notice?: Notice | null; status?: number; bulk?: BulkState } = {},
): Promise<FastifyReply> {
  const { fields, page, query, refusal } = readInboxRequest(url);
  const notice: Notice | null = refusal ? { kind: 'error', text: refusal.text } : (x.notice ?? null);
  const bulk = x.bulk ?? null;
  const result = query ? await readInbox(deps.db, scopeOf(user), query) : null;
  const counts = result?.counts ?? null;
  const rows = result?.rows ?? [];
  const back = inboxHref(fields, page);
  const total = counts && query ? counts[query.view] : 0;
  const first = (page - 1) * PAGE_SIZE + 1;
  const pager = html`<nav class="pager" aria-label="Pages">
        <span>${page > 1 ? html`<a href=${inboxHref(fields, page - 1)} rel="prev">Previous page</a>` : null}</span>
        <span>Page ${page}</span>
        <span>${result?.hasMore ? html`<a href=${inboxHref(fields, page + 1)} rel="next">Next page</a>` : null}</span>
      </nav>`;
  const searching = Boolean(
    fields.q || fields.dateFrom || fields.dateTo || fields.direction || fields.status,
  );
  return renderPage(reply, {
    title: 'Calls',
    user,
    nav: 'calls',
    status: refusal ? 400 : (x.status ?? 200),
    notice,
    body: html`<p class="new-call"><a href="/app/calls/new">New call</a> · <a href="/app/calls/board">Pipeline board</a></p>
          <${SearchForm} fields=${fields} refusal=${refusal} />
          <${Views} fields=${fields} counts=${counts} />
          <p class="total" id="total">${
            rows.length === 0
              ? searching
                ? 'No calls match this search.'
                : 'No calls here yet.'
              : `${first.toLocaleString('en-US')}–${(first + rows.length - 1).toLocaleString('en-US')} of ${countInWords(total)} ${total === 1 ? 'call' : 'calls'}`
          }</p>
          ${
            rows.length > 0
              ? html`<${Inbox} rows=${rows} user=${user} back=${back} sort=${query?.sort ?? 'newest'} bulk=${bulk} />
                <p class="muted keys">Keys: <kbd>j</kbd>/<kbd>k</kbd> next and previous call, <kbd>x</kbd> select it, <kbd>/</kbd> search.</p>`
              : null
          }
          ${pager}`,
  });
}

/** GET /app/calls: the inbox. */
export function callListPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/calls', async (req, reply) =>
      renderInbox(deps, reply, requireUser(req), req.url, { notice: doneNotice(req, DONE) }),
    );
  };
}
