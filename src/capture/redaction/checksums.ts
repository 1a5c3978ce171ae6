/**
 * The check digits of the numbers redaction looks for. Each is a few lines of arithmetic, written
 * here rather than taken from a package (docs/decisions.md "Redaction: checksums by hand"): they
 * run on digit strings the redactor has already assembled from spoken or written words.
 */

/** Luhn (ISO/IEC 7812): payment card numbers. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** ISO 13616 IBAN lengths by country (SWIFT's IBAN registry). */
// biome-ignore format: a lookup table reads better in rows
export const IBAN_LENGTHS: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21,
  CR: 22, CY: 28, CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27,
  GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26,
  IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24,
  ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29,
  RO: 24, RS: 22, SA: 24, SC: 31, SE: 24, SI: 19, SK: 24, SM: 27, ST: 25, SV: 28, TL: 23, TN: 24,
  TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
};

/** ISO 7064 MOD 97-10 over an IBAN (letters as 10..35, the first four characters moved to the end). */
export function ibanValid(iban: string): boolean {
  const s = iban.toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(s) || IBAN_LENGTHS[s.slice(0, 2)] !== s.length) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const v = code >= 65 ? String(code - 55) : ch;
    for (const d of v) rest = (rest * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}

/** ABA routing transit number: 3-7-1 weights, a multiple of 10. */
export function abaValid(digits: string): boolean {
  if (!/^\d{9}$/.test(digits) || digits === '000000000') return false;
  const w = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (digits.charCodeAt(i) - 48) * w[i % 3];
  return sum % 10 === 0;
}

/** US social security number rules (SSA): no 000, 666 or 9xx area, no 00 group, no 0000 serial. */
export function ssnPlausible(digits: string): boolean {
  if (!/^\d{9}$/.test(digits)) return false;
  const area = digits.slice(0, 3);
  return (
    area !== '000' &&
    area !== '666' &&
    area[0] !== '9' &&
    digits.slice(3, 5) !== '00' &&
    digits.slice(5) !== '0000'
  );
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

/** Spanish DNI (8 digits + letter) or NIE (X/Y/Z + 7 digits + letter): the letter is the number mod 23. */
export function dniValid(id: string): boolean {
  const s = id.toUpperCase();
  const m = /^([XYZ]\d{7}|\d{8})([A-Z])$/.exec(s);
  if (!m) return false;
  const n = Number(m[1].replace(/^[XYZ]/, (c) => String('XYZ'.indexOf(c))));
  return DNI_LETTERS[n % 23] === m[2];
}

/** French NIR (numéro de sécurité sociale): 13 digits + a key of 97 − (number mod 97). Corsica's 2A/2B read as 19/18. */
export function nirValid(id: string): boolean {
  const s = id.toUpperCase();
  if (!/^[12378]\d{4}(?:\d{2}|2[AB])\d{8}$/.test(s)) return false;
  const body = s.slice(0, 13).replace('2A', '19').replace('2B', '18');
  const key = Number(s.slice(13));
  return 97 - Number(BigInt(body) % 97n) === key;
}

/**
 * German Steuerliche Identifikationsnummer: 11 digits, no leading 0, in the first ten exactly one
 * digit repeated (twice or three times), and an ISO 7064 MOD 11,10 check digit.
 */
export function steuerIdValid(digits: string): boolean {
  if (!/^[1-9]\d{10}$/.test(digits)) return false;
  const counts = new Map<string, number>();
  for (const d of digits.slice(0, 10)) counts.set(d, (counts.get(d) ?? 0) + 1);
  const repeated = [...counts.values()].filter((c) => c > 1);
  if (repeated.length !== 1 || repeated[0] > 3) return false;
  let product = 10;
  for (let i = 0; i < 10; i++) {
    let sum = (Number(digits[i]) + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  let check = 11 - product;
  if (check === 10) check = 0;
  return check === Number(digits[10]);
}

/**
 * German identity card (Personalausweis) or passport serial: 9 characters from its alphabet (the
 * first a letter) and a check digit with 7-3-1 weights (letters as 10..35).
 */
export function germanDocumentValid(id: string): boolean {
  const s = id.toUpperCase();
  if (!/^[CFGHJKLMNPRTVWXYZ][CFGHJKLMNPRTVWXYZ0-9]{8}\d$/.test(s)) return false;
  const w = [7, 3, 1];
  let sum = 0;
  for (let i = 0; i < 9; i++) {
    const c = s.charCodeAt(i);
    sum += (c >= 65 ? c - 55 : c - 48) * w[i % 3];
  }
  return sum % 10 === Number(s[9]);
}
