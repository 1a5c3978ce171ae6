import * as chrono from 'chrono-node';
import { type CountryCode, findPhoneNumbersInText, isSupportedCountry } from 'libphonenumber-js';

/**
 * The built-in analyzer's extraction rules over what the customer said. Where a library does the
 * job better than a hand rule it is used: chrono-node for dates and times (in the call's language),
 * libphonenumber-js for phone numbers. The rest are small regular expressions, in English with a few
 * German, French and Spanish phrasings. Each returns null when nothing fits. They are heuristics,
 * honest about it: a model provider (ANALYSIS_PROVIDER=openai) replaces the whole analyzer.
 */

type Chrono = typeof chrono.casual;

const NAME = String.raw`(\p{Lu}[\p{L}'’-]+(?:\s+\p{Lu}[\p{L}'’-]+){0,2})`;
const NAME_LEADS = [
  '[Mm]y name is',
  "[Mm]y name's",
  '[Tt]his is',
  "[Ii]t's",
  "I'm",
  'I am',
  '[Mm]ein Name ist',
  '[Hh]ier (?:ist|spricht)',
  "[Jj]e m'appelle",
  '[Mm]on nom est',
  '[Mm]e llamo',
  '[Mm]i nombre es',
];
const NAME_RE = new RegExp(String.raw`(?:^|[^\p{L}])(?:${NAME_LEADS.join('|')})\s+${NAME}`, 'gu');
/** Capitalised words that follow "I'm"/"This is" without being a name. */
const NOT_NAMES = new Set(
  'calling looking interested just not here the a sorry fine good glad happy from with so also still really very'.split(
    ' ',
  ),
);

export function extractName(text: string, organizationName = ''): string | null {
  const org = organizationName.trim().toLowerCase();
  for (const m of text.matchAll(NAME_RE)) {
    const words = m[1].split(/\s+/);
    while (words.length && NOT_NAMES.has(words[words.length - 1].toLowerCase())) words.pop();
    if (!words.length || NOT_NAMES.has(words[0].toLowerCase())) continue;
    const name = words.join(' ');
    if (org && (org.includes(name.toLowerCase()) || name.toLowerCase().includes(org))) continue;
    return name;
  }
  return null;
}

const SERVICE_RE = new RegExp(
  [
    String.raw`\b(?:i need|we need|i'd like|i would like|i want|we want|i'm looking for|we're looking for|looking for|interested in|need help with|need someone to)\s+(?:to\s+)?(?:get\s+|have\s+)?([^.!?]{3,160})`,
    String.raw`\b(?:ich brauche|wir brauchen|ich möchte|ich hätte gerne|ich suche)\s+([^.!?]{3,160})`,
    String.raw`\b(?:j'ai besoin d[e']|nous avons besoin d[e']|je voudrais|je cherche)\s*([^.!?]{3,160})`,
    String.raw`\b(?:necesito|necesitamos|quisiera|quiero|busco)\s+([^.!?]{3,160})`,
  ].join('|'),
  'iu',
);

export function extractService(text: string): string | null {
  const m = SERVICE_RE.exec(text);
  const phrase = m?.slice(1).find((g) => g !== undefined);
  if (!phrase) return null;
  return phrase.split(/,\s|\s(?:because|but|and i|and we|weil|parce que|porque)\s/i)[0].trim() || null;
}

const TIME = String.raw`(?:\s+(?:morning|afternoon|evening))?(?:\s+at\s+\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?)?`;
const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december';
const DATE_RE = new RegExp(
  [
    String.raw`\b(?:(?:next|this|on)\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)${TIME}`,
    String.raw`\b(?:tomorrow|today|tonight|next week|this week|next month|end of the week)${TIME}`,
    String.raw`\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b${TIME}`,
    String.raw`\b\d{1,2}(?:st|nd|rd|th)?\s+of\s+(?:${MONTHS})${TIME}`,
    String.raw`\b\d{4}-\d{2}-\d{2}\b`,
    String.raw`\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b`,
    String.raw`\b\d{1,2}\.\d{1,2}\.\d{2,4}\b`,
    String.raw`\b(?:übermorgen|nächste woche|montag|dienstag|mittwoch|donnerstag|freitag|samstag)\b`,
    String.raw`\b(?:demain|la semaine prochaine|lundi|mardi|mercredi|jeudi|vendredi|samedi)\b`,
    String.raw`\b(?:mañana|la próxima semana|lunes|martes|miércoles|jueves|viernes|sábado)\b`,
  ].join('|'),
  'iu',
);

/** chrono-node's parser per ISO 639-1 language (chrono.en is the casual English one). */
const CHRONO: Record<string, Chrono> = {
  en: chrono.casual,
  de: chrono.de.casual,
  fr: chrono.fr.casual,
  es: chrono.es.casual,
  it: chrono.it.casual,
  nl: chrono.nl.casual,
  pt: chrono.pt.casual,
  sv: chrono.sv.casual,
  fi: chrono.fi.casual,
  ru: chrono.ru.casual,
  uk: chrono.uk.casual,
  ja: chrono.ja.casual,
  zh: chrono.zh.casual,
  vi: chrono.vi.casual,
  id: chrono.id.casual,
};
/** A leading preposition chrono keeps ("am Montag", "on Friday"): the date is what follows. */
const LEADING_PREPOSITION = /^(?:on|am|le|el)\s+/i;

