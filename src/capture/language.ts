/**
 * Language detection by stopword count across the four languages the built-in analyzer knows.
 * Returns null when the text gives no evidence (callers then fall back to the account language).
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

export function detectLanguage(text: string): KnownLanguage | null {
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
