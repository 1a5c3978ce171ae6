import type { CrmStatus, DIRECTIONS, ReviewStatus } from './values.ts';

/**
 * The web app's lead inbox (/app/calls): its views (by review status), sorts and search, as the read
 * model (capture/inbox.ts) takes them. Pure values; the page reads them from its query string.
 */
export const INBOX_VIEWS = ['needs_review', 'needs_decision', 'new', 'all'] as const;
export type InboxView = (typeof INBOX_VIEWS)[number];

export const INBOX_SORTS = ['newest', 'oldest', 'score'] as const;
export type InboxSort = (typeof INBOX_SORTS)[number];

/** The longest search the box takes (characters): a few words or a phone number. */
export const SEARCH_MAX_LENGTH = 200;

/** The most calls one bulk action changes: one page of the inbox at its largest. */
export const BULK_MAX = 100;

export interface InboxQuery {
  view: InboxView;
  sort: InboxSort;
  page: number;
  limit: number;
  from: Date | null;
  to: Date | null;
  direction: (typeof DIRECTIONS)[number] | null;
  status: CrmStatus | null;
  /** the search box's words (full-text search), or null */
  words: string | null;
  /** when the box holds a phone number: the digit strings matched as trailing digits of the customer's E.164 */
  phoneDigits: string[] | null;
}

/** The review status a view shows, or null for every call ("All"). */
export const reviewStatusOfView = (view: InboxView): ReviewStatus | null => (view === 'all' ? null : view);

/** Counts stop here: a view with more calls says "1,000+" (a count costs at most this many index entries). */
export const COUNT_CAP = 1_000;

/** A view's count in words: 1,204, or 1,000+ past COUNT_CAP. */
export const countInWords = (n: number): string =>
  n > COUNT_CAP ? `${COUNT_CAP.toLocaleString('en-US')}+` : n.toLocaleString('en-US');

/** The number of calls in each view (at most COUNT_CAP + 1), for the inbox's tabs (the filters and search applied). */
export type InboxCounts = Record<InboxView, number>;
