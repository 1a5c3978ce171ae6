import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  abaValid,
  dniValid,
  germanDocumentValid,
  ibanValid,
  luhnValid,
  nirValid,
  ssnPlausible,
  steuerIdValid,
} from '../../src/capture/redaction/checksums.ts';
import { germanNumber, numberAtom, readGroups } from '../../src/capture/redaction/numbers.ts';
import { findPii, redactText } from '../../src/capture/redaction/redact.ts';

const digitsOf = (words: string) =>
  readGroups(words.split(/[\s-]+/).map((w) => numberAtom(w) ?? { k: 'and' as const }))
    .map((g) => g.digits)
    .join('');

describe('redaction checksums', () => {
  it('know valid numbers from one digit off', () => {
    assert.equal(luhnValid('4111111111111111'), true);
    assert.equal(luhnValid('4111111111111112'), false);
    assert.equal(ibanValid('DE89370400440532013000'), true);
    assert.equal(ibanValid('DE89370400440532013001'), false);
    assert.equal(ibanValid('GB29NWBK60161331926819'), true);
    assert.equal(ibanValid('GB29NWBK6016133192681'), false); // one short for GB
    assert.equal(abaValid('021000021'), true);
    assert.equal(abaValid('021000022'), false);
    assert.equal(ssnPlausible('123456789'), true);
    assert.equal(ssnPlausible('666456789'), false);
    assert.equal(ssnPlausible('123006789'), false);
    assert.equal(dniValid('12345678Z'), true);
    assert.equal(dniValid('12345678A'), false);
    assert.equal(dniValid('X1234567L'), true);
    assert.equal(nirValid('185057800608491'), true);
    assert.equal(nirValid('185057800608492'), false);
    assert.equal(nirValid('2690299341732'), false); // no key
    assert.equal(steuerIdValid('86095742719'), true);
    assert.equal(steuerIdValid('86095742718'), false);
    assert.equal(steuerIdValid('12345678901'), false); // no digit repeated
    assert.equal(germanDocumentValid('T220001293'), true);
    assert.equal(germanDocumentValid('T220001294'), false);
  });
});

describe('numbers said as words', () => {
  const table: [string, string][] = [
    ['four one one one', '4111'],
    ['forty-one eleven', '4111'],
    ['double four oh seven', '4407'],
    ['nineteen eighty-five', '1985'],
    ['two thousand and five', '2005'],
    ['twenty twenty-nine', '2029'],
    ['forty-one hundred', '4100'],
    ['cuarenta y uno once', '4111'],
    ['mil novecientos ochenta y cinco', '1985'],
    ['veintitrés doble cero', '2300'],
    ['einundvierzig elf', '4111'],
    ['neunzehnhundertfünfundachtzig', '1985'],
    ['zwo null null neun', '2009'],
    ['quatre-vingt-dix-neuf', '99'],
    ['soixante et onze', '71'],
    ['quatre-vingts quatre-vingt-un', '8081'],
    ['dix-sept', '17'],
  ];
  for (const [words, digits] of table)
    it(`"${words}" → ${digits}`, () => assert.equal(digitsOf(words), digits));
  it('German compounds, not articles', () => {
    assert.equal(germanNumber('zweiundzwanzig'), '22');
    assert.equal(germanNumber('zweitausendneunundzwanzig'), '2029');
    assert.equal(numberAtom('ein'), null);
    assert.equal(germanNumber('einladung'), null);
  });
});

