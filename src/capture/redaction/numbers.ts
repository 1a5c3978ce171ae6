/**
 * Numbers said as words, in the four languages the service detects (src/capture/language.ts):
 * "four one one one", "forty-one eleven", "double four", "cuarenta y uno", "einundvierzig",
 * "quatre-vingt-dix". A word becomes an atom; a run of atoms reads as groups of digits, each group
 * what a person would write for it ("twenty twenty-nine" → "20" "29"; "nineteen eighty-five" →
 * "19" "85"; "two thousand and five" → "2005").
 */

export type Atom =
  | { k: 'digit'; v: number } // 0-9
  | { k: 'small'; v: number } // 10-99 said as one word (teens, "veintiuno", "einundzwanzig")
  | { k: 'tens'; v: number; vingt?: true } // 20, 30, … 90 (French 60/80 take a teen; "quatre-vingt" is 80)
  | { k: 'hundred'; abs?: number } // "hundred" multiplies; "doscientos" is 200 by itself
  | { k: 'thousand' }
  | { k: 'mult'; n: number } // double, triple
  | { k: 'and' } // "and", "y", "et", "und" between parts of one number
  | { k: 'lit'; s: string }; // written digits, or a German compound read whole

const WORDS = new Map<string, Atom>();
const put = (words: string, atom: Atom) => {
  for (const w of words.split(' ')) WORDS.set(w, atom);
};
const digit = (v: number): Atom => ({ k: 'digit', v });
const small = (v: number): Atom => ({ k: 'small', v });
const tens = (v: number): Atom => ({ k: 'tens', v });

// English
put('zero oh nought', digit(0));
'one two three four five six seven eight nine'.split(' ').forEach((w, i) => {
  put(w, digit(i + 1));
});
'ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'
  .split(' ')
  .forEach((w, i) => {
    put(w, small(10 + i));
  });
'twenty thirty forty fifty sixty seventy eighty ninety'.split(' ').forEach((w, i) => {
  put(w, tens(20 + i * 10));
});
put('fourty', tens(40));
put('hundred', { k: 'hundred' });
put('thousand', { k: 'thousand' });
put('double doble doppel', { k: 'mult', n: 2 });
put('triple', { k: 'mult', n: 3 });
put('and y et und', { k: 'and' });
// Spanish
put('cero', digit(0));
put('uno un una', digit(1));
'dos tres cuatro cinco seis siete ocho nueve'.split(' ').forEach((w, i) => {
  put(w, digit(i + 2));
});
'diez once doce trece catorce quince dieciséis diecisiete dieciocho diecinueve'.split(' ').forEach((w, i) => {
  put(w, small(10 + i));
});
put('dieciseis', small(16));
'veinte veintiuno veintidós veintitrés veinticuatro veinticinco veintiséis veintisiete veintiocho veintinueve'
  .split(' ')
  .forEach((w, i) => {
    put(w, i === 0 ? tens(20) : small(20 + i));
  });
put('veintiún', small(21));
put('veintidos', small(22));
put('veintitres', small(23));
put('veintiseis', small(26));
'treinta cuarenta cincuenta sesenta setenta ochenta noventa'.split(' ').forEach((w, i) => {
  put(w, tens(30 + i * 10));
});
put('cien ciento', { k: 'hundred', abs: 100 });
'doscientos trescientos cuatrocientos quinientos seiscientos setecientos ochocientos novecientos'
  .split(' ')
  .forEach((w, i) => {
    put(w, { k: 'hundred', abs: (i + 2) * 100 });
    put(w.replace(/os$/, 'as'), { k: 'hundred', abs: (i + 2) * 100 });
  });
put('mil', { k: 'thousand' });
// French
put('zéro', digit(0));
put('un une', digit(1));
'deux trois quatre cinq six sept huit neuf'.split(' ').forEach((w, i) => {
  put(w, digit(i + 2));
});
'dix onze douze treize quatorze quinze seize'.split(' ').forEach((w, i) => {
  put(w, small(10 + i));
});
put('vingt vingts', { k: 'tens', v: 20, vingt: true });
'trente quarante cinquante soixante'.split(' ').forEach((w, i) => {
  put(w, tens(30 + i * 10));
});
put('septante', tens(70));
put('huitante octante', tens(80));
put('nonante', tens(90));
put('cent cents', { k: 'hundred' });
put('mille', { k: 'thousand' });
// German: single words here, compounds through germanNumber below
put('null', digit(0));
put('eins', digit(1));
'zwei drei vier fünf sechs sieben acht neun'.split(' ').forEach((w, i) => {
  put(w, digit(i + 2));
});
put('zwo', digit(2));
put('fuenf funf', digit(5));
'zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn'.split(' ').forEach((w, i) => {
  put(w, small(10 + i));
});
'zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig'.split(' ').forEach((w, i) => {
  put(w, tens(20 + i * 10));
});
put('dreissig', tens(30));
put('hundert', { k: 'hundred' });
put('tausend', { k: 'thousand' });

