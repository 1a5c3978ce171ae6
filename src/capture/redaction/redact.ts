import {
  abaValid,
  dniValid,
  germanDocumentValid,
  IBAN_LENGTHS,
  ibanValid,
  luhnValid,
  nirValid,
  ssnPlausible,
  steuerIdValid,
} from './checksums.ts';
import { type Atom, numberAtom, readGroups } from './numbers.ts';

/**
 * Finds what a caller must not find stored: card numbers, their expiry and security code, national
 * ids (US SSN, Spanish DNI/NIE, French NIR, German Steuer-ID and identity card), bank details (IBAN,
 * routing and account numbers), dates of birth and passport numbers — written ("4111 1111 …") or
 * spoken ("four one one one …", "cuarenta y uno …"), in English, Spanish, German and French — and
 * answers their character spans. Pure: no I/O. docs/capture.md "Redaction" says what it catches
 * and what it cannot.
 *
 * Two kinds of evidence:
 * - a number that proves itself: a Luhn-valid card number, a mod-97 IBAN, a NIR with its key, a DNI
 *   with its letter, an SSN written 3-2-4;
 * - a number said in its context: the words around it ("card", "security code", "date of birth",
 *   "IBAN", "Reisepass" …) make a run of digits, a date or a code the thing they name.
 */

export type PiiKind =
  | 'card_number'
  | 'security_code'
  | 'expiry_date'
  | 'national_id'
  | 'bank_account'
  | 'date_of_birth'
  | 'passport_number';

export const PII_KINDS: readonly PiiKind[] = [
  'card_number',
  'security_code',
  'expiry_date',
  'national_id',
  'bank_account',
  'date_of_birth',
  'passport_number',
];

/** The visible token that replaces each kind. */
export const PII_TOKEN: Record<PiiKind, string> = {
  card_number: '[card number]',
  security_code: '[security code]',
  expiry_date: '[expiry date]',
  national_id: '[national id]',
  bank_account: '[bank account]',
  date_of_birth: '[date of birth]',
  passport_number: '[passport number]',
};

export interface PiiSpan {
  /** UTF-16 offsets into the text, end exclusive */
  start: number;
  end: number;
  kind: PiiKind;
}

// ---------------------------------------------------------------------------------------------
// Tokens

type TokType = 'word' | 'num' | 'alnum' | 'punct' | 'nl' | 'label';
interface Tok {
  s: string;
  lo: string;
  start: number;
  end: number;
  type: TokType;
  atom: Atom | null;
}

