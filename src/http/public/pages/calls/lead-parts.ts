import { MATCH_END, MATCH_START } from '../../../../capture/inbox.ts';
import { normalizePhone } from '../../../../domain/phone.ts';
import { CRM_STATUSES, REVIEW_STATUSES } from '../../../../domain/values.ts';
import { ErrorText, type FieldError, fieldAttrs } from '../kit/field-errors.ts';
import type { PageUser } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { CsrfField, words } from '../kit/ui.ts';

/** What the inbox (list.ts) and the board (board.ts) show of a call the same way. */

/** The columns both read models give for the "who" of a call. */
export interface Who {
  contact_name: string | null;
  caller_name: string | null;
  analysis_caller_name: string | null;
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
}

/** The customer's number spelt nationally: (415) 555-0199; null when the call has none. */
export const nationalNumber = (w: Who): string | null =>
  w.customer_phone_national ??
  (w.customer_phone_e164 ? (normalizePhone(w.customer_phone_e164)?.national ?? w.customer_phone_e164) : null);

/** Who the call was with: the contact saved for the number, the caller's name, else the number. */
export const whoOf = (w: Who): string =>
  w.contact_name ?? w.caller_name ?? w.analysis_caller_name ?? nationalNumber(w) ?? 'Unknown number';

/** A lead score as the pages show it: "8/10" with its words for a screen reader, or "—". */
export const Score = ({ score }: { score: number | null }): VNode =>
  score === null
    ? html`<span class="muted">—</span>`
    : html`<span class=${`score s${score >= 7 ? 'hot' : score >= 4 ? 'warm' : 'cold'}`}
        title=${`Lead score ${score} out of 10`}><span aria-hidden="true">${score}/10</span><span class="sr-only">Lead score ${score} out of 10</span></span>`;

/** Where a call's processing stands, in words. */
export function processingInWords(r: {
  processing_state: string;
  recording_state: string;
  outbound_lifecycle: string | null;
  direction: string;
}): string {
  if (r.outbound_lifecycle === 'customer_no_answer') return 'Not answered';
  if (r.outbound_lifecycle === 'agent_no_answer') return 'Agent did not answer';
  if (r.outbound_lifecycle === 'failed_to_initiate') return 'Could not be placed';
  if (r.processing_state === 'processed') return 'Transcribed';
  if (r.processing_state === 'queued') return 'Transcribing';
  switch (r.recording_state) {
    case 'pending':
      return 'Waiting for the recording';
    case 'available':
      return 'Recorded, not transcribed';
    case 'refused':
      return 'Recording refused';
    case 'deleted':
      return 'Recording deleted';
    default:
      return 'No recording';
  }
}

/** The passage that matched a search, matched words in <mark> (preact escapes the text). */
export function Passage({ text }: { text: string | null }): VNode | null {
  if (!text) return null;
  const parts: VNode[] = [];
  for (const [i, chunk] of text.split(MATCH_START).entries()) {
    if (i === 0) {
      parts.push(html`${chunk}`);
      continue;
    }
    const end = chunk.indexOf(MATCH_END);
    parts.push(end < 0 ? html`${chunk}` : html`<mark>${chunk.slice(0, end)}</mark>${chunk.slice(end + 1)}`);
  }
  return html`<p class="passage">…${parts}…</p>`;
}

/**
 * A refused bulk form as the inbox shows it again (bulk.ts): the error on its field — `ids` (the
 * rows' boxes), `review_status` or `crm_status` — and what was chosen, ticked and selected again.
 */
export interface BulkState {
  err: FieldError | null;
  ids: ReadonlySet<string>;
  review?: string;
  crm?: string;
}

/**
 * The inbox's quick-action form of one row, and (without `row`) the bulk form the selected rows'
 * checkboxes belong to: both post to /app/calls/bulk (bulk.ts) the ids, the review and the CRM
 * status to set (empty: keep), and the address to come back to. The bulk form says so (`source`),
 * so that its refusal comes back as the inbox with the error on its field.
 */
export function StatusForm(p: {
  user: PageUser;
  back: string;
  /** one row: its id, current statuses and the name it is labelled with; absent: the bulk form */
  row?: { id: string; crm_status: string; review_status: string | null; who: string };
  id?: string;
  /** the bulk form refused: its error and values */
  bulk?: BulkState | null;
}): VNode {
  const { row } = p;
  const idp = row ? `q-${row.id}` : 'bulk';
  const keep = html`<option value="">${row ? '—' : 'Keep'}</option>`;
  const err = row ? null : (p.bulk?.err ?? null);
  const review = row ? row.review_status : p.bulk?.review;
  const crm = row ? row.crm_status : p.bulk?.crm;
  return html`<form method="post" action="/app/calls/bulk" class=${row ? 'quick' : 'bulk'} id=${p.id}>
    <${CsrfField} user=${p.user} />
    <input type="hidden" name="back" value=${p.back} />
    ${row ? html`<input type="hidden" name="ids" value=${row.id} />` : html`<input type="hidden" name="source" value="bulk" />`}
    <span>
      <label for=${`${idp}-review`} class=${row ? 'sr-only' : ''}>${row ? `Review status of ${row.who}` : 'Review status'}</label>
      <select id=${`${idp}-review`} name="review_status" ...${fieldAttrs('review_status', err)}>
        ${row?.review_status ? null : keep}
        ${REVIEW_STATUSES.map((s) => html`<option value=${s} selected=${review === s}>${words(s)}</option>`)}
      </select>
      <${ErrorText} name="review_status" err=${err} />
    </span>
    <span>
      <label for=${`${idp}-crm`} class=${row ? 'sr-only' : ''}>${row ? `CRM status of ${row.who}` : 'CRM status'}</label>
      <select id=${`${idp}-crm`} name="crm_status" ...${fieldAttrs('crm_status', err)}>
        ${row ? null : keep}
        ${CRM_STATUSES.map((s) => html`<option value=${s} selected=${crm === s}>${words(s)}</option>`)}
      </select>
      <${ErrorText} name="crm_status" err=${err} />
    </span>
    <button type="submit">${row ? html`Save<span class="sr-only"> ${row.who}</span>` : 'Apply to selected'}</button>
    <${ErrorText} name="ids" err=${err} />
  </form>`;
}
