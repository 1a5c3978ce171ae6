import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COUNT_CAP, countInWords, reviewStatusOfView } from '../../src/domain/inbox.ts';

test('a view count is spelt with thousands separators, and past the cap as "1,000+"', () => {
  assert.equal(COUNT_CAP, 1000);
  const cases: [number, string][] = [
    [0, '0'],
    [999, '999'],
    [1000, '1,000'],
    [1001, '1,000+'],
  ];
  for (const [n, want] of cases) assert.equal(countInWords(n), want, String(n));
});

test('each view but "all" is a review status', () => {
  assert.equal(reviewStatusOfView('needs_review'), 'needs_review');
  assert.equal(reviewStatusOfView('new'), 'new');
  assert.equal(reviewStatusOfView('all'), null);
});
