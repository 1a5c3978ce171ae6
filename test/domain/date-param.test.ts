import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundEnd, boundStart, parseDateParam, restoreOffsetPlus } from '../../src/domain/date-param.ts';

const valid: [string, string, string][] = [
  ['2026-06-15', '2026-06-15T00:00:00.000Z', '2026-06-15T23:59:59.999Z'],
  ['2028-02-29', '2028-02-29T00:00:00.000Z', '2028-02-29T23:59:59.999Z'],
  ['2026-06-15T10:00:00Z', '2026-06-15T10:00:00.000Z', '2026-06-15T10:00:00.000Z'],
  ['2026-06-15T10:00Z', '2026-06-15T10:00:00.000Z', '2026-06-15T10:00:00.000Z'],
  ['2026-06-15t10:00:00z', '2026-06-15T10:00:00.000Z', '2026-06-15T10:00:00.000Z'],
  ['2026-06-15T10:00:00.5Z', '2026-06-15T10:00:00.500Z', '2026-06-15T10:00:00.500Z'],
  ['2026-06-15T10:00:00.123456789Z', '2026-06-15T10:00:00.123Z', '2026-06-15T10:00:00.123Z'],
  ['2026-06-15T12:00:00+02:00', '2026-06-15T10:00:00.000Z', '2026-06-15T10:00:00.000Z'],
  ['2026-06-15T12:00:00+0200', '2026-06-15T10:00:00.000Z', '2026-06-15T10:00:00.000Z'],
  ['2026-06-15T05:30:00-04:30', '2026-06-15T10:00:00.000Z', '2026-06-15T10:00:00.000Z'],
  ['2026-06-15T00:30:00+01:00', '2026-06-14T23:30:00.000Z', '2026-06-14T23:30:00.000Z'],
];

for (const [raw, start, end] of valid) {
  test(`${raw} starts at ${start} as dateFrom and ends at ${end} as dateTo`, () => {
    const b = parseDateParam(raw);
    assert.ok(b);
    assert.equal(boundStart(b).toISOString(), start);
    assert.equal(boundEnd(b).toISOString(), end);
  });
}

for (const raw of [
  '2026-02-29',
  '2026-02-30',
  '2026-13-01',
  '2026-00-10',
  '0000-01-01',
  '2026-6-15',
  '20260615',
  '2026-06-15T10:00:00',
  '2026-06-15T24:00:00Z',
  '2026-06-15T10:60:00Z',
  '2026-06-15T10:00:60Z',
  '2026-06-15T10:00:00+24:00',
  '2026-06-15T10:00:00+02:60',
  '2026-06-15 10:00:00Z',
  '2026-06-15T10Z',
  'today',
  '',
]) {
  test(`${JSON.stringify(raw)} is not an accepted date`, () => {
    assert.equal(parseDateParam(raw), null);
  });
}

test('a space where the offset sign belongs (an unencoded + in a query string) is read as +', () => {
  assert.equal(restoreOffsetPlus('2026-06-15T12:00:00 02:00'), '2026-06-15T12:00:00+02:00');
  assert.equal(restoreOffsetPlus('2026-06-15T12:00 0200'), '2026-06-15T12:00+0200');
  assert.equal(restoreOffsetPlus('2026-06-15 02:00'), '2026-06-15 02:00');
  assert.equal(restoreOffsetPlus('2026-06-15T12:00:00-02:00'), '2026-06-15T12:00:00-02:00');
});