const DE_UNITS: Record<string, number> = {
  ein: 1,
  eins: 1,
  zwei: 2,
  zwo: 2,
  drei: 3,
  vier: 4,
  fünf: 5,
  sechs: 6,
  sieben: 7,
  acht: 8,
  neun: 9,
};
const DE_TEENS: Record<string, number> = {
  zehn: 10,
  elf: 11,
  zwölf: 12,
  dreizehn: 13,
  vierzehn: 14,
  fünfzehn: 15,
  sechzehn: 16,
  siebzehn: 17,
  achtzehn: 18,
  neunzehn: 19,
};
const DE_TENS: Record<string, number> = {
  zwanzig: 20,
  dreißig: 30,
  dreissig: 30,
  vierzig: 40,
  fünfzig: 50,
  sechzig: 60,
  siebzig: 70,
  achtzig: 80,
  neunzig: 90,
};

function germanBelow100(w: string): number | null {
  if (w in DE_TEENS) return DE_TEENS[w];
  if (w in DE_TENS) return DE_TENS[w];
  if (w in DE_UNITS && w !== 'ein') return DE_UNITS[w];
  const m = /^(ein|zwei|drei|vier|fünf|sechs|sieben|acht|neun)und(.+)$/.exec(w);
  if (m && m[2] in DE_TENS) return DE_UNITS[m[1]] + DE_TENS[m[2]];
  return null;
}

function germanBelow1000(w: string): number | null {
  const at = w.indexOf('hundert');
  if (at < 0) return germanBelow100(w);
  const head = w.slice(0, at);
  const tail = w.slice(at + 'hundert'.length);
  const h = head === '' ? 1 : (DE_UNITS[head] ?? null);
  const t = tail === '' ? 0 : germanBelow100(tail.replace(/^und/, ''));
  return h === null || t === null ? null : h * 100 + t;
}

/**
 * A German number word of more than one part ("einundzwanzig", "neunzehnhundertfünfundachtzig",
 * "zweitausendneunundzwanzig"), as its digits; null for anything else. Years said in hundreds
 * ("neunzehnhundert…") are read as years.
 */
export function germanNumber(word: string): string | null {
  const norm = word
    .toLowerCase()
    .replace(/fuenf/g, 'fünf')
    .replace(/zwoelf/g, 'zwölf')
    .replace(/ss/g, 'ß');
  const year =
    /^(elf|zwölf|dreizehn|vierzehn|fünfzehn|sechzehn|siebzehn|achtzehn|neunzehn|zwanzig)hundert(.*)$/.exec(
      norm,
    );
  if (year) {
    const tail = year[2] === '' ? 0 : germanBelow100(year[2].replace(/^und/, ''));
    return tail === null ? null : String((DE_TEENS[year[1]] ?? 20) * 100 + tail);
  }
  const at = norm.indexOf('tausend');
  if (at >= 0) {
    const head = norm.slice(0, at);
    const tail = norm.slice(at + 'tausend'.length).replace(/^und/, '');
    const h = head === '' || head === 'ein' ? 1 : germanBelow1000(head);
    const t = tail === '' ? 0 : germanBelow1000(tail);
    return h === null || t === null ? null : String(h * 1000 + t);
  }
  const v = germanBelow1000(norm);
  return v === null ? null : String(v);
}

const GERMAN_STEM = /zig|ßig|ssig|zehn|hundert|tausend/;

/** The atom a word stands for (lower-cased, accents kept), or null when it is not a number word. */
export function numberAtom(word: string): Atom | null {
  const w = word.toLowerCase();
  if (w.length > 4 && !/^\d+$/.test(w) && !WORDS.has(w) && !GERMAN_STEM.test(w)) return null;
  if (/^\d+$/.test(w)) return { k: 'lit', s: w };
  const known = WORDS.get(w);
  if (known) return known;
  if (w.length > 4) {
    const de = germanNumber(w);
    if (de !== null) return { k: 'lit', s: de };
  }
  return null;
}

export interface Group {
  digits: string;
  /** index of the first and last atom the group was read from */
  from: number;
  to: number;
}

