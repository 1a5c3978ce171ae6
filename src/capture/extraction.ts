import * as chrono from 'chrono-node';
import { agentSpeakers, readTranscript } from './transcript-text.ts';

/**
 * The rule-based analyser's field extraction over the turns of a call (issue 19): who the caller is,
 * what they need, which day they want, where, and what kind of call it is. It reads the turns, not
 * one run of text, because the facts of a phone call come in answers ("Your name?" — "Mark
 * Deluca."), get corrected ("Thursday — sorry, Friday"), and are accepted ("Tuesday at two?" —
 * "Perfect."). Dates are chrono-node's, in the call's language, resolved forward against the call's
 * start. Each finding keeps the words it came from (`quote`, in the turn `turn`) as its evidence.
 *
 * Measured by `npm run bench:analysis` on bench/golden/analysis (its README says what counts as
 * right); the rules below are about phone calls in general, in English, Spanish, German and French.
 */

export type Role = 'agent' | 'customer';
export interface CallTurn {
  role: Role;
  text: string;
  /** index in the transcript's turns */
  index: number;
}

export interface Found {
  value: string;
  /** the words the value was read from, as said */
  quote: string;
  /** the turn they were said in */
  turn: number;
}

export type CallKind = 'lead' | 'wrong_number' | 'spam' | 'applicant' | 'supplier';

/** The transcript as turns with a role each; unlabelled text is the customer's. */
export function callTurns(transcript: string, organizationName: string): CallTurn[] {
  const read = readTranscript(transcript, organizationName);
  const agents = agentSpeakers(read.speakers, organizationName);
  return read.turns.map((t, index) => ({
    role: t.speaker !== null && agents.has(t.speaker) ? 'agent' : 'customer',
    // one apostrophe for the rules ("c’est" is "c'est")
    text: t.text.replace(/[’ʼ]/g, "'"),
    index,
  }));
}

// ---------------------------------------------------------------- what kind of call

