import {
  emptyAnalysis,
  LEAD_SCORE_MAX,
  LEAD_SCORE_MIN,
  type ProcessedAnalysis,
  type ProposalItem,
  SUBJECT_MAX,
  truncate,
} from '../domain/analysis.ts';
import type {
  AnalyzerInput,
  AnalyzerResult,
  EvidenceField,
  FieldEvidence,
} from '../domain/capture-providers.ts';
import {
  ADMIN_RE,
  BROWSING_RE,
  type CallKind,
  callKind,
  callTurns,
  type Found,
  findAddress,
  findCallerName,
  findCity,
  findPreferredDate,
  findService,
  readsAsMessage,
  serviceTerms,
} from './extraction.ts';
import { composeFollowup } from './followup-draft.ts';
import { detectLanguage, primaryLanguage } from './language.ts';
import {
  CALLBACK_RE,
  extractDetails,
  extractPhoneNumbers,
  extractService,
  QUOTE_RE,
  soundsLikeVoicemail,
  URGENCY_RE,
} from './text-rules.ts';
import { contentSentences, nothingSaid, readTranscript } from './transcript-text.ts';

/**
 * The analysis provider. The pipeline only knows this interface: the built-in rule-based analyzer
 * below is deterministic and runs in-process; a real provider (an LLM behind an HTTP API) implements
 * the same interface and is handed to the processing jobs (deps.capture.analysis) instead. Its input
 * and result are the providers' contract (src/domain/capture-providers.ts).
 */
export interface Analyzer {
  analyze(input: AnalyzerInput): Promise<AnalyzerResult>;
}

const SUMMARY_SENTENCES = 2;
const SUMMARY_MAX = 300;
const DETAILS_MAX = 300;

export function ruleBasedAnalyzer(): Analyzer {
  return { analyze: async (input) => analyzeByRules(input) };
}

export function analyzeByRules(input: AnalyzerInput): AnalyzerResult {
  if (nothingSaid(input.transcript)) return silentCallResult();
  const orgName = input.organization.name;
  const read = readTranscript(input.transcript, orgName);
  const said = read.customerText;
  const sents = contentSentences(said);
  const { voicemail, twoSided } = callShape(input.transcript, orgName, { voicemail: input.voicemail });
  const turns = callTurns(input.transcript, orgName);
  const kind = callKind(turns);
  const lead = kind === 'lead';

  const language =
    primaryLanguage(input.language) ??
    detectLanguage(
      read.turns
        .map((t) => t.text)
        .join(' ')
        .trim(),
    );
  // a robocall's or cold caller's persona is not a caller to write to
  const name = kind === 'spam' || kind === 'wrong_number' ? null : findCallerName(turns, orgName);
  const serviceFound = lead ? findService(turns) : null;
  // no trade's word: the phrase after "I need" / "ich brauche" / "necesito", as before
  const service = serviceFound ? servicePhrase(serviceFound) : lead ? extractService(said) : null;
  const dateFound = lead ? findPreferredDate(turns, language, input.startedAt ?? new Date()) : null;
  // without the call's start the day is kept as said: "tomorrow" resolved against now would be a guess
  const date = dateFound
    ? input.startedAt
      ? dateFound.value
      : dateFound.value.replace(/ \(\d{4}-\d{2}-\d{2}\)$/, '')
    : null;
  const addressFound = lead ? findAddress(turns) : null;
  const address = addressFound?.value ?? null;
  const cityFound = lead ? findCity(turns, addressFound) : null;
  const city = cityFound?.value ?? null;
  const phones = extractPhoneNumbers(said, input.country ?? null);
  const summary = sents.length ? truncate(sents.slice(0, SUMMARY_SENTENCES).join(' '), SUMMARY_MAX) : null;
  const details = [
    kind !== 'lead' ? KIND_NOTE[kind] : null,
    extractDetails(sents, SUMMARY_SENTENCES),
    phones.length ? `Phone number${phones.length > 1 ? 's' : ''} given: ${phones.join(', ')}.` : null,
  ]
    .filter((d): d is string => d !== null)
    .join(' ');

  const analysis: ProcessedAnalysis = {
    caller_name: input.direction === 'inbound' ? (name?.value ?? null) : null,
    summary,
    subject: service
      ? truncate(capitalise(service), SUBJECT_MAX)
      : sents[0]
        ? truncate(sents[0], SUBJECT_MAX)
        : null,
    service_needed: service,
    // The built-in analyzer knows no catalogue of offered services, so it cannot tell.
    services_match: null,
    lead_score: leadScore({
      said,
      kind,
      voicemail,
      service,
      date,
      place: address ?? city,
      name: name?.value ?? null,
    }),
    preferred_date: date,
    client_city: city,
    client_address: address,
    additional_details: details ? truncate(details, DETAILS_MAX) : null,
    caller_location: city,
    client_country: null,
    counterparty_name: input.direction === 'outbound' ? (name?.value ?? null) : null,
    proposal_items: lead ? proposals(said, service, date, phones[0] ?? null) : null,
  };
  if (language) analysis.detected_language = language;

  const evidence: Partial<Record<EvidenceField, FieldEvidence>> = {};
  const cite = (field: EvidenceField, value: string | null, found: Found | null) => {
    if (value !== null && found) evidence[field] = { quote: found.quote, turn: found.turn, start: null };
  };
  cite('caller_name', analysis.caller_name, name);
  cite('service_needed', analysis.service_needed, serviceFound);
  cite('preferred_date', analysis.preferred_date, dateFound);
  cite('client_address', analysis.client_address, addressFound);
  cite('client_city', analysis.client_city, cityFound);

  const followup =
    twoSided && !voicemail && lead && summary
      ? composeFollowup(analysis, orgName, language ?? input.organization.language)
      : null;
  return Object.keys(evidence).length ? { analysis, followup, evidence } : { analysis, followup };
}

