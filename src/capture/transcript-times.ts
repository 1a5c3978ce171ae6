import type { FieldEvidence, TranscriptSegment } from '../domain/capture-providers.ts';
import { PII_TOKEN, type PiiSpan } from './redaction/redact.ts';

/**
 * Where in the recording each part of a stored transcript was said: for every turn (line) of the
 * transcript as stored — redacted, when redaction is on — anchors `[offset in the line, seconds
 * from the recording start]` at each segment's start and, when the provider gave word times, each
 * word's start. Built by the transcribe stage from the speech-to-text segments, kept beside the
 * transcript in the call's inbox (calls.pending_transcript_times) and read once by the analyse
 * stage to time the evidence of each extracted field (docs/capture.md "Evidence"). Pure.
 *
 * The anchors carry offsets and times only, never words; an anchor inside a redacted span is
 * dropped (its words are gone from the text).
 */

/** Per line of the stored transcript: [offset in the line, seconds], by offset. */
export type TranscriptTimes = [number, number][][];

const LABEL = { agent: 'Agent', customer: 'Customer', unknown: 'Speaker' } as const;

/**
 * The anchors of `text`, the labelled transcript src/capture/providers/transcript.ts builds from
 * these segments, after the redaction `spans` found in it (none when redaction is off). Null when
 * `text` is not the segments' labelled text (a provider that wrote its own): times cannot be placed.
 */
export function transcriptTimes(
  text: string,
  segments: readonly TranscriptSegment[],
  spans: readonly PiiSpan[],
): TranscriptTimes | null {
  const labelled = labelledWithAnchors(segments);
  if (labelled.text !== text) return null;
  const anchors = labelled.anchors;
  // through the redaction: offsets after a span move by what its token changed; inside one, dropped
  const moved: [number, number][] = [];
  let si = 0;
  let shift = 0;
  for (const [offset, seconds] of anchors.sort((a, b) => a[0] - b[0])) {
    while (si < spans.length && spans[si].end <= offset) {
      shift += PII_TOKEN[spans[si].kind].length - (spans[si].end - spans[si].start);
      si++;
    }
    if (si < spans.length && spans[si].start <= offset) continue;
    moved.push([offset + shift, seconds]);
  }
  // the stored text's lines (a span may have joined two)
  let stored = '';
  let at = 0;
  for (const s of spans) {
    stored += text.slice(at, s.start) + PII_TOKEN[s.kind];
    at = s.end;
  }
  stored += text.slice(at);
  const lineStarts = [0];
  for (let i = stored.indexOf('\n'); i >= 0; i = stored.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const out: TranscriptTimes = lineStarts.map(() => []);
  let line = 0;
  for (const [offset, seconds] of moved) {
    while (line + 1 < lineStarts.length && lineStarts[line + 1] <= offset) line++;
    const prev = out[line].at(-1);
    if (prev && prev[0] === offset - lineStarts[line]) continue;
    out[line].push([offset - lineStarts[line], Math.round(seconds * 100) / 100]);
  }
  return out;
}

/** The labelled text (as labelledText writes it) and anchors at absolute offsets in it. */
function labelledWithAnchors(segments: readonly TranscriptSegment[]): {
  text: string;
  anchors: [number, number][];
} {
  let text = '';
  const anchors: [number, number][] = [];
  let last: string | null = null;
  for (const seg of segments) {
    if (last === seg.speaker) text += ' ';
    else {
      if (text) text += '\n';
      text += `${LABEL[seg.speaker]}: `;
    }
    const at = text.length;
    anchors.push([at, seg.start]);
    const lower = seg.text.toLowerCase();
    let cursor = 0;
    for (const w of seg.words ?? []) {
      const word = w.text.trim().toLowerCase();
      if (!word) continue;
      const i = lower.indexOf(word, cursor);
      if (i < 0) continue;
      anchors.push([at + i, w.start]);
      cursor = i + word.length;
    }
    text += seg.text;
    last = seg.speaker;
  }
  return { text, anchors };
}

/**
 * The time of a field's evidence: the last anchor at or before where its quote begins in its turn
 * (the turn's first anchor when the quote comes before every anchor); null when the turn has none or
 * the transcript has no times.
 */
export function evidenceStart(
  transcript: string,
  times: TranscriptTimes | null,
  e: Pick<FieldEvidence, 'quote' | 'turn'>,
): number | null {
  const anchors = times?.[e.turn];
  if (!anchors?.length) return null;
  const line = transcript.split('\n')[e.turn] ?? '';
  const at = Math.max(0, line.indexOf(e.quote));
  let best = anchors[0][1];
  for (const [offset, seconds] of anchors) {
    if (offset > at) break;
    best = seconds;
  }
  return best;
}

/** Each field's evidence with its start filled from the transcript's times (unchanged without times). */
export function timedEvidence<K extends string>(
  transcript: string,
  times: TranscriptTimes | null,
  evidence: Partial<Record<K, FieldEvidence>> | undefined | null,
): Partial<Record<K, FieldEvidence>> | null {
  if (!evidence) return null;
  if (!times) return evidence;
  const out: Partial<Record<K, FieldEvidence>> = {};
  for (const [field, e] of Object.entries(evidence) as [K, FieldEvidence][]) {
    out[field] = { ...e, start: e.start ?? evidenceStart(transcript, times, e) };
  }
  return out;
}
