import { TRACKER_MAX_TERMS, TRACKER_NAME_MAX_LENGTH } from '../../../../accounts/trackers.ts';
import { field, formOf } from '../kit/form.ts';
import { html, type VNode } from '../kit/html.ts';

/**
 * /app/trackers: keyword trackers — create, edit (rename, change terms), delete after a confirmation
 * page. Processed transcripts are matched against the terms; a match emits call.tracker.matched.
 */
export const DONE: Record<string, string> = {
  created: 'Tracker created. Calls processed from now on are matched against its terms.',
  saved: 'Tracker saved. Calls processed from now on are matched against the new terms.',
  deleted: 'Tracker deleted. Earlier matches stay in the events already sent.',
};

export interface TrackerForm {
  name: string;
  terms: string;
}

/** Terms as typed: one per line or separated by commas. */
export const termsOf = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((t) => t.trim())
    .filter(Boolean);

export function Fields({ v, idPrefix }: { v: TrackerForm; idPrefix: string }): VNode {
  return html`<div><label for=${`${idPrefix}-name`}>Name</label>
      <input type="text" id=${`${idPrefix}-name`} name="name" required maxlength=${TRACKER_NAME_MAX_LENGTH} value=${v.name} /></div>
    <div><label for=${`${idPrefix}-terms`}>Terms</label>
      <textarea id=${`${idPrefix}-terms`} name="terms" rows="4" required aria-describedby=${`${idPrefix}-terms-hint`}>${v.terms}</textarea>
      <p class="muted" id=${`${idPrefix}-terms-hint`}>One per line or separated by commas; up to ${TRACKER_MAX_TERMS}. Matching ignores case.</p></div>`;
}

export const formOfTracker = (body: unknown): TrackerForm => {
  const form = formOf(body);
  return { name: field(form, 'name') ?? '', terms: field(form, 'terms') ?? '' };
};
