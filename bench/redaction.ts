/**
 * npm run bench:redaction — the redactor (src/capture/redaction/) on the PII set
 * (test/fixtures/pii/pii-set.json): recall per kind of item, and the share of ordinary numbers
 * (phone numbers, prices, street numbers, dates, order ids, times) it wrongly redacted. Beside it,
 * a baseline measured in the same run: the obvious regular expression (every run of 9 or more
 * digits, written with spaces or dashes between groups). The figures are deterministic.
 * Targets (issue 19): recall ≥ 99 % for card numbers and national ids, ordinary numbers wrongly
 * redacted ≤ 1 %.
 */
import type { PiiSpan } from '../src/capture/redaction/redact.ts';
import { loadPiiSet, pct, type Score, scoreSet } from './redaction-score.ts';

function baseline(text: string): PiiSpan[] {
  const out: PiiSpan[] = [];
  for (const m of text.matchAll(/\d(?:[ -]?\d){8,}/g)) {
    out.push({ start: m.index, end: m.index + m[0].length, kind: 'card_number' });
  }
  return out;
}

function print(name: string, s: Score, ms: number): void {
  console.log(`\n${name}`);
  for (const [kind, r] of Object.entries(s.recall)) {
    console.log(
      `  recall ${kind.padEnd(16)} ${pct(r.caught, r.total).padStart(8)}  (${r.caught}/${r.total})`,
    );
  }
  const all = Object.values(s.recall).reduce((a, r) => ({ c: a.c + r.caught, t: a.t + r.total }), {
    c: 0,
    t: 0,
  });
  console.log(`  recall all              ${pct(all.c, all.t).padStart(8)}  (${all.c}/${all.t})`);
  console.log(
    `  ordinary numbers wrongly redacted ${pct(s.ordinary.redacted, s.ordinary.total)} (${s.ordinary.redacted}/${s.ordinary.total})`,
  );
  console.log(`  ${s.utterances} utterances in ${ms.toFixed(1)} ms`);
}

const set = loadPiiSet();
let t = performance.now();
const base = scoreSet(set, baseline);
print('baseline: every run of 9+ digits', base, performance.now() - t);
t = performance.now();
const ours = scoreSet(set);
print('redactor (src/capture/redaction)', ours, performance.now() - t);
if (ours.missed.length) {
  console.log('\nmissed:');
  for (const m of ours.missed) console.log(`  ${m.id} ${m.kind}: ${m.value}`);
}
if (ours.wronglyRedacted.length) {
  console.log('\nwrongly redacted:');
  for (const m of ours.wronglyRedacted) console.log(`  ${m.id}: ${m.value}`);
}
