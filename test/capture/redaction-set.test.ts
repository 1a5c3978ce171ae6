import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadPiiSet, scoreSet } from '../../bench/redaction-score.ts';

/**
 * The targets on the PII set (test/fixtures/pii/pii-set.json), the figures
 * `npm run bench:redaction` prints: recall ≥ 99 % for card numbers and national ids, ordinary
 * numbers wrongly redacted ≤ 1 %. Deterministic: no timing involved.
 */
describe('the PII set', () => {
  const set = loadPiiSet();
  const score = scoreSet(set);

  it('is the size the issue asks for', () => {
    assert.ok(set.pii.length >= 100, `${set.pii.length} PII utterances`);
    const ordinary = set.ordinary.reduce((n, u) => n + u.keep.length, 0);
    assert.ok(ordinary >= set.pii.length, `${ordinary} ordinary numbers`);
    assert.deepEqual(new Set(set.pii.map((u) => u.lang)), new Set(['en', 'es', 'de', 'fr']));
  });

  it('card numbers and national ids: recall ≥ 99 %', () => {
    for (const kind of ['card_number', 'national_id'] as const) {
      const r = score.recall[kind];
      assert.ok(r.total >= 30, `${kind}: ${r.total} items`);
      assert.ok(
        r.caught / r.total >= 0.99,
        `${kind}: ${r.caught}/${r.total}; missed ${JSON.stringify(score.missed)}`,
      );
    }
  });

  it('every other kind is caught too (≥ 95 %)', () => {
    for (const [kind, r] of Object.entries(score.recall)) {
      assert.ok(r.total > 0 && r.caught / r.total >= 0.95, `${kind}: ${r.caught}/${r.total}`);
    }
  });

  it('ordinary numbers wrongly redacted ≤ 1 %', () => {
    assert.ok(
      score.ordinary.redacted / score.ordinary.total <= 0.01,
      `${score.ordinary.redacted}/${score.ordinary.total}: ${JSON.stringify(score.wronglyRedacted)}`,
    );
  });
});