const TOKEN_RE = /\n|[\p{L}\p{M}\d]+(?:['’][\p{L}\p{M}]+)*|[^\s]/gu;
const LABELS = new Set(['agent', 'customer', 'speaker']);

function tokenize(text: string): Tok[] {
  const out: Tok[] = [];
  for (const m of text.matchAll(TOKEN_RE)) {
    const s = m[0];
    const start = m.index;
    let type: TokType;
    if (s === '\n') type = 'nl';
    else if (/^\d+$/.test(s)) type = 'num';
    else if (/^[\p{L}\p{M}'’]+$/u.test(s)) type = 'word';
    else if (/^[\p{L}\p{M}\d]+$/u.test(s)) type = 'alnum';
    else type = 'punct';
    const lo = s.toLowerCase();
    out.push({
      s,
      lo,
      start,
      end: start + s.length,
      type,
      atom: type === 'num' || type === 'word' ? numberAtom(lo) : null,
    });
  }
  // "Customer:" at the start of a line is a speaker label, not a word
  for (let i = 0; i < out.length - 1; i++) {
    const atLineStart = i === 0 || out[i - 1].type === 'nl';
    if (atLineStart && LABELS.has(out[i].lo) && out[i + 1].s === ':') {
      out[i].type = 'label';
      out[i + 1].type = 'label';
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Word lists

const FILLERS = new Set(
  'uh um umm uhm er erm ah eh hmm mm äh ähm öhm hm euh heu bah pues este dash hyphen guion guión bindestrich strich tiret'.split(
    ' ',
  ),
);
const BACKCHANNEL = new Set(
  `okay ok yes yeah yep yup uh-huh huh mhm mm-hmm right sure got it go on ahead continue next then perfect great
   sí si vale claro ajá aha bien sigue siga perfecto ja genau gut weiter prima richtig oui d'accord daccord continuez
   allez-y parfait très`.split(/\s+/),
);
const RUN_PUNCT = new Set(['-', ',', '.', '–', '—', '…']);

const MONTHS = new Set(
  `january february march april may june july august september october november december jan feb mar apr jun jul aug
   sep sept oct nov dec enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre
   diciembre januar jänner februar märz maerz mai juni juli oktober dezember janvier février fevrier mars avril juin
   juillet août aout septembre octobre novembre décembre decembre`.split(/\s+/),
);
const ORDINAL_WORDS = new Set(
  `first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth
   sixteenth seventeenth eighteenth nineteenth twentieth thirtieth primero primer premier première erste ersten
   erster zweite zweiten dritte dritten vierte vierten fünfte fünften sechste sechsten siebte siebten achte achten
   neunte neunten zehnte zehnten elfte elften zwölfte zwölften`.split(/\s+/),
);
const DATE_JOINERS = new Set([
  '/',
  '-',
  '.',
  ',',
  'of',
  'the',
  'de',
  'del',
  'le',
  'am',
  'den',
  'im',
  'el',
  'slash',
  'barra',
  'sur',
  'en',
  'in',
]);

function isOrdinal(t: Tok): boolean {
  if (t.type === 'alnum') return /^\d{1,2}(st|nd|rd|th|er|re|e|ème|eme|º|ª|o|a)$/i.test(t.s);
  if (t.type !== 'word') return false;
  if (ORDINAL_WORDS.has(t.lo)) return true;
  return /^\p{L}+(zehnten?|zigsten?|ßigsten?)$/u.test(t.lo);
}

// Context words, as regular expressions over the lower-cased text.
const CONTEXT: Record<string, RegExp> = {
  card: /\b(card|credit|debit|visa|master ?card|amex|american express|discover|tarjeta|cr[ée]dito|d[ée]bito|karte|kreditkarte|ec-karte|girocard|kartennummer|carte|cb)\b/gu,
  expiry:
    /\b(expir\p{L}*|exp|valid (thru|through|until)|good (thru|through)|caduc\p{L}*|vencimiento|vence|v[áa]lida hasta|g[üu]ltig bis|ablaufdatum|l[äa]uft ab|ablauf|verfallsdatum|verfall|valable jusqu\p{L}*|date de validit[ée]|date d'expiration|fin de validit[ée])\b/gu,
  cvv: /\b(cvv2?|cvc2?|cryptogramme|kartenpr[üu]fnummer|pr[üu]fnummer|pr[üu]fziffer|sicherheitscode|código de seguridad|codigo de seguridad|code de s[ée]curit[ée]|code de v[ée]rification|security code|verification code|three digits on the back|three-digit code|3-digit code|tres (n[úu]meros|d[íi]gitos) de atr[áa]s|drei ziffern|trois chiffres)\b/gu,
  ssn: /\b(social security|ssn|social|seguro social|seguridad social)\b/gu,
  acronymId: /\b(NIE|NIF|NIR)\b/gu,
  acronymBank: /\b(ABA|RIB|BIC|BLZ)\b/gu,
  acronymCvv: /\b(CSC|CID)\b/gu,
  acronymDob: /\b(DOB|D\.O\.B\.?)/gu,
  nationalId:
    /\b(national id|id number|identity number|id card|identification number|dni|documento de identidad|documento nacional|c[ée]dula|carnet de identidad|personalausweis\p{L}*|ausweis\p{L}*|steuer-?id|steuer-identifikationsnummer|steueridentifikationsnummer|identifikationsnummer|steuernummer|tax id|tax identification|carte d'identit[ée]|s[ée]curit[ée] sociale|num[ée]ro de s[ée]cu|s[ée]cu|insee|carte vitale|sozialversicherungsnummer|rentenversicherungsnummer|ssn|social security)\b/gu,
  bank: /\b(bank|banco|bancaria|bancario|banque|bancaire|checking|savings|routing|iban|bankleitzahl|kontonummer|bankverbindung|konto|sort code|cuenta bancaria|compte bancaire|relev[ée] d'identit[ée] bancaire|swift)\b/gu,
  iban: /\b(iban)\b/gu,
  dob: /\b(date of birth|birth ?date|born( on| in)?|birthday|fecha de nacimiento|naci[óo]|nac[íi]|nacido|nacida|cumplea[ñn]os|geburtsdatum|geboren|geburtstag|date de naissance|n[ée]e? le|n[ée]e? en|je suis n[ée]e?|anniversaire)\b/gu,
  passport: /\b(passport|pasaporte|reisepass\p{L}*|passnummer|pass-nummer|passeport)\b/gu,
};

interface Hit {
  start: number;
  end: number;
}

/**
 * `\b` as a word boundary over letters and digits of any script (JavaScript's own is ASCII-only):
 * every context expression is `\b(…)\b`, so the first is "no letter before", the last "none after".
 */
const UNICODE_CONTEXT = Object.fromEntries(
  Object.entries(CONTEXT).map(([k, re]) => {
    const src = re.source.replace(/^\\b/, '(?<![\\p{L}\\p{N}])').replace(/\\b$/, '(?![\\p{L}\\p{N}])');
    return [k, new RegExp(src.replaceAll('\\b', ''), re.flags)];
  }),
) as Record<keyof typeof CONTEXT, RegExp>;

function hits(lower: string, re: RegExp): Hit[] {
  const out: Hit[] = [];
  for (const m of lower.matchAll(re)) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

function near(list: readonly Hit[], start: number, end: number, before: number, after: number): boolean {
  return list.some(
    (h) =>
      (h.end <= start && start - h.end <= before) ||
      (h.start >= end && h.start - end <= after) ||
      (h.start < end && h.end > start),
  );
}

// ---------------------------------------------------------------------------------------------
// Runs of digits (written or spoken), joined over fillers and over a listener's backchannel turn

interface Run {
  /** token indices of the numeric tokens, in order */
  toks: number[];
  groups: { digits: string; first: number; last: number; spoken: boolean }[];
  digits: string;
  start: number;
  end: number;
}

function isNumeric(t: Tok): boolean {
  return t.atom !== null;
}

/** Past a line break: the label, a backchannel line ("okay", "mhm") and the next label; the index of the next numeric token or -1. */
function acrossTurn(toks: readonly Tok[], i: number, depth = 0): number {
  let j = i + 1;
  while (toks[j]?.type === 'label') j++;
  if (toks[j] && isNumeric(toks[j])) return j;
  if (depth > 1) return -1;
  let words = 0;
  while (toks[j] && toks[j].type !== 'nl') {
    const t = toks[j];
    if (t.type === 'word' && (BACKCHANNEL.has(t.lo) || FILLERS.has(t.lo))) words++;
    else if (t.type !== 'punct') return -1;
    j++;
  }
  if (!toks[j] || words > 5) return -1;
  return acrossTurn(toks, j, depth + 1);
}

function findRuns(toks: readonly Tok[]): Run[] {
  const runs: Run[] = [];
  let i = 0;
  while (i < toks.length) {
    if (!isNumeric(toks[i]) || toks[i].atom?.k === 'and') {
      i++;
      continue;
    }
    const members: number[] = [i];
    let j = i + 1;
    while (j < toks.length) {
      const t = toks[j];
      if (isNumeric(t)) {
        members.push(j);
        j++;
      } else if ((t.type === 'punct' && RUN_PUNCT.has(t.s)) || (t.type === 'word' && FILLERS.has(t.lo))) {
        j++;
      } else if (t.type === 'nl') {
        const k = acrossTurn(toks, j);
        if (k < 0) break;
        j = k;
      } else break;
    }
    // a trailing "and" or "double" belongs to what follows
    while (members.length > 1 && ['and', 'mult'].includes(toks[members[members.length - 1]].atom?.k ?? ''))
      members.pop();
    const atoms = members.map((m) => toks[m].atom as Atom);
    const groups = readGroups(atoms).map((g) => ({
      digits: g.digits,
      first: members[g.from],
      last: members[g.to],
      spoken: atoms.slice(g.from, g.to + 1).some((a) => a.k !== 'lit'),
    }));
    if (groups.length > 0) {
      runs.push({
        toks: members,
        groups,
        digits: groups.map((g) => g.digits).join(''),
        start: toks[groups[0].first].start,
        end: toks[groups[groups.length - 1].last].end,
      });
    }
    i = Math.max(j, i + 1);
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Phrases after a context word: a date, a code, an id

type PhraseShape = 'date' | 'code' | 'id';

function isDateValue(t: Tok): boolean {
  return isNumeric(t) && t.atom?.k !== 'and' ? true : (t.type === 'word' && MONTHS.has(t.lo)) || isOrdinal(t);
}

function isIdValue(t: Tok): boolean {
  if (t.type === 'num' || t.type === 'alnum') return true;
  if (t.type === 'word' && isNumeric(t) && t.atom?.k !== 'and') return true;
  return t.type === 'word' && t.s.length === 1 && /\p{Lu}/u.test(t.s);
}

/** The phrase of the given shape that starts within a few words after `from`; null when none does. */
function phraseAfter(toks: readonly Tok[], from: number, shape: PhraseShape, maxSkip = 6): Hit | null {
  let i = toks.findIndex((t) => t.start >= from);
  if (i < 0) return null;
  let budget = maxSkip;
  // a phrase that does not fit ("au dos" read as Spanish "dos") is skipped like a word
  for (let tries = 0; tries < 4; tries++) {
    const r = phraseAt(toks, i, shape, budget);
    if (!r) return null;
    if (r.hit) return r.hit;
    budget = r.budget - 1;
    i = r.next;
    if (budget < 0) return null;
  }
  return null;
}

function phraseAt(
  toks: readonly Tok[],
  start: number,
  shape: PhraseShape,
  maxSkip: number,
): { hit: Hit | null; next: number; budget: number } | null {
  let i = start;
  const value =
    shape === 'date'
      ? isDateValue
      : shape === 'code'
        ? (t: Tok) => isNumeric(t) && t.atom?.k !== 'and'
        : isIdValue;
  let skipped = 0;
  while (i < toks.length && !value(toks[i])) {
    const t = toks[i];
    // an earlier redaction's token: what the context word asked for was said there
    if (t.s === '[') return null;
    if (t.type === 'word' || t.type === 'alnum') skipped++;
    if (skipped > maxSkip) return null;
    i++;
  }
  if (i >= toks.length) return null;
  let last = i;
  let j = i + 1;
  let count = 1;
  while (j < toks.length && count < 16) {
    const t = toks[j];
    if (value(t)) {
      last = j;
      count++;
    } else if (
      shape === 'date' &&
      (DATE_JOINERS.has(t.lo) || (t.type === 'punct' && t.s !== '?' && t.s !== '!' && t.s !== ';'))
    ) {
      // joiner: kept only when a value follows
    } else if (shape !== 'date' && t.type === 'punct' && ['-', '.', '/', ','].includes(t.s)) {
      // same
    } else if (t.type === 'word' && FILLERS.has(t.lo)) {
      // same
    } else break;
    j++;
  }
  const span = { start: toks[i].start, end: toks[last].end };
  const miss = { hit: null, next: last + 1, budget: maxSkip - skipped };
  if (shape === 'code') {
    const atoms = toks
      .slice(i, last + 1)
      .filter(isNumeric)
      .map((t) => t.atom as Atom);
    const digits = readGroups(atoms)
      .map((g) => g.digits)
      .join('');
    if (digits.length < 3 || digits.length > 4) return miss;
  }
  if (shape === 'id') {
    const chars = toks.slice(i, last + 1).reduce((n, t) => n + (t.type === 'word' ? 1 : t.s.length), 0);
    if (chars < 5) return miss;
  }
  if (shape === 'date' && !dateShaped(toks.slice(i, last + 1))) return miss;
  return { hit: span, next: last + 1, budget: maxSkip - skipped };
}

/** A month, an ordinal, a year, or day and month in numbers: "04/29", "March 3rd", "3. März 1985", "1985". */
function dateShaped(ts: readonly Tok[]): boolean {
  if (ts.some((t) => (t.type === 'word' && MONTHS.has(t.lo)) || isOrdinal(t))) return true;
  const groups = readGroups(ts.filter((t) => isNumeric(t)).map((t) => t.atom as Atom));
  // in numbers alone: days, months and years ("3/3/1985", "nineteen eighty-five"), or one of them written together ("03031985")
  const part = (d: string) => /^\d{1,2}$/.test(d) || /^(19|20)\d\d$/.test(d);
  if (groups.length >= 2) return groups.length <= 4 && groups.every((g) => part(g.digits));
  return groups.some((g) => /^(19|20)\d\d$/.test(g.digits) || /^\d{4}(\d{2}|\d{4})$/.test(g.digits));
}

// ---------------------------------------------------------------------------------------------

const CARD_FIRST = /^[2-6]/;

/** The tokens of an earlier redaction, blanked (same length) so their words are no context: redacting twice changes nothing. */
const TOKENS_RE = new RegExp(
  Object.values(PII_TOKEN)
    .map((t) => t.replace(/[[\]]/g, '\\$&'))
    .join('|'),
  'g',
);

/**
 * The last texts' spans: a call's transcript is redacted three times in a row — for the audio's
 * silencing (audio-spans.ts), before it is first written (queueTranscript) and with the analysis
 * (storeAnalysis: the same text again when nothing was found) — and findPii is pure. At most
 * MEMO_ENTRIES texts of at most MEMO_MAX_CHARS each; callers get their own copies of the spans.
 */
const MEMO_ENTRIES = 32;
const MEMO_MAX_CHARS = 100_000;
const memo = new Map<string, readonly PiiSpan[]>();

export function findPii(input: string): PiiSpan[] {
  if (input.length > MEMO_MAX_CHARS) return findPiiIn(input);
  let spans = memo.get(input);
  if (spans) {
    // most recently used last
    memo.delete(input);
  } else {
    spans = findPiiIn(input);
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
  }
  memo.set(input, spans);
  return spans.map((s) => ({ ...s }));
}

function findPiiIn(input: string): PiiSpan[] {
  if (!/[\d\p{L}]/u.test(input)) return [];
  const text = input.includes('[') ? input.replace(TOKENS_RE, (t) => `[${'x'.repeat(t.length - 2)}]`) : input;
  const lower = text.toLowerCase();
  const toks = tokenize(text);
  const ctx = Object.fromEntries(
    Object.entries(UNICODE_CONTEXT).map(([k, re]) => [k, hits(k.startsWith('acronym') ? text : lower, re)]),
  ) as Record<keyof typeof CONTEXT, Hit[]>;
  ctx.nationalId.push(...ctx.acronymId);
  ctx.bank.push(...ctx.acronymBank);
  ctx.cvv.push(...ctx.acronymCvv);
  ctx.dob.push(...ctx.acronymDob);
  const spans: PiiSpan[] = [];
  const add = (start: number, end: number, kind: PiiKind) => {
    if (end <= start) return;
    if (!text.slice(start, end).includes('\n')) {
      spans.push({ start, end, kind });
      return;
    }
    // over a turn: each line's own part, the labels and a listener's "okay" left as they were
    let line: Tok[] = [];
    const flush = () => {
      if (line.length) spans.push({ start: line[0].start, end: line[line.length - 1].end, kind });
      line = [];
    };
    for (const t of toks) {
      if (t.start < start || t.end > end) continue;
      if (t.type === 'nl') flush();
      else if (
        t.type !== 'label' &&
        !(t.type === 'punct' && line.length === 0) &&
        !(t.type === 'word' && !isNumeric(t) && (BACKCHANNEL.has(t.lo) || FILLERS.has(t.lo)))
      )
        line.push(t);
    }
    flush();
  };
  const runs = findRuns(toks);
  const cards: Hit[] = [];

  for (const run of runs) {
    const inCard = near(ctx.card, run.start, run.end, 150, 40) || near(ctx.cvv, run.start, run.end, 150, 0);
    const n = run.digits.length;
    // cards: a Luhn window of whole groups
    let card: Hit | null = null;
    for (let a = 0; a < run.groups.length && !card; a++) {
      let d = '';
      for (let b = a; b < run.groups.length; b++) {
        d += run.groups[b].digits;
        if (d.length > 19) break;
        if (d.length < 13 || !luhnValid(d)) continue;
        const whole = a === 0 && b === run.groups.length - 1;
        const fours = run.groups.slice(a, b).every((g) => g.digits.length === 4);
        const amex =
          b - a === 2 && run.groups[a].digits.length === 4 && run.groups[a + 1].digits.length === 6;
        const spoken = run.groups.some((g) => g.spoken);
        const plus = a === 0 && /\+\s*$/.test(text.slice(Math.max(0, run.start - 3), run.start));
        const cardLike = CARD_FIRST.test(d) && !plus && (whole || fours || amex || spoken);
        if (inCard || cardLike) {
          card = { start: toks[run.groups[a].first].start, end: toks[run.groups[b].last].end };
          if (n <= 40) card = { start: run.start, end: run.end };
        }
      }
    }
    if (!card && inCard && n >= 13 && n <= 19 && !(n === 15 && nirValid(run.digits))) {
      card = { start: run.start, end: run.end };
    }
    if (card) {
      add(card.start, card.end, 'card_number');
      cards.push(card);
      continue;
    }
    // national ids that prove themselves
    if (n === 15 && nirValid(run.digits)) {
      add(run.start, run.end, 'national_id');
      continue;
    }
    const lens = run.groups.map((g) => g.digits.length).join(',');
    if (n === 9 && lens === '3,2,4' && !run.groups.some((g) => g.spoken) && ssnPlausible(run.digits)) {
      add(run.start, run.end, 'national_id');
      continue;
    }
    // DNI / NIE with its letter after (and the NIE's letter before)
    const after = toks[run.toks[run.toks.length - 1] + 1];
    const afterLetter = after?.type === 'word' && after.s.length === 1 ? after : null;
    const before = toks[run.toks[0] - 1];
    const nieLetter = before?.type === 'word' && /^[xyz]$/i.test(before.s) ? before.s.toUpperCase() : '';
    if (
      afterLetter &&
      ((n === 8 && !nieLetter) || (n === 7 && nieLetter)) &&
      dniValid(nieLetter + run.digits + afterLetter.s)
    ) {
      add(nieLetter ? before.start : run.start, afterLetter.end, 'national_id');
      continue;
    }
    const inSsn = near(ctx.ssn, run.start, run.end, 120, 30);
    const inId = near(ctx.nationalId, run.start, run.end, 150, 30);
    if ((inSsn || inId) && n === 9 && (inId || ssnPlausible(run.digits))) {
      add(run.start, run.end, 'national_id');
      continue;
    }
    if (
      n === 11 &&
      steuerIdValid(run.digits) &&
      (inId || !/[+(]/.test(text.slice(Math.max(0, run.start - 2), run.start)))
    ) {
      add(run.start, run.end, 'national_id');
      continue;
    }
    if (inId && n >= 7 && n <= 15) {
      add(run.start, afterLetter?.end ?? run.end, 'national_id');
      continue;
    }
    // bank details
    const inBank = near(ctx.bank, run.start, run.end, 150, 30);
    if (inBank && ((n === 9 && abaValid(run.digits)) || (n >= 4 && n <= 34))) {
      add(run.start, run.end, 'bank_account');
    }
  }

  // a card said in two halves with a question between ("… and the rest?")
  for (let r = 0; r + 1 < runs.length; r++) {
    const a = runs[r];
    const b = runs[r + 1];
    const both = a.digits + b.digits;
    if (b.start - a.end > 200 || a.digits.length < 4 || b.digits.length < 4) continue;
    if (
      both.length >= 13 &&
      both.length <= 19 &&
      luhnValid(both) &&
      near(ctx.card, a.start, b.end, 150, 40)
    ) {
      add(a.start, a.end, 'card_number');
      add(b.start, b.end, 'card_number');
      cards.push({ start: a.start, end: b.end });
    }
  }

  // written IBANs ("DE89 3704 0044 0532 0130 00", "GB29 NWBK 6016 1331 9268 19")
  for (const m of text.matchAll(/\b([A-Z]{2})[ -]?(\d{2})((?:[ -]?[A-Z0-9]){8,32})/gi)) {
    const cc = m[1].toUpperCase();
    const len = IBAN_LENGTHS[cc];
    if (!len) continue;
    let compact = '';
    let end = m.index;
    for (let k = 0; k < m[0].length && compact.length < len; k++) {
      const ch = m[0][k];
      if (ch !== ' ' && ch !== '-') compact += ch.toUpperCase();
      end = m.index + k + 1;
    }
    if (compact.length === len && ibanValid(compact)) add(m.index, end, 'bank_account');
  }
  // spoken IBANs: the country's letters, then its digits ("E S nine one …", "DE eight nine …")
  for (const run of runs) {
    const i0 = run.toks[0];
    const p1 = toks[i0 - 1];
    const p2 = toks[i0 - 2];
    let cc = '';
    let from = -1;
    if (p1?.type === 'word' && p1.s.length === 2) {
      cc = p1.s.toUpperCase();
      from = p1.start;
    } else if (p1?.type === 'word' && p1.s.length === 1 && p2?.type === 'word' && p2.s.length === 1) {
      cc = (p2.s + p1.s).toUpperCase();
      from = p2.start;
    }
    const len = IBAN_LENGTHS[cc];
    if (len && run.digits.length >= len - 2 && ibanValid(cc + run.digits.slice(0, len - 2)))
      add(from, run.end, 'bank_account');
  }
  // written identity documents: DNI/NIE with letter, German identity card
  for (const t of toks) {
    if (t.type !== 'alnum') continue;
    if (dniValid(t.s) || germanDocumentValid(t.s)) add(t.start, t.end, 'national_id');
  }
  for (const m of text.matchAll(/\b(?:([XYZ])[- ]?)?(\d{7,8})[- ]?([A-Z])\b/gi)) {
    if (dniValid((m[1] ?? '') + m[2] + m[3])) add(m.index, m.index + m[0].length, 'national_id');
  }

  // phrases after their context words
  const cardNear = (at: number) =>
    near(ctx.card, at, at, 400, 200) ||
    cards.some((c) => Math.abs(c.end - at) < 400 || Math.abs(c.start - at) < 400);
  for (const h of ctx.expiry) {
    if (!cardNear(h.start)) continue;
    const p = phraseAfter(toks, h.end, 'date');
    if (p) add(p.start, p.end, 'expiry_date');
  }
  for (const h of ctx.cvv) {
    const weak = /security code|verification code|sicherheitscode|seguridad|s[ée]curit|v[ée]rification/.test(
      lower.slice(h.start, h.end),
    );
    if (weak && !cardNear(h.start)) continue;
    const p = phraseAfter(toks, h.end, 'code', 8);
    if (p) add(p.start, p.end, 'security_code');
  }
  // "4111 1111 1111 1111, 04/29, 123": an expiry written right after a card, and its code after that
  for (const c of cards) {
    const m = /^[\s,.;:-]*(?:(?:and|y|et|und)\s+)?(\d{1,2}\s?\/\s?\d{2,4})/i.exec(
      text.slice(c.end, c.end + 40),
    );
    if (!m) continue;
    const s = c.end + m[0].length - m[1].length;
    add(s, s + m[1].length, 'expiry_date');
    const code = /^[\s,.;:-]*(?:(?:and|y|et|und)\s+)?(\d{3,4})\b/i.exec(
      text.slice(s + m[1].length, s + m[1].length + 30),
    );
    if (code) {
      const cs = s + m[1].length + code[0].length - code[1].length;
      add(cs, cs + code[1].length, 'security_code');
    }
  }
  for (const h of ctx.dob) {
    const p = phraseAfter(toks, h.end, 'date', 4);
    if (p) add(p.start, p.end, 'date_of_birth');
  }
  for (const h of ctx.passport) {
    const p = phraseAfter(toks, h.end, 'id');
    if (p) add(p.start, p.end, 'passport_number');
  }
  for (const h of ctx.nationalId) {
    const p = phraseAfter(toks, h.end, 'id', 5);
    if (p) add(p.start, p.end, 'national_id');
  }
  for (const h of ctx.iban) {
    const p = phraseAfter(toks, h.end, 'id', 5);
    if (p) add(p.start, p.end, 'bank_account');
  }
  return mergeSpans(spans);
}

/** Sorted, overlapping spans merged (the longer one's kind wins). */
export function mergeSpans(spans: readonly PiiSpan[]): PiiSpan[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: PiiSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) {
      if (s.end - s.start > last.end - last.start) last.kind = s.kind;
      last.end = Math.max(last.end, s.end);
    } else out.push({ ...s });
  }
  return out;
}

/** The text with each span replaced by its token. */
export function applySpans(text: string, spans: readonly PiiSpan[]): string {
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + PII_TOKEN[s.kind];
    at = s.end;
  }
  return out + text.slice(at);
}

export interface Redacted {
  text: string;
  spans: PiiSpan[];
}

export function redactText(text: string): Redacted {
  const spans = findPii(text);
  return { text: spans.length ? applySpans(text, spans) : text, spans };
}
