import type { Speaker, TranscriptSegment } from '../../domain/capture-providers.ts';
import { findPii, type PiiKind } from './redact.ts';

/**
 * From a redacted transcript back to the recording: the time spans, per speaker (so per channel of
 * a dual-channel recording), of the words redaction takes out. The transcript is built from the
 * segments exactly as src/capture/providers/transcript.ts's labelledText builds it, each segment's
 * place in it known, each word found in its segment's text in order; a redacted character range
 * becomes the times of the words it touches. Pure.
 */

export interface SilenceSpan {
  speaker: Speaker;
  kind: PiiKind;
  /** seconds from the start of the recording */
  start: number;
  end: number;
}

export interface AudioRedaction {
  /** the labelled transcript the spans were found in (labelledText of the segments) */
  text: string;
  spans: SilenceSpan[];
  /**
   * false when a redacted range lies in a segment without word times, or in words that could not
   * be placed in its text: the recording cannot be silenced there, and the call is flagged
   */
  complete: boolean;
}

const LABEL: Record<Speaker, string> = { agent: 'Agent', customer: 'Customer', unknown: 'Speaker' };

/** Seconds added on each side of a silenced word: word times are a model's estimate. */
export const SILENCE_PAD_SECONDS = 0.15;

export function audioRedaction(segments: readonly TranscriptSegment[]): AudioRedaction {
  // the labelled text, and where each segment's text sits in it
  let text = '';
  const placed: { seg: TranscriptSegment; at: number }[] = [];
  let last: Speaker | null = null;
  for (const seg of segments) {
    if (last === seg.speaker) text += ' ';
    else {
      if (text) text += '\n';
      text += `${LABEL[seg.speaker]}: `;
    }
    placed.push({ seg, at: text.length });
    text += seg.text;
    last = seg.speaker;
  }
  const pii = findPii(text);
  const spans: SilenceSpan[] = [];
  let complete = true;
  for (const p of pii) {
    for (const { seg, at } of placed) {
      const from = Math.max(p.start, at);
      const to = Math.min(p.end, at + seg.text.length);
      if (from >= to) continue;
      const times = wordTimes(seg, from - at, to - at);
      if (!times) {
        complete = false;
        continue;
      }
      spans.push({
        speaker: seg.speaker,
        kind: p.kind,
        start: Math.max(0, times.start - SILENCE_PAD_SECONDS),
        end: times.end + SILENCE_PAD_SECONDS,
      });
    }
  }
  return { text, spans, complete };
}

/** Between words: spaces and punctuation. */
const GAP = /^[\s\p{P}]*$/u;

/** The times of the words of `seg` that overlap its characters [from, to); null when not known. */
function wordTimes(seg: TranscriptSegment, from: number, to: number): { start: number; end: number } | null {
  if (!seg.words?.length) return null;
  const lower = seg.text.toLowerCase();
  let cursor = 0;
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let covered = from;
  for (const w of seg.words) {
    const word = w.text.trim().toLowerCase();
    if (!word) continue;
    const i = lower.indexOf(word, cursor);
    if (i < 0) continue;
    cursor = i + word.length;
    if (cursor <= from || i >= to) continue;
    start = Math.min(start, w.start);
    end = Math.max(end, w.end);
    if (i <= covered || GAP.test(seg.text.slice(covered, i))) covered = Math.max(covered, cursor);
  }
  // every character of the range must lie in a placed word (spaces and punctuation aside)
  if (!Number.isFinite(start) || !GAP.test(seg.text.slice(covered, to))) return null;
  return { start, end };
}
