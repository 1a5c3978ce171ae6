/**
 * Keyword trackers (table trackers: name, terms[]): a tracker matches when at least one of its terms
 * occurs in the transcript as a whole word or phrase, case-insensitively ("leak" matches "Leak," but
 * not "leaking"; "water heater" matches "water   heater"). Pure.
 */

export interface Tracker {
  id: string;
  name: string;
  terms: string[];
}

export interface TrackerMatch {
  tracker_id: string;
  name: string;
  /** the tracker's terms that occur, as configured, in configuration order */
  matched_terms: string[];
  /** short snippets around the first occurrences */
  excerpts: string[];
}

/** Characters of context on each side of a match in an excerpt. */
const EXCERPT_CONTEXT = 40;
/** At most this many excerpts per tracker, so one busy tracker cannot bloat the event. */
const MAX_EXCERPTS = 3;

function termPattern(term: string): RegExp | null {
  const words = term.trim().split(/\s+/).filter(Boolean);
  if (!words.length) return null;
  const body = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+');
  return new RegExp(`(?<![\\p{L}\\p{N}_])${body}(?![\\p{L}\\p{N}_])`, 'giu');
}

function excerpt(text: string, start: number, end: number): string {
  let from = Math.max(0, start - EXCERPT_CONTEXT);
  let to = Math.min(text.length, end + EXCERPT_CONTEXT);
  // widen to word boundaries so a snippet never starts or ends mid-word
  while (from > 0 && /\S/.test(text[from - 1])) from--;
  while (to < text.length && /\S/.test(text[to])) to++;
  const core = text.slice(from, to).replace(/\s+/g, ' ').trim();
  return `${from > 0 ? '…' : ''}${core}${to < text.length ? '…' : ''}`;
}

export function matchTrackers(text: string, trackers: readonly Tracker[]): TrackerMatch[] {
  const out: TrackerMatch[] = [];
  for (const t of trackers) {
    const matched: string[] = [];
    const hits: { start: number; end: number }[] = [];
    for (const term of t.terms) {
      const re = termPattern(term);
      if (!re) continue;
      const found = [...text.matchAll(re)];
      if (!found.length) continue;
      if (!matched.includes(term)) matched.push(term);
      for (const m of found) hits.push({ start: m.index, end: m.index + m[0].length });
    }
    if (!matched.length) continue;
    hits.sort((a, b) => a.start - b.start);
    const excerpts: string[] = [];
    for (const h of hits) {
      const e = excerpt(text, h.start, h.end);
      if (!excerpts.includes(e)) excerpts.push(e);
      if (excerpts.length === MAX_EXCERPTS) break;
    }
    out.push({ tracker_id: t.id, name: t.name, matched_terms: matched, excerpts });
  }
  return out;
}