/**
 * The first date or time the text mentions, as said ("tomorrow morning at 9 am", "Montag"): chrono-node
 * in the call's language, then in English, then the small phrase list above for what chrono leaves
 * out ("end of the week"). The phrase is kept as spoken: the call's date is not known here, and
 * "tomorrow" means nothing to a CRM without it.
 */
export function extractPreferredDate(text: string, language: string | null = null): string | null {
  const parsers = [...new Set([language && CHRONO[language], CHRONO.en].filter((p): p is Chrono => !!p))];
  for (const parser of parsers) {
    const found = parser
      .parse(text)[0]
      ?.text.trim()
      .replace(/[,.;:]+$/, '');
    if (found) return found.replace(LEADING_PREPOSITION, '');
  }
  return DATE_RE.exec(text)?.[0].trim() ?? null;
}

/**
 * Phone numbers the customer said ("call me on (415) 555-2671"), in international format, at most
 * three: libphonenumber-js reads national numbers in `country`'s format and international ones
 * anywhere. Without a country only numbers said with their + prefix are found.
 */
export function extractPhoneNumbers(text: string, country: string | null = null): string[] {
  const region =
    country && isSupportedCountry(country.toUpperCase()) ? (country.toUpperCase() as CountryCode) : undefined;
  const found = findPhoneNumbersInText(text, region ? { defaultCountry: region } : {});
  return [...new Set(found.map((f) => f.number.formatInternational()))].slice(0, 3);
}

const ADDRESS_RES = [
  /\b\d{1,5}\s+(?:\p{Lu}[\p{L}'-]*\s+){1,3}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct|Place|Pl|Terrace|Parkway)\b\.?/u,
  /\b\p{Lu}[\p{L}-]*(?:straße|strasse|weg|gasse|platz|allee)\s+\d{1,4}[a-z]?\b/u,
  /\b\d{1,4},?\s+(?:rue|avenue|boulevard|place|chemin)\s+[^,.!?]{2,40}/iu,
  /\b(?:calle|avenida|plaza)\s+[^,.!?]{2,40}?\s+\d{1,4}\b/iu,
];

export function extractAddress(text: string): string | null {
  for (const re of ADDRESS_RES) {
    const m = re.exec(text);
    if (m) return m[0].trim().replace(/\.$/, '');
  }
  return null;
}

const CITY_WORDS = String.raw`(\p{Lu}[\p{L}'-]+(?:[\s-]\p{Lu}[\p{L}'-]+){0,2})`;
const CITY_RE = new RegExp(
  String.raw`\b(?:i live in|we live in|i'm in|i am in|we're in|we are in|located in|based in|here in|out in|ich wohne in|wir wohnen in|j'habite à|je suis à|vivo en|estoy en)\s+${CITY_WORDS}`,
  'iu',
);

/** The city named after a lead phrase, or right after a street address ("12 Oak Street, Springfield"). */
export function extractCity(text: string, address: string | null): string | null {
  const m = CITY_RE.exec(text);
  if (m && /^\p{Lu}/u.test(m[1])) return m[1];
  if (address) {
    const after = text.slice(text.indexOf(address) + address.length);
    const c = new RegExp(String.raw`^\.?,\s*${CITY_WORDS}`, 'u').exec(after);
    if (c) return c[1];
  }
  return null;
}

const VOICEMAIL_RE =
  /leave (?:a|your) message|voice ?mail|after the (?:tone|beep)|not available to take your call|mailbox|hinterlassen sie eine nachricht|laissez(?:-moi)? un message|messagerie vocale|deje (?:su|un) mensaje|buzón de voz/i;

export function soundsLikeVoicemail(text: string): boolean {
  return VOICEMAIL_RE.test(text);
}

export const URGENCY_RE =
  /\b(urgent|urgently|asap|as soon as possible|emergency|right away|immediately|dringend|urgence|urgente)\b/i;
const DETAIL_RE = /\b(also|by the way|please note|note that|gate code|parking|allergic|dog)\b/i;

export function extractDetails(sentences: string[], alreadyUsed: number): string | null {
  const picked = sentences.slice(alreadyUsed).filter((s) => DETAIL_RE.test(s) || URGENCY_RE.test(s));
  return picked.length ? picked.join(' ') : null;
}

export const CALLBACK_RE =
  /\b(call me back|callback|call back|ring me back|get back to me|rappeler|zurückrufen|devolver la llamada)\b/i;
export const QUOTE_RE = /\b(quote|estimate|price|pricing|cost|angebot|devis|presupuesto)\b/i;