const KIND_RULES: [Exclude<CallKind, 'lead'>, RegExp][] = [
  [
    'wrong_number',
    /\b(wrong number|misdialed|dialled the wrong|dialed the wrong|falsch verbunden|falsche nummer|verwählt|equivocado de número|número equivocado|me he equivocado|marqué mal|faux numéro|mauvais numéro|trompée? de numéro)/iu,
  ],
  [
    'spam',
    /(extended warranty|press (?:one|two|1|2)\b|drücken sie (?:jetzt )?(?:die taste|eins|1)|pulse (?:uno|el 1)|appuyez sur|business listing|google (?:business|maps|listing)|final notice|\bseo\b|search results|digital marketing|marketing agency|gewinnspiel|gewonnen|herzlichen glückwunsch|congratulations[,!]? you|you(?:'ve| have) (?:been selected|won)|oferta exclusiva|compañía de la luz|rebaja en (?:la|su) factura|panneaux solaires|isolation à un euro|aide de l'état|offre limitée|lower your (?:interest|rate)|this is an automated|automated message|energieversorger|stromanbieter|crédit d'impôt exceptionnel|branchenbuch|ihr eintrag|your listing|directory listing|annuaire|guía de empresas|verify your (?:listing|details))/iu,
  ],
  [
    'applicant',
    /(\bresume\b|\brésumé\b|\bcv\b|currículum|curriculum|\bhiring\b|job (?:opening|ad|posting|offer)|the position|apprentice|renting (?:any )?chairs|stellenanzeige|bewerb|die stelle|als (?:aushilfe|mitarbeiter)|candidature|un poste|offre d'emploi|buscan personal|oferta de empleo|el puesto|trabajo con ustedes|\bemploi\b|embauch|are you hiring|busco trabajo|\bempleo\b|suche (?:eine )?arbeit|ausbildungsplatz|praktikum)/iu,
  ],
  [
    'supplier',
    /(\bsupplier\b|\bsupply\b|wholesale|distributor|distribution\b|you ordered|your (?:last )?order|back ?order|price list|account rep|großhandel|lieferant|ihre bestellung|lieferverzug|votre commande|fournisseur|transporteur|proveedor|su pedido|distribuidor)/iu,
  ],
];

/**
 * The call's kind by its words: a wrong number (either side may say it), spam or a robocall, a job
 * applicant, a supplier; anything else is a lead (a customer, new or existing). Only a lead gets a
 * service, a date, a place and a follow-up draft.
 */
export function callKind(turns: CallTurn[]): CallKind {
  const all = turns.map((t) => t.text).join(' ');
  const customer = turns
    .filter((t) => t.role === 'customer')
    .map((t) => t.text)
    .join(' ');
  for (const [kind, re] of KIND_RULES) {
    if (re.test(kind === 'wrong_number' ? all : customer)) return kind;
  }
  return 'lead';
}

// ---------------------------------------------------------------- voicemail by its wording

const MESSAGE_RE =
  /(call me back|give me a (?:call|ring)|call back|ring me back|reach me (?:at|on)|my (?:number|cell) is|leaving (?:you )?a message|this message is for|returning your call|get back to me|rufen sie mich|zurückrufen|rückruf|auf wiederhören|rappelez|me rappeler|rappeler|au revoir|llámeme|llámenme|devuélvame|me devuelva la llamada|thanks,? bye|bye\.?$)/iu;

/** A one-sided text that reads as a message left for the business (not the business's greeting). */
export function readsAsMessage(text: string): boolean {
  return MESSAGE_RE.test(text.trim());
}

// ---------------------------------------------------------------- caller's name

/**
 * A pattern's letters made case-insensitive by hand (`my` → `[mM][yY]`), for the part of a pattern
 * that must ignore case while the rest must not (a lead phrase before a capitalised name). Not a
 * RegExp modifier group `(?i:…)`: in Node 24 (V8 13.6) such a group stops ignoring case in a regexp
 * compiled once the process has more than 16 MB of executable memory, when V8 compiles new regexps
 * without its optimisations — in the long-lived `npm test` workers "Hallo, mein Name ist
 * Hans Müller" then gave no name (test/capture/extraction-regexp-code.test.ts). Escapes (`\s`,
 * `\p{L}`) and group openers (`(?:`) are kept as they are; a character class gets both cases of its
 * letters (a letter range inside a class is refused).
 */
function caseless(pattern: string): string {
  const flip = (c: string) => {
    const other = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
    return other !== c && other.length === 1 ? other : '';
  };
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const end = pattern[i + 1] === 'p' || pattern[i + 1] === 'P' ? pattern.indexOf('}', i) : i + 1;
      out += pattern.slice(i, end + 1);
      i = end;
    } else if (!inClass && c === '(' && pattern[i + 1] === '?') {
      const opener = /^\(\?(?::|=|!|<=|<!)/.exec(pattern.slice(i));
      if (!opener) throw new Error(`caseless: unsupported group at ${i} in ${pattern}`);
      out += opener[0];
      i += opener[0].length - 1;
    } else if (c === '[' && !inClass) {
      inClass = true;
      out += c;
    } else if (c === ']' && inClass) {
      inClass = false;
      out += c;
    } else if (inClass) {
      if (c === '-' && /\p{L}/u.test(pattern[i - 1] ?? '') && /\p{L}/u.test(pattern[i + 1] ?? ''))
        throw new Error(`caseless: a letter range in a class at ${i} in ${pattern}`);
      out += c + flip(c);
    } else {
      const other = flip(c);
      out += other ? `[${c}${other}]` : c;
    }
  }
  return out;
}

const UPPER_WORD = String.raw`\p{Lu}[\p{L}'’-]*\p{L}`;
const TITLE = String.raw`(?:(?:mr|mrs|ms|miss|mx|dr|prof|herr|frau|monsieur|madame|mademoiselle|mme|mlle|señora|señor|señorita|sra|sr|srta|doña|don)\.?\s+)`;
const ARTICLE = String.raw`(?:(?:la|el)\s+)?`;
const NAME_SEQ = String.raw`(${UPPER_WORD}(?:\s+${UPPER_WORD}){0,2})`;

/** Self-introductions, strongest first; the name follows (after a title, which is dropped). */
const INTRODUCTIONS: RegExp[] = [
  `(?:my name is|my name's|name's|mein name ist|ich heiße|je m'appelle|mon nom est|je suis|me llamo|mi nombre es)`,
  `(?:this is|it's|it is|i'm|i am|hier (?:spricht|ist)|ich bin|c'est|ici|soy|habla|le habla)`,
].map(
  (lead) =>
    new RegExp(
      String.raw`(?:^|[^\p{L}])${caseless(String.raw`${lead}\s+${ARTICLE}${TITLE}?`)}${NAME_SEQ}`,
      'gu',
    ),
);
/** A name, after a title or not (the answer to "Your name?"). */
const TITLED_NAME = new RegExp(`${caseless(`${TITLE}?`)}${NAME_SEQ}`, 'gu');
/** "Dave here", "Jürgen Becker hier", "Jess speaking". */
const NAME_HERE = new RegExp(
  String.raw`(?:^|[.!?,]\s*|^\s*)${NAME_SEQ}\s+(?:here|hier|speaking|am apparat)\b`,
  'gu',
);
const ASKS_NAME =
  /(\bname\b|\bnamen\b|\bnom\b|\bnombre\b|who am i speaking|who's calling|who is calling|ihr name|ihren namen|welchen namen|wer spricht|votre nom|quel nom|vous êtes \?|de la part de qui|su nombre|a nombre de quién|cómo se llama|quién habla|con quién hablo)/iu;

/** Capitalised words that are not a name when they follow "I'm", "c'est", "soy"… or answer "Your name?". */
const NOT_NAME = new Set(
  (
    'i a the an calling looking interested just not here sorry fine good glad happy from with so also still really very ' +
    'hi hello hey yes yeah yep no okay ok sure well oh um uh thanks thank please morning afternoon evening great perfect ' +
    'guten morgen tag abend hallo ja nein moment gerne gern danke bitte genau also super ' +
    'bonjour bonsoir allô allo oui non merci pardon alors voilà très bien parfait ' +
    'hola buenos buenas días dias tardes noches sí si vale claro mire perdone gracias bueno perfecto ' +
    'monday tuesday wednesday thursday friday saturday sunday today tomorrow ' +
    'montag dienstag mittwoch donnerstag freitag samstag sonntag heute morgen ' +
    'lundi mardi mercredi jeudi vendredi samedi dimanche demain ' +
    'lunes martes miércoles jueves viernes sábado domingo mañana hoy ' +
    'mr mrs ms dr herr frau madame monsieur señora señor'
  ).split(' '),
);

function cleanName(raw: string, organizationName: string): string | null {
  const words = raw.split(/\s+/).filter((w) => w.length > 0);
  while (words.length && NOT_NAME.has(words[words.length - 1].toLowerCase())) words.pop();
  while (words.length && NOT_NAME.has(words[0].toLowerCase())) words.shift();
  if (!words.length) return null;
  const name = words.join(' ');
  const org = organizationName.trim().toLowerCase();
  if (org.split(/\s+/).some((w) => w.length > 2 && name.toLowerCase().split(' ').includes(w))) return null;
  return name;
}

/**
 * The caller's name: a self-introduction in what the customer said ("my name is", "this is",
 * "c'est Madame Moreau", "soy la señora Gómez" — the title is dropped), "Dave here", or the answer
 * to the agent's "Your name?". The strongest introduction wins, then the earliest.
 */
export function findCallerName(turns: CallTurn[], organizationName: string): Found | null {
  const customer = turns.filter((t) => t.role === 'customer');
  for (const re of INTRODUCTIONS) {
    for (const t of customer)
      for (const m of t.text.matchAll(re)) {
        const name = cleanName(m[1], organizationName);
        if (name) return { value: name, quote: m[0].replace(/^[^\p{L}]/u, '').trim(), turn: t.index };
      }
  }
  for (const t of customer)
    for (const m of t.text.matchAll(NAME_HERE)) {
      const name = cleanName(m[1], organizationName);
      if (name) return { value: name, quote: m[0].replace(/^[.!?,\s]+/, ''), turn: t.index };
    }
  for (let i = 1; i < turns.length; i++) {
    const asked = turns[i - 1];
    const answer = turns[i];
    if (asked.role !== 'agent' || answer.role !== 'customer' || !ASKS_NAME.test(asked.text)) continue;
    // the longest run of capitalised words in the answer ("Keller, Michael Keller." → Michael Keller)
    let best: string | null = null;
    for (const m of answer.text.matchAll(TITLED_NAME)) {
      const name = cleanName(m[1], organizationName);
      if (name && (!best || name.split(' ').length > best.split(' ').length)) best = name;
    }
    if (best) return { value: best, quote: answer.text, turn: answer.index };
  }
  return null;
}

// ---------------------------------------------------------------- what the caller needs

/**
 * Words that name a service or a problem a small business is called about, by trade, in the four
 * languages (stems: matched at a word's start). Not the golden set's words: the trades' vocabulary.
 */
const SERVICE_TERMS =
  // plumbing, heating, electrical, appliances
  (
    'leak fuga fuite fuit undicht tropf plumb fontaner plombier klempner installateur sanitär pipe tuberí tuyau rohr leitung ' +
    'drain desagüe atasc verstopf bouch clog unclog toilet inodoro váter wc toilettes klo faucet tap grifo robinet wasserhahn ' +
    'sink fregadero lavabo évier spüle water_heater calentador termo chauffe-eau boiler caldera chaudière heizung heizkörper ' +
    'radiator radiateur furnace heating calefacción chauffage air_condition a/c hvac aire_acondicionado climatisation klima ' +
    'electric eléctric électri elektri outlet enchufe prise steckdose breaker fusible sicherung wiring cableado câblage ' +
    'light luz lumière licht power corriente strom appliance dishwasher lavavajillas lave-vaisselle spülmaschine washing_machine ' +
    'lavadora lave-linge waschmaschine fridge nevera frigo kühlschrank ' +
    // building, roofing, painting, garden, locks, pests, cleaning, moving
    'roof tejado techo toit dach shingle teja tuile ziegel gutter canalón gouttière dachrinne paint pint peint maler streich ' +
    'floor suelo parquet boden tile azulejo carrelage fliese window ventana fenêtre fenster door puerta porte tür ' +
    'lock cerradura serrure schloss locked_out keys llaves clés schlüssel hedge seto haie hecke garden jardín jardin garten ' +
    'lawn césped pelouse rasen tree árbol arbre baum mow cort tond mäh pest plaga nuisible schädling mice mouse rat ratón ' +
    'souris maus mäuse ratte termite ants hormig fourmi ameise bed_bug wasp avispa guêpe wespe cockroach cucaracha cafard ' +
    'clean limpi nettoy ménage reinig putz carpet alfombra moquette teppich move moving mover removal mudanza déménag umzug umzieh ' +
    'packing embalaje cartons kartons storage trastero garde-meuble lager ' +
    // dental, medical, vet, beauty
    'dentist dental dentaire zahn teeth tooth diente dent muela toothache dolor_de_muelas mal_aux_dents zahnschmerz ' +
    'cleaning limpieza détartrage zahnreinigung check-up checkup revisión contrôle kontrolle filling empaste plombage füllung ' +
    'crown corona couronne krone implant implante brace bracket ortodon extraction extracción whitening blanqueamiento ' +
    'blanchiment vaccin impf vacun spay neuter castr stérilis vet veterinar vétérinaire tierarzt ' +
    'physio krankengymnastik fisioterapia kiné therapy therapie terapia thérapie back_pain dolor douleur schmerz ' +
    'shoulder schulter hombro épaule knee knie rodilla genou prescription rezept receta ordonnance ' +
    'haircut hair_cut corte cortar pelo cheveux coupe haare schneiden colour color tinte teñir couleur coloration färb ' +
    'highlights mechas mèches strähnchen blow-dry brushing föhn trim beard barba barbe bart manicure manicura manucure ' +
    'nails uñas ongles nägel wax depila épil massage masaje massag facial ' +
    // auto
    'brake freno frein bremse oil_change aceite vidange ölwechsel tyre tire neumático pneu reifen inspection inspección ' +
    'inspektion tüv itv engine motor moteur battery batería batterie transmission clutch embrague embrayage kupplung ' +
    'exhaust escape échappement auspuff mot service car coche voiture auto ' +
    // legal, financial, admin
    'will testament estate herencia succession erbschaft nachlass power_of_attorney poder_notarial procuration vollmacht ' +
    'divorce divorcio scheidung custody custodia garde sorgerecht lawsuit demanda procès klage litigation litige ' +
    'contract contrato contrat vertrag lease alquiler bail miet eviction desahucio expulsion räumung kündig immigration ' +
    'visa injury accident unfall lesión employment laboral travail arbeitsrecht beratung asesor conseil consult ' +
    'tax impuesto impôt steuer accounting contab comptab buchhalt ' +
    'invoice factura facture rechnung bill charged cobrado facturé berechnet refund reembolso rembours erstattung ' +
    'appointment cita rendez-vous termin quote estimate presupuesto devis angebot kostenvoranschlag'
  )
    .split(/\s+/)
    .filter((w) => w.length > 1);
// multi-word terms are matched as phrases; the rest as word starts
const TERM_RE = new RegExp(
  String.raw`(?<![\p{L}])(?:${[...new Set(SERVICE_TERMS)]
    .sort((a, b) => b.length - a.length)
    .map((t) => t.replace(/_/g, String.raw`\s+`))
    .join('|')})`,
  'giu',
);
/** Generic words that only count beside a more specific one. */
const WEAK_TERMS = new Set(
  'appointment cita rendez-vous termin quote estimate presupuesto devis angebot service car coche voiture auto light luz power clean'.split(
    ' ',
  ),
);

/** How many words naming a service or a problem a phrase holds (a trade's word, not "an appointment"). */
export function serviceTerms(phrase: string): number {
  return [...phrase.matchAll(TERM_RE)].filter((m) => !WEAK_TERMS.has(m[0].toLowerCase())).length;
}

const NEED_RE =
  /\b(need|needs|want|would like|i'd like|looking for|after someone|book|booking|fix|repair|replace|broken|stopped working|not working|won't|doesn't work|leaking|how much|what do you charge|do you do|price|necesito|necesitamos|quería|quisiera|quiero|busco|cuánto|brauche|bräuchte|möchte|hätte gerne|suche|kaputt|geht nicht|was kostet|je voudrais|j'aimerais|j'ai besoin|je cherche|je me renseigne|combien|ne marche|en panne)\b/iu;
const FILLER =
  /^(?:(?:hi|hello|hey|yeah|yes|yep|so|well|um|uh|oh|okay|ok|hmm|mire|bueno|hola|buenas|oui|alors|bon|ja|also|hallo|na ja|allô)[\s,.!]+)+/iu;
const SERVICE_MAX = 120;

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A clause of at most SERVICE_MAX characters around the service words, fillers trimmed. */
function clauseOf(sentence: string): string {
  // the comma-separated part that names most of the service ("my name is Jane, my sink leaks")
  const parts = sentence
    .replace(/[.!?]+$/, '')
    .split(/,\s+|;\s+|\s+[–—-]\s+/)
    .map((p) => p.replace(FILLER, '').trim())
    .filter((p) => p.split(/\s+/).length >= 2);
  const best = parts.reduce<{ part: string; n: number } | null>((b, part) => {
    const terms = [...part.matchAll(TERM_RE)].length;
    const n = serviceTerms(part) + terms + (NEED_RE.test(part) ? 2 : 0);
    return terms > 0 && (!b || n > b.n) ? { part, n } : b;
  }, null);
  let s = best?.part ?? sentence.replace(FILLER, '').replace(/[.!?]+$/, '');
  if (s.length > SERVICE_MAX) {
    const cut = s.slice(0, SERVICE_MAX);
    const at = Math.max(cut.lastIndexOf(', '), cut.lastIndexOf(' – '), cut.lastIndexOf(' - '));
    s = at > 30 ? cut.slice(0, at) : `${cut.slice(0, cut.lastIndexOf(' '))}…`;
  }
  return s.trim();
}

/**
 * What the caller needs: the customer's sentence that names a service or a problem (the trades'
 * words above), preferring one that says a need ("I need", "quería", "ich brauche"), earliest first.
 * Without any such word, the phrase after a need verb ("I'd like someone to come") when it says
 * something. Null when the customer named nothing.
 */
export function findService(turns: CallTurn[]): Found | null {
  let best: { found: Found; score: number } | null = null;
  for (const t of turns) {
    if (t.role !== 'customer') continue;
    for (const sentence of sentencesOf(t.text)) {
      const terms = [...sentence.matchAll(TERM_RE)].map((m) => m[0].toLowerCase());
      const strong = terms.filter((w) => !WEAK_TERMS.has(w)).length;
      if (!strong) continue;
      const score = strong * 2 + (NEED_RE.test(sentence) ? 3 : 0);
      if (!best || score > best.score)
        best = { found: { value: clauseOf(sentence), quote: sentence, turn: t.index }, score };
    }
  }
  return best?.found ?? null;
}

// ---------------------------------------------------------------- preferred date

type Chrono = typeof chrono.casual;
const CHRONO: Record<string, Chrono> = {
  en: chrono.casual,
  de: chrono.de.casual,
  fr: chrono.fr.casual,
  es: chrono.es.casual,
  it: chrono.it.casual,
  nl: chrono.nl.casual,
  pt: chrono.pt.casual,
};
/** Greetings that contain a date word ("Guten Morgen" is not "tomorrow"), blanked before parsing. */
const GREETINGS =
  /\b(guten morgen|good morning|good afternoon|good evening|guten abend|guten tag|buenos días|buenas tardes|buenas noches|bonjour|bonsoir|bonne journée|schönen tag)\b/giu;
/** A sentence about a payment card: its dates are an expiry, never a wish. */
const CARD_CONTEXT =
  /\b(card|visa|mastercard|amex|expir|expiry|cvv|cvc|security code|karte|kreditkarte|ablauf|gültig|tarjeta|caduc|vencimiento|carte|expiration)\b/iu;
/** Said right after a day: the caller cannot then ("Tuesday is bad", "jeudi je ne peux pas"). */
const UNAVAILABLE_AFTER =
  /^[^,.;!?]{0,25}?\b(is bad|doesn't work|does not work|won't work|can't|cannot|not good|i'm working|i am working|i work|i'm busy|busy|geht nicht|passt nicht|kann ich nicht|arbeite|habe ich keine zeit|je ne peux pas|ce n'est pas possible|pas possible|je travaille|impossible|no puedo|no me va|trabajo|imposible)\b/iu;
const NOT_BEFORE = /\b(not|nicht|pas|no)\s+(?:on\s+|am\s+|le\s+|el\s+)?$/iu;
const ACCEPTS =
  /^(?:[\p{L}]+[,!.]?\s+)?(yes|yeah|yep|sure|perfect|great|fine|ok|okay|that works|that's great|that's fine|sounds good|works for me|lovely|good|ja|gerne|gern|passt|gut|super|prima|oui|d'accord|parfait|très bien|ça marche|entendu|sí|si|vale|perfecto|de acuerdo|muy bien|claro|estupendo|genial)\b/iu;
/** "Now" is when the caller speaks, not a day they ask for. */
const NOW = /^(?:right\s+)?(?:now|jetzt|gerade|maintenant|ahora|ahorita)$/iu;
/** A phrase that names a day by itself (chrono reads "morning" or "at 5" as today: not a day said). */
const DAY_WORD =
  /\b(today|tonight|tomorrow|heute|morgen|übermorgen|aujourd'hui|ce soir|demain|après-demain|hoy|mañana|pasado mañana|esta noche)\b/iu;

interface DateCandidate {
  found: Found;
  iso: string;
  at: number;
}

/**
 * The day the caller wants: every day said in the call (chrono-node in the call's language, then
 * English), resolved forward from the call's start, keeping those the customer said — or the agent
 * proposed and the customer's next words accepted — and dropping greetings ("Guten Morgen"), a
 * card's expiry, days in the past ("last week", "hier soir"), times without a day ("after three"),
 * and days the caller rules out ("Tuesday is bad"). The last one left wins: a correction comes
 * after what it corrects. A bare weekday that falls on the call's own day means next week's (one
 * says "today" for today). The value is the words as said and the ISO day: "Friday morning
 * (2026-03-13)".
 */
export function findPreferredDate(turns: CallTurn[], language: string | null, startedAt: Date): Found | null {
  const parsers = [...new Set([language && CHRONO[language], CHRONO.en].filter((p): p is Chrono => !!p))];
  const ref = { instant: startedAt, timezone: 0 };
  const today = startedAt.toISOString().slice(0, 10);
  const candidates: DateCandidate[] = [];
  turns.forEach((t, i) => {
    const accepted =
      t.role === 'agent' && turns[i + 1]?.role === 'customer' && ACCEPTS.test(turns[i + 1].text.trim());
    if (t.role !== 'customer' && !accepted) return;
    const text = t.text.replace(GREETINGS, (g) => ' '.repeat(g.length));
    const seen: number[] = [];
    const consider = (
      index: number,
      raw: string,
      day: { y: number; m: number; d: number },
      weekdayOnly: boolean,
      instant: Date | null,
    ) => {
      if (seen.some((s) => Math.abs(s - index) < 4)) return;
      seen.push(index);
      const phrase = raw.trim().replace(/[,.;:]+$/, '');
      if (NOW.test(phrase)) return;
      const sentence = sentenceAround(text, index);
      if (CARD_CONTEXT.test(sentence)) return;
      if (UNAVAILABLE_AFTER.test(text.slice(index + phrase.length))) return;
      if (NOT_BEFORE.test(text.slice(0, index))) return;
      let iso = isoDay(day.y, day.m, day.d);
      if (iso < today) return;
      // a bare weekday that is the call's own day: next week's (one says "today" for today)
      if (iso === today && weekdayOnly && !DAY_WORD.test(phrase)) iso = isoDay(day.y, day.m, day.d + 7);
      // "this morning", said in the evening
      if (iso === today && instant && instant.getTime() < startedAt.getTime() - 3600_000) return;
      candidates.push({
        found: {
          value: phrase.replace(/^(?:on|am|le|el|for|para)\s+/i, ''),
          quote: sentence.trim(),
          turn: t.index,
        },
        iso,
        at: t.index * 100_000 + index,
      });
    };
    for (const parser of parsers)
      for (const r of parser.parse(text, ref, { forwardDate: true })) {
        const phrase = r.text.trim();
        const dayKnown = r.start.isCertain('day') || r.start.isCertain('weekday') || DAY_WORD.test(phrase);
        if (!dayKnown) continue;
        const when = r.start.date();
        consider(
          r.index,
          r.text,
          {
            y: r.start.get('year') ?? when.getUTCFullYear(),
            m: r.start.get('month') ?? when.getUTCMonth() + 1,
            d: r.start.get('day') ?? when.getUTCDate(),
          },
          r.start.isCertain('weekday') && !r.start.isCertain('day'),
          r.start.isCertain('hour') ? when : null,
        );
      }
    // a day of the month said alone ("the 29th", "el día 15", "am 2."), which chrono leaves out
    for (const m of text.matchAll(DAY_OF_MONTH)) {
      const n = Number(m[1] ?? m[2] ?? m[3]);
      if (n < 1 || n > 31) continue;
      const [y, mo, d] = today.split('-').map(Number);
      const thisMonth = n >= d ? { y, m: mo, d: n } : { y, m: mo + 1, d: n };
      const dt = new Date(Date.UTC(thisMonth.y, thisMonth.m - 1, thisMonth.d));
      consider(
        m.index,
        m[0],
        { y: dt.getUTCFullYear(), m: dt.getUTCMonth() + 1, d: dt.getUTCDate() },
        false,
        null,
      );
    }
  });
  const last = candidates.sort((a, b) => a.at - b.at).at(-1);
  if (!last) return null;
  return { ...last.found, value: `${last.found.value} (${last.iso})` };
}

const DAY_OF_MONTH =
  /\b(?:the (\d{1,2})(?:st|nd|rd|th)\b(?! of)|el día (\d{1,2})\b(?! de)|am (\d{1,2})\.(?=\s|$)(?!\s*(?:\d|Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember)))/giu;

/** YYYY-MM-DD of a day, month and day overflowing as Date.UTC does. */
function isoDay(y: number, m: number, d: number): string {
  return new Date(Date.UTC(y, m - 1, d)).toISOString().slice(0, 10);
}

/** The sentence of `text` around position `index`. */
function sentenceAround(text: string, index: number): string {
  const start = Math.max(
    text.lastIndexOf('. ', index),
    text.lastIndexOf('? ', index),
    text.lastIndexOf('! ', index),
  );
  const end = text.slice(index).search(/[.!?](?:\s|$)/);
  return text.slice(start + 1, end < 0 ? undefined : index + end + 1);
}

// ---------------------------------------------------------------- address and city

const EN_STREET =
  'Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct|Place|Pl|Terrace|Parkway|Close|Crescent|Grove|Row|Square|Highway|Hwy|Circle|Cir|Trail|Mews|Hill|Gardens';
const ADDRESS_RES: RegExp[] = [
  new RegExp(
    String.raw`\b\d{1,5}[A-Za-z]?\s+(?:(?:North|South|East|West|N|S|E|W)\.?\s+)?(?:\p{Lu}[\p{L}'-]*\s+){1,3}(?:${EN_STREET})\b\.?`,
    'u',
  ),
  /\b\p{Lu}[\p{L}-]*(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|gürtel|damm|ufer|chaussee|steig|pfad|stieg|zeile|graben|kai|markt|hof)\s+\d{1,4}\s?[a-z]?\b/u,
  /\b(?:Am|An der|Auf der|Im|In der|Zum|Zur)\s+\p{Lu}[\p{L}-]+\s+\d{1,4}[a-z]?\b/u,
  /\b\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?:rue|avenue|boulevard|bd|place|chemin|allée|impasse|quai|cours|route|passage|square)\s+[^,.!?]{2,40}?(?=\s+(?:à|a|au|en|dans|près|,)\s|[,.!?]|$)/iu,
  /\b(?:calle|c\/|avenida|avda\.?|plaza|paseo|camino|ronda|travesía|carrera|carretera)\s+[^,.!?]{2,40}?,?\s+(?:n(?:ú|u)mero\s+|nº\s*)?\d{1,4}\b/iu,
];

/** The street address said by the customer: house number and street, in the four languages' orders. */
export function findAddress(turns: CallTurn[]): Found | null {
  for (const t of turns) {
    if (t.role !== 'customer') continue;
    for (const re of ADDRESS_RES) {
      const m = re.exec(t.text);
      if (m) {
        const value = m[0]
          .trim()
          .replace(/[.,]$/, '')
          .replace(/^\p{Ll}/u, (c) => c.toUpperCase());
        return {
          value: /^\d/.test(value) ? m[0].trim().replace(/[.,]$/, '') : value,
          quote: t.text,
          turn: t.index,
        };
      }
    }
  }
  return null;
}

const CITY = String.raw`(\p{Lu}[\p{L}'’-]+(?:[\s-]\p{Lu}[\p{L}'’-]+){0,2})`;
const CITY_LEADS = `(?:i live in|we live in|i'm in|i am in|we're in|we are in|located in|based in|here in|out in|ich wohne in|wir wohnen in|j'habite à|j'habite a|je suis à|nous sommes à|vivo en|vivimos en|estoy en|estamos en)`;
const CITY_LEAD_RE = new RegExp(
  String.raw`(?:^|[^\p{L}])${caseless(String.raw`${CITY_LEADS}\s+`)}${CITY}`,
  'u',
);
const AFTER_ADDRESS = new RegExp(
  String.raw`^(?:\.(?=,))?(?:,?\s*(?:apartment|apt|unit|suite|flat|floor|piso|étage|wohnung)\s+[\w-]+)?\s*(?:,\s*|\s+)(?:(?:that's|that is|which is|it's)\s+)?(?:(?:in|à|a|en|bei)\s+)?${CITY}`,
  'u',
);
const BEFORE_ADDRESS = new RegExp(
  String.raw`\b(?:in|à|en)\s+${CITY},?\s*(?:(?:in der|en la|en el|au|à la)\s+)?$`,
  'u',
);
const ASKS_PLACE =
  /(where|whereabouts|what city|which town|address|wo wohnen|wo sind|wohin|où|adresse|dónde|donde|dirección)/iu;
const PLACE_ANSWER = new RegExp(
  `^${caseless(String.raw`(?:[\p{L}]+,\s+)?(?:in|à|en|au|bei|near|cerca de)\s+`)}${CITY}`,
  'u',
);
const NOT_CITY = new Set(
  'the la el le der die das calle rue avenue avenida straße strasse road street lane drive apartment monday tuesday wednesday thursday friday saturday sunday'.split(
    ' ',
  ),
);

function cityFound(value: string, quote: string, turn: number): Found | null {
  const first = value.split(/[\s-]/)[0].toLowerCase();
  if (NOT_CITY.has(first)) return null;
  return { value, quote, turn };
}

/**
 * The city: after a lead phrase ("I live in", "j'habite à", "vivo en"), right after or before the
 * street address ("…Drive, in Aurora", "in Köln, Ehrenfeldgürtel 88"), or the answer to "Where are
 * you?" ("En Sevilla, cerca de la estación").
 */
export function findCity(turns: CallTurn[], address: Found | null): Found | null {
  if (address) {
    const t = turns[address.turn];
    const at = t.text.indexOf(address.value.replace(/^\p{Lu}/u, (c) => c.toLowerCase()));
    const start = at >= 0 ? at : t.text.indexOf(address.value);
    if (start >= 0) {
      const after = AFTER_ADDRESS.exec(t.text.slice(start + address.value.length));
      const c = after && cityFound(after[1], t.text, t.index);
      if (c) return c;
      const before = BEFORE_ADDRESS.exec(t.text.slice(0, start));
      const b = before && cityFound(before[1], t.text, t.index);
      if (b) return b;
    }
  }
  for (const t of turns) {
    if (t.role !== 'customer') continue;
    const m = CITY_LEAD_RE.exec(t.text);
    const c = m && /^\p{Lu}/u.test(m[1]) ? cityFound(m[1], t.text, t.index) : null;
    if (c) return c;
  }
  for (let i = 1; i < turns.length; i++) {
    if (turns[i - 1].role !== 'agent' || turns[i].role !== 'customer' || !ASKS_PLACE.test(turns[i - 1].text))
      continue;
    const m = PLACE_ANSWER.exec(turns[i].text.trim());
    const c = m && cityFound(m[1], turns[i].text, turns[i].index);
    if (c) return c;
  }
  return null;
}

// ---------------------------------------------------------------- commitment

/** A price enquiry or "I'll think about it": a need without commitment. */
export const BROWSING_RE =
  /(just wondering|wondering (?:roughly )?(?:what|how much)|getting prices|how much|what do you charge|i'll think|talk to my|call back later|maybe later|je me renseigne|je vais réfléchir|combien|c'est combien|ich überlege|was kostet|cuánto cuesta|quería saber cuánto|lo pienso)/iu;
/** An existing customer's administrative call: moving or cancelling a booking, a bill. */
export const ADMIN_RE =
  /(reschedul|move it|move my|cancel|invoice|charged us|charged me|my bill|already a (?:patient|customer)|ya soy (?:cliente|clienta|paciente)|cambiar la (?:cita|limpieza)|anular|factura|verschieben|absagen|rechnung|déplacer|annuler|facture)/iu;
