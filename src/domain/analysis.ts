import { z } from 'zod';

/**
 * The processed call analysis (spec "Processed call analysis"): what call.completed and
 * call.transcribed carry as transcript_processed, and what call_analyses.analysis stores. Every field
 * is null when the call did not contain the information. We always write every listed key except
 * detected_language, which is left out when no language could be detected (the spec allows the key
 * to be absent). The REST Call shows only an allowlist of it (caller_name, summary, service_needed,
 * followup_email).
 */
export type ProcessedAnalysis = {
  caller_name: string | null;
  summary: string | null;
  /** one-line title, at most SUBJECT_MAX characters */
  subject: string | null;
  service_needed: string | null;
  services_match: boolean | null;
  /** 1 to 10 */
  lead_score: number | null;
  preferred_date: string | null;
  client_city: string | null;
  client_address: string | null;
  additional_details: string | null;
  caller_location: string | null;
  client_country: string | null;
  /** the other party's name; meaningful only for outbound calls, null on inbound */
  counterparty_name: string | null;
  detected_language?: string;
  proposal_items: ProposalItem[] | null;
};

/** Element of proposal_items (shape not fixed by the spec): a suggested follow-up or decision. */
export type ProposalItem = {
  kind: string;
  text: string;
};

/** A follow-up e-mail draft (call_analyses.followup_email); the service never sends it. */
export interface FollowupDraft {
  subject: string;
  body: string;
  language: string;
}

export const SUBJECT_MAX = 80;
export const LEAD_SCORE_MIN = 1;
export const LEAD_SCORE_MAX = 10;

const mayAppear = <T extends z.ZodType>(schema: T, description: string) =>
  schema.optional().describe(`May appear (absent on older analyses). ${description}`);

/**
 * The public contract of transcript_processed in webhook events (spec "Processed call analysis"):
 * the single source of the event catalogue (OpenAPI `webhooks`) and of the SDK's ProcessedAnalysis
 * type (test/contracts keeps the SDK equal to it). Looser than ProcessedAnalysis above, which is
 * what this server writes: the "may appear" keys are optional and unknown extra keys are allowed, as
 * the spec promises receivers. ProcessedAnalysis must stay assignable to it (the builders check).
 */
export const processedAnalysisSchema = z
  .looseObject({
    caller_name: z.string().nullable().describe("The caller's name, if given."),
    summary: z.string().nullable().describe('A short paragraph.'),
    subject: z.string().nullable().describe(`One-line title, up to ${SUBJECT_MAX} characters.`),
    service_needed: z.string().nullable().describe('What the caller asked for.'),
    services_match: z.boolean().nullable().describe('Whether the request matches the offered services.'),
    lead_score: z.number().min(LEAD_SCORE_MIN).max(LEAD_SCORE_MAX).nullable().describe('1 to 10.'),
    preferred_date: z.string().nullable().describe('A date or time mentioned.'),
    client_city: z.string().nullable(),
    client_address: z.string().nullable().describe('Street address, if mentioned.'),
    additional_details: z.string().nullable(),
    caller_location: mayAppear(z.string().nullable(), 'A geographic reference detected in the call.'),
    client_country: mayAppear(z.string().nullable(), 'The client’s country.'),
    counterparty_name: mayAppear(
      z.string().nullable(),
      'The other party’s name; only for outbound calls and live calls the service silently listens to.',
    ),
    detected_language: z
      .string()
      .optional()
      .describe('Language code (en, pt-BR); the key is absent when no language was detected.'),
    proposal_items: mayAppear(
      z
        .array(
          z
            .looseObject({ kind: z.string(), text: z.string() })
            .describe('A suggested follow-up or decision extracted from the call.'),
        )
        .nullable(),
      'Suggested follow-ups and decisions.',
    ),
  })
  .describe(
    'The processed call analysis. Every field is null when the call did not contain the information; unknown ' +
      'extra fields may appear and must be treated as optional.',
  );
