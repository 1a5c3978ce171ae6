import { type FollowupDraft, type ProcessedAnalysis, SUBJECT_MAX, truncate } from '../domain/analysis.ts';
import { KNOWN_LANGUAGES, type KnownLanguage } from './language.ts';

/**
 * The built-in follow-up e-mail draft: a short plain-text note (no signature: the customer adds their
 * own) written from the analysis, in the call's language when we have a template for it, else English.
 * The draft's `language` is the language it is actually written in.
 */

interface Template {
  subjectWith: (service: string) => string;
  subjectPlain: string;
  greeting: (name: string | null) => string;
  thanks: (org: string) => string;
  about: (service: string) => string;
  when: (date: string) => string;
  close: string;
}

const TEMPLATES: Record<KnownLanguage, Template> = {
  en: {
    subjectWith: (s) => `Your enquiry: ${s}`,
    subjectPlain: 'Following up on your call',
    greeting: (n) => (n ? `Hello ${n},` : 'Hello,'),
    thanks: (o) => `thank you for calling ${o}.`,
    about: (s) => `You asked about ${s}.`,
    when: (d) => `You mentioned ${d} as a preferred time.`,
    close:
      'Please reply to this e-mail to confirm the details or to let us know anything else we should know.',
  },
  de: {
    subjectWith: (s) => `Ihre Anfrage: ${s}`,
    subjectPlain: 'Ihr Anruf bei uns',
    greeting: (n) => (n ? `Guten Tag ${n},` : 'Guten Tag,'),
    thanks: (o) => `vielen Dank für Ihren Anruf bei ${o}.`,
    about: (s) => `Sie haben nach Folgendem gefragt: ${s}.`,
    when: (d) => `Als Wunschtermin nannten Sie: ${d}.`,
    close: 'Bitte antworten Sie auf diese E-Mail, um die Angaben zu bestätigen oder zu ergänzen.',
  },
  fr: {
    subjectWith: (s) => `Votre demande : ${s}`,
    subjectPlain: 'Suite à votre appel',
    greeting: (n) => (n ? `Bonjour ${n},` : 'Bonjour,'),
    thanks: (o) => `merci d'avoir appelé ${o}.`,
    about: (s) => `Vous nous avez demandé : ${s}.`,
    when: (d) => `Vous avez indiqué comme date souhaitée : ${d}.`,
    close: 'Merci de répondre à cet e-mail pour confirmer ou compléter ces informations.',
  },
  es: {
    subjectWith: (s) => `Su consulta: ${s}`,
    subjectPlain: 'Sobre su llamada',
    greeting: (n) => (n ? `Hola ${n}:` : 'Hola:'),
    thanks: (o) => `gracias por llamar a ${o}.`,
    about: (s) => `Nos consultó por: ${s}.`,
    when: (d) => `Indicó como fecha preferida: ${d}.`,
    close: 'Responda a este correo para confirmar los datos o añadir lo que necesite.',
  },
};

export function composeFollowup(
  analysis: ProcessedAnalysis,
  organizationName: string,
  language: string,
): FollowupDraft {
  const lang: KnownLanguage = (KNOWN_LANGUAGES as readonly string[]).includes(language)
    ? (language as KnownLanguage)
    : 'en';
  const t = TEMPLATES[lang];
  const name = analysis.counterparty_name ?? analysis.caller_name;
  const said = analysis.service_needed?.replace(/[.!?]+$/, '') ?? null;
  // the caller's "my boiler" is the recipient's "your boiler"
  const service = said && lang === 'en' ? said.replace(/\b(my|our)\b/gi, 'your') : said;
  const lines = [t.greeting(name), '', t.thanks(organizationName)];
  if (service) lines.push(t.about(service));
  else if (analysis.summary) lines.push(analysis.summary);
  if (analysis.preferred_date) lines.push(t.when(analysis.preferred_date));
  lines.push('', t.close);
  return {
    subject: service ? truncate(t.subjectWith(service), SUBJECT_MAX) : t.subjectPlain,
    body: lines.join('\n'),
    language: lang,
  };
}
