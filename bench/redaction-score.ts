import { readFileSync } from 'node:fs';
import { findPii, PII_KINDS, type PiiKind, type PiiSpan } from '../src/capture/redaction/redact.ts';

/**
 * The PII set (test/fixtures/pii/pii-set.json) scored against a redactor: recall per kind (an item
 * counts as caught when every letter and digit of it lies inside a redacted span) and the ordinary
 * numbers wrongly redacted (any letter or digit of one inside a span). Shared by
 * `npm run bench:redaction` and test/capture/redaction-set.test.ts.
 */

export interface PiiSet {
  pii: { id: string; lang: string; text: string; items: { kind: PiiKind; value: string }[] }[];
  ordinary: { id: string; lang: string; text: string; keep: string[] }[];
}

export function loadPiiSet(): PiiSet {
  return JSON.parse(
    readFileSync(new URL('../test/fixtures/pii/pii-set.json', import.meta.url), 'utf8'),
  ) as PiiSet;
}

export interface Score {
  recall: Record<PiiKind, { caught: number; total: number }>;
  missed: { id: string; kind: PiiKind; value: string }[];
  ordinary: { redacted: number; total: number };
  wronglyRedacted: { id: string; value: string }[];
  /** utterances of the PII set in which something not labelled was redacted (not counted above) */
  utterances: number;
}

function covered(spans: readonly PiiSpan[], text: string, from: number, to: number): 'all' | 'some' | 'none' {
  let inside = 0;
  let total = 0;
  for (let i = from; i < to; i++) {
    if (!/[\p{L}\d]/u.test(text[i])) continue;
    total++;
    if (spans.some((s) => s.start <= i && i < s.end)) inside++;
  }
  return inside === total ? 'all' : inside === 0 ? 'none' : 'some';
}

export function scoreSet(set: PiiSet, find: (text: string) => PiiSpan[] = findPii): Score {
  const recall = Object.fromEntries(PII_KINDS.map((k) => [k, { caught: 0, total: 0 }])) as Score['recall'];
  const missed: Score['missed'] = [];
  for (const u of set.pii) {
    const spans = find(u.text);
    let at = 0;
    for (const item of u.items) {
      const start = u.text.indexOf(item.value, at);
      at = start + item.value.length;
      recall[item.kind].total++;
      if (covered(spans, u.text, start, start + item.value.length) === 'all') recall[item.kind].caught++;
      else missed.push({ id: u.id, kind: item.kind, value: item.value });
    }
  }
  const wronglyRedacted: Score['wronglyRedacted'] = [];
  let total = 0;
  for (const u of set.ordinary) {
    const spans = find(u.text);
    let at = 0;
    for (const value of u.keep) {
      const start = u.text.indexOf(value, at);
      at = start + value.length;
      total++;
      if (covered(spans, u.text, start, start + value.length) !== 'none')
        wronglyRedacted.push({ id: u.id, value });
    }
  }
  return {
    recall,
    missed,
    ordinary: { redacted: wronglyRedacted.length, total },
    wronglyRedacted,
    utterances: set.pii.length + set.ordinary.length,
  };
}

export const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)} %`);