export type ProcessedAnalysisContract = z.output<typeof processedAnalysisSchema>;

/**
 * The analysis of a call in which nobody said anything: every field null, detected_language absent.
 * What a silent call gets without any model being asked (src/capture/analyzer.ts silentCallResult).
 */
export function emptyAnalysis(): ProcessedAnalysis {
  return {
    caller_name: null,
    summary: null,
    subject: null,
    service_needed: null,
    services_match: null,
    lead_score: null,
    preferred_date: null,
    client_city: null,
    client_address: null,
    additional_details: null,
    caller_location: null,
    client_country: null,
    counterparty_name: null,
    proposal_items: null,
  };
}

/** Cuts text to max characters at a word boundary, ending with an ellipsis when cut. */
export function truncate(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '')}…`;
}

const text = z.string().trim().max(10_000).nullable().optional();

/** An analysis handed in by an importer (POST …/calls with transcript_processed). Extra keys are dropped. */
export const importedAnalysisSchema = z.object({
  caller_name: text,
  summary: text,
  subject: z.string().trim().max(SUBJECT_MAX).nullable().optional(),
  service_needed: text,
  services_match: z.boolean().nullable().optional(),
  lead_score: z.number().min(LEAD_SCORE_MIN).max(LEAD_SCORE_MAX).nullable().optional(),
  preferred_date: text,
  client_city: text,
  client_address: text,
  additional_details: text,
  caller_location: text,
  client_country: text,
  counterparty_name: text,
  detected_language: z
    .string()
    .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'must be a language code such as en or pt-BR')
    .optional(),
  proposal_items: z
    .array(z.object({ kind: z.string().max(100), text: z.string().max(2000) }))
    .max(50)
    .nullable()
    .optional(),
  followup_email: z
    .object({
      subject: z.string().min(1).max(500),
      body: z.string().min(1).max(20_000),
      language: z.string().min(2).max(16),
    })
    .nullable()
    .optional(),
});
export type ImportedAnalysis = z.infer<typeof importedAnalysisSchema>;

/** Fills every absent key with null; the imported follow-up draft is returned apart. */
export function normalizeImportedAnalysis(a: ImportedAnalysis): {
  analysis: ProcessedAnalysis;
  followup: FollowupDraft | null;
} {
  const analysis: ProcessedAnalysis = {
    caller_name: a.caller_name || null,
    summary: a.summary || null,
    subject: a.subject || null,
    service_needed: a.service_needed || null,
    services_match: a.services_match ?? null,
    lead_score: a.lead_score ?? null,
    preferred_date: a.preferred_date || null,
    client_city: a.client_city || null,
    client_address: a.client_address || null,
    additional_details: a.additional_details || null,
    caller_location: a.caller_location || null,
    client_country: a.client_country || null,
    counterparty_name: a.counterparty_name || null,
    proposal_items: a.proposal_items ?? null,
  };
  if (a.detected_language) analysis.detected_language = a.detected_language;
  return { analysis, followup: a.followup_email ?? null };
}

/** The analysis keys in the spec's order (detected_language last among the always-written ones). */
const ANALYSIS_KEYS = [
  'caller_name',
  'summary',
  'subject',
  'service_needed',
  'services_match',
  'lead_score',
  'preferred_date',
  'client_city',
  'client_address',
  'additional_details',
  'caller_location',
  'client_country',
  'counterparty_name',
  'detected_language',
  'proposal_items',
] as const;

/**
 * A stored analysis (jsonb, whose key order PostgreSQL does not keep) back in the spec's key order,
 * every listed key present (null when missing) except detected_language, kept only when stored.
 */
export function canonicalAnalysis(stored: Record<string, unknown>): ProcessedAnalysis {
  const out: Record<string, unknown> = {};
  for (const k of ANALYSIS_KEYS) {
    if (k === 'detected_language') {
      if (typeof stored[k] === 'string') out[k] = stored[k];
    } else out[k] = stored[k] ?? null;
  }
  return out as unknown as ProcessedAnalysis;
}
