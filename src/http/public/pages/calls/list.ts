import type { FastifyPluginAsync } from 'fastify';
import { listCalls } from '../../../../capture/call-list.ts';
import type { Deps } from '../../../../deps.ts';
import type { CallViewRow } from '../../../../domain/call-view.ts';
import { normalizePhone } from '../../../../domain/phone.ts';
import { CRM_STATUSES, DIRECTIONS } from '../../../../domain/values.ts';
import { AppError } from '../../../../errors.ts';
import { type ListCallsFilter, readListCallsQuery } from '../../api-v1/calls-params.ts';
import { requireUser, scopeOf } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { formatDuration, Time, words } from '../kit/ui.ts';

/** Messages after an action elsewhere that ends on the list (?done=<key>). */
const DONE: Record<string, string> = { erased: 'The call was erased.' };

/** Calls per page of the list. */
export const PAGE_SIZE = 25;

/** The filters of the list page: the REST API's (GET /api/v1/calls), by the same names. */
const FILTERS = ['dateFrom', 'dateTo', 'direction', 'status', 'phone'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** The query string of the list page: its known filters, empty fields dropped (a form sends them all). */
function readFilters(url: string): { filters: Filters; page: number } {
  const q = url.indexOf('?');
  const search = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const filters: Filters = {};
  for (const name of FILTERS) {
    const v = search.get(name)?.trim();
    if (v) filters[name] = v.slice(0, 100);
  }
  const page = Number(search.get('page') ?? '1');
  return { filters, page: Number.isSafeInteger(page) && page >= 1 ? page : 1 };
}

const listHref = (filters: Filters, page: number): string => {
  const p = new URLSearchParams(filters as Record<string, string>);
  if (page > 1) p.set('page', String(page));
  const s = p.toString();
  return s ? `/app/calls?${s}` : '/app/calls';
};

/** The filter form: a GET form, so the filtered list has an address one can bookmark or share. */
function FilterForm({ filters }: { filters: Filters }): VNode {
  return html`<form method="get" action="/app/calls" class="filters" role="search" aria-label="Filter calls">
    <div>
      <label for="f-from">From (date)</label>
      <input type="date" id="f-from" name="dateFrom" value=${filters.dateFrom ?? ''} />
    </div>
    <div>
      <label for="f-to">To (date)</label>
      <input type="date" id="f-to" name="dateTo" value=${filters.dateTo ?? ''} />
    </div>
    <div>
      <label for="f-direction">Direction</label>
      <select id="f-direction" name="direction">
        <option value="">Any</option>
        ${DIRECTIONS.map((d) => html`<option value=${d} selected=${filters.direction === d}>${words(d)}</option>`)}
      </select>
    </div>
    <div>
      <label for="f-status">CRM status</label>
      <select id="f-status" name="status">
        <option value="">Any</option>
        ${CRM_STATUSES.map((s) => html`<option value=${s} selected=${filters.status === s}>${words(s)}</option>`)}
      </select>
    </div>
    <div>
      <label for="f-phone">Phone number</label>
      <input type="search" id="f-phone" name="phone" value=${filters.phone ?? ''} inputmode="tel"
        aria-describedby="f-phone-hint" />
      <small id="f-phone-hint" class="muted">Any spelling: +1 (415) 555-2671, 4155552671…</small>
    </div>
    <div class="actions">
      <button type="submit">Filter</button>
      <a href="/app/calls">Clear</a>
    </div>
  </form>`;
}

const customerOf = (r: CallViewRow): string =>
  r.caller_name ??
  (typeof r.tp_caller_name === 'string' ? r.tp_caller_name : null) ??
  r.customer_phone_national ??
  r.customer_phone_e164 ??
  'Unknown caller';

/** The organization's number the call went through, spelt like the customer's: (415) 555-0100. */
const companyNumber = (e164: string | null): string =>
  e164 === null ? '—' : (normalizePhone(e164)?.national ?? e164);

function CallsTable({ rows }: { rows: CallViewRow[] }): VNode {
  return html`<table class="calls">
    <caption class="muted">Newest first</caption>
    <thead>
      <tr>
        <th scope="col">When</th>
        <th scope="col">Customer</th>
        <th scope="col">Direction</th>
        <th scope="col">Number</th>
        <th scope="col">Duration</th>
        <th scope="col">CRM status</th>
        <th scope="col">Review</th>
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (r) => html`<tr>
          <td data-label="When"><a href=${`/app/calls/${r.id}`}><${Time} at=${r.created_at} /></a></td>
          <td data-label="Customer">${customerOf(r)}${
            r.customer_phone_e164 && customerOf(r) !== r.customer_phone_national
              ? html`<br /><span class="muted">${r.customer_phone_national ?? r.customer_phone_e164}</span>`
              : null
          }</td>
          <td data-label="Direction">${words(r.direction)}</td>
          <td data-label="Number">${companyNumber(r.company_phone_e164)}</td>
          <td data-label="Duration">${formatDuration(r.duration === null ? null : Number(r.duration))}</td>
          <td data-label="CRM status">${words(r.crm_status)}</td>
          <td data-label="Review">${r.review_status ? words(r.review_status) : '—'}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

/** What the list page asks for: its filters and page, the REST filter they make, or why they are refused. */
interface ListRequest {
  filters: Filters;
  page: number;
  filter: ListCallsFilter | null;
  notice: Notice | null;
}

function readListRequest(url: string): ListRequest {
  const { filters, page } = readFilters(url);
  try {
    const query = new URLSearchParams({ ...filters, page: String(page), limit: String(PAGE_SIZE) });
    return { filters, page, filter: readListCallsQuery(`/?${query}`), notice: null };
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'BAD_REQUEST') throw err;
    return { filters, page, filter: null, notice: { kind: 'error', text: refusalInWords(err) } };
  }
}

/** Why a filter is refused, in the words of the form (the REST message names query parameters). */
function refusalInWords(err: AppError): string {
  switch (err.param) {
    case 'dateFrom':
    case 'dateTo':
      return / is after /.test(err.message)
        ? '"From (date)" is after "To (date)". Pick a first day on or before the last one.'
        : `"${err.param === 'dateFrom' ? 'From' : 'To'} (date)" is not a day. Pick one such as 2026-06-15.`;
    case 'phone':
      return '"Phone number" needs at least 3 digits. Spaces, dashes, dots, brackets and a leading + are fine; letters are not.';
    case 'direction':
      return 'Choose a direction from the list.';
    case 'status':
      return 'Choose a CRM status from the list.';
    case 'page':
      return 'There is no such page of calls. Start again from the first page.';
    default:
      return 'These filters cannot be used. Clear them and try again.';
  }
}

/** GET /app/calls: the list (the REST API's filters, pages of PAGE_SIZE, newest first). */
export function callListPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/calls', async (req, reply) => {
      const user = requireUser(req);
      const { filters, page, filter, notice: refused } = readListRequest(req.url);
      const notice = refused ?? doneNotice(req, DONE);
      const result = filter ? await listCalls(deps.db, scopeOf(user), filter) : { rows: [], hasMore: false };
      const pager = html`<nav class="pager" aria-label="Pages">
        <span>${page > 1 ? html`<a href=${listHref(filters, page - 1)} rel="prev">Newer calls</a>` : null}</span>
        <span>Page ${page}</span>
        <span>${result.hasMore ? html`<a href=${listHref(filters, page + 1)} rel="next">Older calls</a>` : null}</span>
      </nav>`;
      return renderPage(reply, {
        title: 'Calls',
        user,
        nav: 'calls',
        status: notice?.kind === 'error' ? 400 : 200,
        notice,
        // The form is a page of its own (/app/calls/new, calls/new.ts): the list reads only the calls.
        body: html`<p class="new-call"><a href="/app/calls/new">New call</a></p>
          <${FilterForm} filters=${filters} />
          ${
            result.rows.length === 0
              ? html`<p>${Object.keys(filters).length > 0 ? 'No calls match these filters.' : 'No calls yet.'}</p>`
              : html`<${CallsTable} rows=${result.rows} />`
          }
          ${pager}`,
      });
    });
  };
}