/** Reads atoms as groups of digits; atoms no group takes (a stray "and") are skipped. */
export function readGroups(input: readonly Atom[]): Group[] {
  // French "quatre-vingt(s)" is 80: the two atoms become one, and groups point back at both
  const atoms: Atom[] = [];
  const origin: number[] = [];
  for (let i = 0; i < input.length; i++) {
    const a = input[i];
    const b = input[i + 1];
    if (a.k === 'digit' && a.v === 4 && b?.k === 'tens' && b.vingt) {
      atoms.push({ k: 'tens', v: 80 });
      origin.push(i);
      i++;
    } else {
      atoms.push(a);
      origin.push(i);
    }
  }
  const last = (j: number) => (j + 1 < origin.length ? origin[j + 1] - 1 : input.length - 1);
  const out: Group[] = [];
  let i = 0;
  while (i < atoms.length) {
    const r = readGroup(atoms, i);
    if (r) {
      out.push({ digits: r.s, from: origin[i], to: last(r.next - 1) });
      i = r.next;
    } else i++;
  }
  return out;
}

function readGroup(atoms: readonly Atom[], i: number): { s: string; next: number } | null {
  const a = atoms[i];
  if (!a) return null;
  if (a.k === 'lit') return { s: a.s, next: i + 1 };
  if (a.k === 'mult') {
    const b = atoms[i + 1];
    if (b?.k === 'digit') return { s: String(b.v).repeat(a.n), next: i + 2 };
    if (b?.k === 'lit' && b.s.length === 1) return { s: b.s.repeat(a.n), next: i + 2 };
    return null;
  }
  if (a.k === 'and') return null;
  let next = i;
  let value: number;
  if (a.k === 'thousand') {
    value = 1000;
    next = i + 1;
    const rest = readBelowThousand(atoms, skipAnd(atoms, next));
    if (rest) {
      value += rest.v;
      next = rest.next;
    }
    return { s: String(value), next };
  }
  const head = readBelowThousand(atoms, i);
  if (!head) return null;
  value = head.v;
  next = head.next;
  if (atoms[next]?.k === 'thousand') {
    value *= 1000;
    next++;
    const rest = readBelowThousand(atoms, skipAnd(atoms, next));
    if (rest) {
      value += rest.v;
      next = rest.next;
    }
  }
  // "oh four": a leading zero said as a word stays a digit of its own
  return { s: String(value), next };
}

function skipAnd(atoms: readonly Atom[], i: number): number {
  return atoms[i]?.k === 'and' ? i + 1 : i;
}

function readBelowThousand(atoms: readonly Atom[], i: number): { v: number; next: number } | null {
  const a = atoms[i];
  if (!a) return null;
  if (a.k === 'hundred') {
    const base = a.abs ?? 100;
    const rest = readSmall(atoms, skipAnd(atoms, i + 1));
    return rest ? { v: base + rest.v, next: rest.next } : { v: base, next: i + 1 };
  }
  const s = readSmall(atoms, i);
  if (!s) return null;
  const h = atoms[s.next];
  if (h?.k === 'hundred' && h.abs === undefined && s.v > 0) {
    const rest = readSmall(atoms, skipAnd(atoms, s.next + 1));
    return rest ? { v: s.v * 100 + rest.v, next: rest.next } : { v: s.v * 100, next: s.next + 1 };
  }
  return s;
}

function readSmall(atoms: readonly Atom[], i: number): { v: number; next: number } | null {
  const a = atoms[i];
  if (!a) return null;
  if (a.k === 'digit') return { v: a.v, next: i + 1 };
  if (a.k === 'small') {
    // French "dix-sept" / "dix huit" / "dix-neuf"
    const b = atoms[i + 1];
    if (a.v === 10 && b?.k === 'digit' && b.v >= 7) return { v: 10 + b.v, next: i + 2 };
    return { v: a.v, next: i + 1 };
  }
  if (a.k === 'tens') {
    let j = i + 1;
    const andAt = atoms[j]?.k === 'and';
    if (andAt) j++;
    const b = atoms[j];
    if (b?.k === 'digit' && b.v >= 1) return { v: a.v + b.v, next: j + 1 };
    // French 60/80 take a teen: "soixante-dix", "soixante et onze", "quatre-vingt-dix-neuf"
    if (b?.k === 'small' && b.v < 20 && (a.v === 60 || a.v === 80)) {
      const c = atoms[j + 1];
      if (b.v === 10 && c?.k === 'digit' && c.v >= 7) return { v: a.v + 10 + c.v, next: j + 2 };
      return { v: a.v + b.v, next: j + 1 };
    }
    return { v: a.v, next: i + 1 };
  }
  return null;
}
