import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizePhone, phoneFilterDigits, reverseDigits } from '../../src/domain/phone.ts';

const normalized: [string, string | undefined, { e164: string; national: string } | null][] = [
  ['+14155552671', undefined, { e164: '+14155552671', national: '(415) 555-2671' }],
  ['(415) 555-2671', 'US', { e164: '+14155552671', national: '(415) 555-2671' }],
  ['1-415-555-2671', 'US', { e164: '+14155552671', national: '(415) 555-2671' }],
  ['020 7946 0958', 'GB', { e164: '+442079460958', national: '020 7946 0958' }],
  ['+44 20 7946 0958', 'DE', { e164: '+442079460958', national: '020 7946 0958' }],
  ['030 901820', 'DE', { e164: '+4930901820', national: '030 901820' }],
  ['+49 30 901820', undefined, { e164: '+4930901820', national: '030 901820' }],
  ['01 23 45 67 89', 'FR', { e164: '+33123456789', national: '01 23 45 67 89' }],
  ['06 1234 5678', 'IT', { e164: '+390612345678', national: '06 1234 5678' }],
  ['+39 06 1234 5678', undefined, { e164: '+390612345678', national: '06 1234 5678' }],
  ['  +14155552671  ', undefined, { e164: '+14155552671', national: '(415) 555-2671' }],
  ['anonymous', 'US', null],
  ['Anonymous', undefined, null],
  ['unknown', 'US', null],
  ['', 'US', null],
  ['911', 'US', null],
  ['12345', 'US', null],
  ['+266696687', undefined, null],
  ['(415) 555-2671', undefined, null],
  ['(415) 555-2671', 'XX', null],
  ['not a number', 'US', null],
];

for (const [raw, country, want] of normalized) {
  test(`normalizePhone(${JSON.stringify(raw)}, ${country ?? 'no country'}) gives ${want ? want.e164 : 'null'}`, () => {
    const got = normalizePhone(raw, country);
    assert.deepEqual(got, want && { ...want, rdigits: reverseDigits(want.e164) });
  });
}

test('normalizePhone of null or undefined is null', () => {
  assert.equal(normalizePhone(null, 'US'), null);
  assert.equal(normalizePhone(undefined), null);
});

test('the Italian leading zero stays in E.164 and in the reversed digits', () => {
  assert.equal(normalizePhone('06 1234 5678', 'IT')?.rdigits, '876543216093');
});

const filters: [string, string[] | string][] = [
  ['+14155552671', ['14155552671']],
  ['+1 (415) 555-2671', ['14155552671']],
  ['1.415.555.2671', ['14155552671']],
  ['4155552671', ['4155552671']],
  ['(+1) 415', ['1415']],
  ['020 7946 0958', ['02079460958', '2079460958']],
  ['0044 20 7946 0958', ['00442079460958', '442079460958']],
  ['06 1234 5678', ['0612345678', '612345678']],
  ['0123456', ['0123456']],
  ['+020 7946 0958', ['02079460958']],
  ['555', ['555']],
  ['12', 'must be 3 to 40 characters long'],
  ['1'.repeat(41), 'must be 3 to 40 characters long'],
  ['1'.repeat(40), ['1'.repeat(40)]],
  ['1-2', 'must contain at least 3 digits'],
  ['(-)', 'must contain at least 3 digits'],
  ['415+555', 'may contain only digits, spaces, hyphens, dots, parentheses and one leading +'],
  ['++1415', 'may contain only digits, spaces, hyphens, dots, parentheses and one leading +'],
  ['415_555%', 'may contain only digits, spaces, hyphens, dots, parentheses and one leading +'],
  ['abc', 'may contain only digits, spaces, hyphens, dots, parentheses and one leading +'],
  ['٤١٥٥٥٥', 'may contain only digits, spaces, hyphens, dots, parentheses and one leading +'],
  ['415\t555', 'may contain only digits, spaces, hyphens, dots, parentheses and one leading +'],
];

for (const [query, want] of filters) {
  test(`phoneFilterDigits(${JSON.stringify(query)}) ${typeof want === 'string' ? `refuses: ${want}` : `matches ${want.join(' or ')}`}`, () => {
    assert.deepEqual(
      phoneFilterDigits(query),
      typeof want === 'string' ? { ok: false, reason: want } : { ok: true, digits: want },
    );
  });
}
