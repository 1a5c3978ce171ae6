import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchTrackers } from '../../src/capture/trackers.ts';

const T1 = '11111111-1111-4111-8111-111111111111';
const T2 = '22222222-2222-4222-8222-222222222222';

test('a term matches case-insensitively as a whole word, with short excerpts around it', () => {
  const text = 'Caller: I want to CANCEL my contract. Agent: Why cancel? Caller: The price went up.';
  assert.deepEqual(matchTrackers(text, [{ id: T1, name: 'Churn', terms: ['cancel', 'refund'] }]), [
    {
      tracker_id: T1,
      name: 'Churn',
      matched_terms: ['cancel'],
      excerpts: [
        'Caller: I want to CANCEL my contract. Agent: Why cancel? Caller:…',
        '…I want to CANCEL my contract. Agent: Why cancel? Caller: The price went up.',
      ],
    },
  ]);
});

test('a term inside a longer word does not match', () => {
  assert.deepEqual(matchTrackers('The pipe is leaking.', [{ id: T1, name: 'Leak', terms: ['leak'] }]), []);
});

test('a phrase matches across any whitespace, and regex characters in terms are literal', () => {
  const m = matchTrackers('Is the water\n  heater (C++) covered?', [
    { id: T1, name: 'Heater', terms: ['water heater'] },
    { id: T2, name: 'Lang', terms: ['c++', 'c.+'] },
  ]);
  assert.deepEqual(
    m.map((x) => [x.name, x.matched_terms]),
    [
      ['Heater', ['water heater']],
      ['Lang', ['c++']],
    ],
  );
  assert.deepEqual(m[0].excerpts, ['Is the water heater (C++) covered?']);
});

test('only trackers with at least one matching term are reported, in configuration order', () => {
  const m = matchTrackers('refund please, and a quote', [
    { id: T1, name: 'Sales', terms: ['quote', 'price'] },
    { id: T2, name: 'Churn', terms: ['cancel'] },
  ]);
  assert.deepEqual(
    m.map((x) => x.tracker_id),
    [T1],
  );
});

test('at most three excerpts are kept per tracker', () => {
  const text = Array.from(
    { length: 10 },
    (_, i) => `Sentence ${i} mentions a refund and then a lot more words follow here.`,
  ).join(' ');
  const [m] = matchTrackers(text, [{ id: T1, name: 'Churn', terms: ['refund'] }]);
  assert.equal(m.excerpts.length, 3);
  for (const e of m.excerpts) assert.ok(e.length < 130, e);
});