/** What additional_details says of a call that is not a lead. */
const KIND_NOTE: Record<Exclude<CallKind, 'lead'>, string> = {
  wrong_number: 'Wrong number.',
  spam: 'Looks like spam or a sales call.',
  applicant: 'A job applicant.',
  supplier: 'A supplier.',
};

/**
 * The service as a phrase: the words after a need verb in the sentence found ("I need a plumber to
 * fix my leaking water heater" → "a plumber to fix my leaking water heater") when they still name
 * it, else the sentence's clause.
 */
function servicePhrase(found: { value: string; quote: string }): string {
  const phrase = extractService(found.quote);
  return phrase && serviceTerms(phrase) >= serviceTerms(found.quote) ? phrase : found.value;
}

/**
 * The result for a transcript in which nobody said anything (nothingSaid: empty, whitespace, labels
 * alone): every field null, no draft. No model is asked — a model handed silence invents a caller
 * (spec: every field is null when the call did not contain the information). The analyse stage
 * answers it before any provider runs; each provider answers it too, for any other caller.
 */
export function silentCallResult(): AnalyzerResult {
  return { analysis: emptyAnalysis(), followup: null };
}

/**
 * Whether a follow-up draft may be written after this transcript: a two-sided call (two labelled
 * speakers, or unlabelled text that is not a voicemail), not a voicemail (by its wording, or known
 * to be one: `voicemail`), and something was said (an empty text has no voicemail wording, but no
 * sides either). Every analysis provider asks this, so the rule is the same whoever writes the draft.
 */
export function callShape(
  transcript: string,
  organizationName: string,
  known: { voicemail?: boolean } = {},
): { voicemail: boolean; twoSided: boolean } {
  const { speakers } = readTranscript(transcript, organizationName);
  const voicemail =
    known.voicemail === true ||
    (speakers.length <= 1 && (soundsLikeVoicemail(transcript) || readsAsMessage(transcript)));
  if (nothingSaid(transcript)) return { voicemail, twoSided: false };
  const twoSided = speakers.length >= 2 || (speakers.length === 0 && !voicemail);
  return { voicemail, twoSided: twoSided && !voicemail };
}

/**
 * 1–10. Not a lead (wrong number, spam, applicant, supplier): 1. A voicemail: 2, or when it leaves a
 * request 4, +1 each for a date and a place (at most 6: nobody has spoken to the caller yet). A
 * conversation: 3, +2 a stated need, +1 each for a date, a place, a name and urgency, +1 when the
 * customer said a fair amount (≥ 40 words); at most 6 for a price enquiry or an existing customer's
 * administrative call (a need without commitment). Silence has no score.
 */
function leadScore(f: {
  said: string;
  kind: CallKind;
  voicemail: boolean;
  service: string | null;
  date: string | null;
  place: string | null;
  name: string | null;
}): number | null {
  if (!f.said.trim()) return null;
  if (f.kind !== 'lead') return 1;
  if (f.voicemail) return f.service ? Math.min(6, 4 + (f.date ? 1 : 0) + (f.place ? 1 : 0)) : 2;
  let score = 3;
  if (f.service) score += 2;
  if (f.date) score += 1;
  if (f.place) score += 1;
  if (f.name) score += 1;
  if (URGENCY_RE.test(f.said)) score += 1;
  if (f.said.split(/\s+/).length >= 40) score += 1;
  if (BROWSING_RE.test(f.said) || ADMIN_RE.test(f.said)) score = Math.min(score, 6);
  return Math.min(LEAD_SCORE_MAX, Math.max(LEAD_SCORE_MIN, score));
}

function proposals(
  said: string,
  service: string | null,
  date: string | null,
  phone: string | null,
): ProposalItem[] | null {
  const items: ProposalItem[] = [];
  if (date) items.push({ kind: 'appointment', text: `Schedule ${service ?? 'a visit'} for ${date}` });
  if (CALLBACK_RE.test(said))
    items.push({
      kind: 'callback',
      text: phone ? `Call the customer back at ${phone}` : 'Call the customer back',
    });
  if (QUOTE_RE.test(said))
    items.push({ kind: 'quote', text: `Send a quote${service ? ` for ${service}` : ''}` });
  return items.length ? items : null;
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
