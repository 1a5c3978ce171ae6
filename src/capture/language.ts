import { franc } from 'franc-min';

/**
 * Language detection: franc (trigram statistics over ~80 languages, franc-min) for text long enough
 * to judge, and a stopword count across the four languages the built-in draft templates know for
 * short text, where trigrams guess. Returns an ISO 639-1 code, or null when the text gives no
 * evidence (callers then fall back to the account language).
 */

export const KNOWN_LANGUAGES = ['en', 'de', 'fr', 'es'] as const;
export type KnownLanguage = (typeof KNOWN_LANGUAGES)[number];

const STOPWORDS: Record<KnownLanguage, ReadonlySet<string>> = {
  en: new Set(
    'the and is are to you i my a of it for this that with have can please would need what your we'.split(
      ' ',
    ),
  ),
  de: new Set(
    'der die das und ist ich nicht mit sie ein eine zu für bitte haben mein wir auf ja nein'.split(' '),
  ),
  fr: new Set('le les et est je vous pas une pour avec des mon nous bonjour merci oui au du'.split(' ')),
  es: new Set('el los las y es yo usted no una para con mi necesito por que hola gracias sí del'.split(' ')),
};

/** Below this many letters franc's trigrams guess; only the stopword count decides. */
const FRANC_MIN_LETTERS = 40;

export function detectLanguage(text: string): string | null {
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  const byStopwords = detectByStopwords(text);
  if (letters < FRANC_MIN_LETTERS) return byStopwords;
  const code = franc(text, { minLength: 10 });
  return ISO_639_3_TO_1[code] ?? byStopwords;
}

/** The four template languages by stopword count; null without evidence. */
export function detectByStopwords(text: string): KnownLanguage | null {
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  let best: KnownLanguage | null = null;
  let bestCount = 0;
  for (const lang of KNOWN_LANGUAGES) {
    let count = 0;
    for (const w of words) if (STOPWORDS[lang].has(w)) count++;
    if (count > bestCount) {
      best = lang;
      bestCount = count;
    }
  }
  return best;
}

/** "pt-BR" → "pt", "EN" → "en": the primary subtag in lower case, or null when not a language code. */
export function primaryLanguage(code: string | null | undefined): string | null {
  const m = /^([a-z]{2,3})(?:[-_][a-z0-9]{2,8})*$/i.exec(code?.trim() ?? '');
  return m ? m[1].toLowerCase() : null;
}

/**
 * franc-min's languages (ISO 639-3) that have an ISO 639-1 code. Macrolanguage members map to the
 * macrolanguage's code (arb → ar, pes → fa, zlm → ms, swh → sw, uzn → uz, azj → az, npi → ne, cmn → zh).
 */
// biome-ignore format: a lookup table reads better in rows
const ISO_639_3_TO_1: Record<string, string> = {
  eng: 'en', spa: 'es', por: 'pt', ind: 'id', fra: 'fr', deu: 'de', jav: 'jv', vie: 'vi', ita: 'it',
  tur: 'tr', pol: 'pl', swh: 'sw', sun: 'su', ron: 'ro', hau: 'ha', fuv: 'ff', bos: 'bs', hrv: 'hr',
  nld: 'nl', srp: 'sr', ckb: 'ku', yor: 'yo', uzn: 'uz', zlm: 'ms', ibo: 'ig', tgl: 'tl', hun: 'hu',
  azj: 'az', ces: 'cs', run: 'rn', plt: 'mg', qug: 'qu', nya: 'ny', zyb: 'za', kin: 'rw', zul: 'zu',
  swe: 'sv', lin: 'ln', som: 'so', rus: 'ru', ukr: 'uk', bel: 'be', bul: 'bg', kaz: 'kk', arb: 'ar',
  urd: 'ur', pes: 'fa', pbu: 'ps', hin: 'hi', mar: 'mr', npi: 'ne', cmn: 'zh', jpn: 'ja', kor: 'ko',
  ell: 'el', heb: 'he', tha: 'th', kat: 'ka', hye: 'hy', ben: 'bn', tam: 'ta', tel: 'te', kan: 'kn',
  mal: 'ml', guj: 'gu', pan: 'pa', ori: 'or', amh: 'am', sin: 'si', mya: 'my', khm: 'km', lao: 'lo',
  bod: 'bo', div: 'dv', iii: 'ii', tir: 'ti',
};