describe('redactText', () => {
  const cases: [string, string][] = [
    [
      'My card is 4111 1111 1111 1111, exp 04/29, CVV 737.',
      'My card is [card number], exp [expiry date], CVV [security code].',
    ],
    ['Customer: 4111111111111111', 'Customer: [card number]'],
    ['Customer: four one one one one one one one one one one one one one one one', 'Customer: [card number]'],
    ['Customer: 3782 822463 10005', 'Customer: [card number]'],
    [
      'Agent: the card number?\nCustomer: four one one one one one one one\nAgent: uh-huh\nCustomer: one one one one one one one one',
      'Agent: the card number?\nCustomer: [card number]\nAgent: uh-huh\nCustomer: [card number]',
    ],
    [
      'Customer: Tarjeta cuatro mil ciento once, once once, once once, once once.',
      'Customer: Tarjeta [card number].',
    ],
    ['SSN 123-45-6789 please', 'SSN [national id] please'],
    ['it is 123-45-6789', 'it is [national id]'],
    ['Mi DNI es 12345678Z.', 'Mi DNI es [national id].'],
    ['NIE X1234567L', 'NIE [national id]'],
    ['numéro de sécu 1 85 05 78 006 084 91', 'numéro de sécu [national id]'],
    ['Meine Steuer-ID ist 86 095 742 719.', 'Meine Steuer-ID ist [national id].'],
    ['Ausweis T220001293', 'Ausweis [national id]'],
    ['IBAN DE89 3704 0044 0532 0130 00.', 'IBAN [bank account].'],
    ['pay GB29 NWBK 6016 1331 9268 19 today', 'pay [bank account] today'],
    [
      'routing 021000021, account 1234567890 at my bank',
      'routing [bank account], account [bank account] at my bank',
    ],
    ['date of birth: 3 March 1985.', 'date of birth: [date of birth].'],
    ['Geburtsdatum 03.03.1985', 'Geburtsdatum [date of birth]'],
    ['passport number C01X00T47', 'passport number [passport number]'],
    // what must survive
    ['Call me at (415) 555-0123 or +1 415 555 0199.', 'Call me at (415) 555-0123 or +1 415 555 0199.'],
    [
      'The quote was $1,250 for 1234 Elm Street on 04/29.',
      'The quote was $1,250 for 1234 Elm Street on 04/29.',
    ],
    ['My warranty expires 04/29.', 'My warranty expires 04/29.'],
    ['order 4111 1111 arrived', 'order 4111 1111 arrived'],
    ['Ich habe nie 12345678 gesagt', 'Ich habe nie 12345678 gesagt'],
    ['I was born in Madrid, at 12 Calle Mayor', 'I was born in Madrid, at 12 Calle Mayor'],
    ['the card ending in 4242', 'the card ending in 4242'],
    ['', ''],
  ];
  for (const [input, want] of cases)
    it(JSON.stringify(input), () => assert.equal(redactText(input).text, want));

  it('answers the spans in the original text, sorted and apart', () => {
    const r = redactText('card 4111 1111 1111 1111 and SSN 123-45-6789');
    assert.deepEqual(r.spans, [
      { start: 5, end: 24, kind: 'card_number' },
      { start: 33, end: 44, kind: 'national_id' },
    ]);
  });

  it('is idempotent: a redacted transcript redacts to itself', () => {
    const once = redactText('card 4111 1111 1111 1111, exp 04/29, CVV 737, DOB 3/3/1985').text;
    assert.equal(redactText(once).text, once);
  });
});

describe('redactText twice', () => {
  it('the tokens of the first pass are no context for the second', () => {
    const once = redactText(
      'Agent: your date of birth?\nCustomer: March 3rd, 1985. Call me at 415 555 0123.',
    ).text;
    assert.equal(once, 'Agent: your date of birth?\nCustomer: [date of birth]. Call me at 415 555 0123.');
    assert.equal(redactText(once).text, once);
    const codes =
      'the [security code] and [card number] then 415 555 0123, passport [passport number] at 12 Elm St';
    assert.equal(redactText(codes).text, codes);
  });
});

describe('findPii remembers the last texts', () => {
  it('answers the same spans again, each caller its own copies', () => {
    const text = 'Customer: my card is 4111 1111 1111 1111, thanks';
    const first = findPii(text);
    assert.equal(first.length, 1);
    const again = findPii(text);
    assert.deepEqual(again, first);
    assert.notEqual(again[0], first[0]);
    first[0]!.start = 0;
    first.length = 0;
    assert.deepEqual(findPii(text), again);
  });
});
