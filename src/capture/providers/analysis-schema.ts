import { z } from 'zod';
import { LEAD_SCORE_MAX, LEAD_SCORE_MIN, SUBJECT_MAX } from '../../domain/analysis.ts';

/**
 * The one zod schema of a model's analysis answer. The JSON schema sent as the chat completion's
 * `response_format` is generated from it (answerJsonSchema), and the answer is validated with it —
 * so the model is asked for exactly what is used. It differs per call in two places:
 * `counterparty_name` (and `caller_name`) can only be null on a call direction where the spec gives
 * them no meaning, and `followup_email` can only be null on a one-sided call (voicemail). A value in
 * such a field is the one thing not refused: it is dropped (acceptedAnswerSchema, salvageAnswer).
 */

const TEXT_MAX = 2000;

const text = (description: string) =>
  z
    .string()
    .trim()
    .min(1)
    .max(TEXT_MAX)
    .nullable()
    .describe(`${description}; null when the call did not say`);

/**
 * A signature block: a closing formula on a line of its own ("Best regards,", "Mit freundlichen
 * Grüßen") followed by up to three short lines (a name, a company), or left dangling with a comma.
 */
const CLOSING = String.raw`(?:(?:best|kind|warm|warmest|many)\s+(?:regards|wishes|thanks)|regards|sincerely(?:\s+yours)?|yours\s+(?:sincerely|truly|faithfully)|cheers|thanks|thank you|mit freundlichen grüßen|freundliche grüße|viele grüße|beste grüße|cordialement|bien à vous|bien cordialement|atentamente|saludos(?:\s+cordiales)?|un saludo|cordiali saluti|met vriendelijke groet)`;
const SIGN_OFF = new RegExp(
  String.raw`(?:^|\n)[ \t]*${CLOSING}[ \t]*(?:[,!.]?[ \t]*(?:\n[ \t]*[^\n]{1,60}){1,3}|,)\s*$`,
  'iu',
);
const HTML = /<\/?[a-z][a-z0-9]*(?:\s[^>]*)?>/i;

export const followupAnswer = z
  .object({
    subject: z
      .string()
      .trim()
      .min(1)
      .max(SUBJECT_MAX)
      .describe(`the e-mail's subject line, at most ${SUBJECT_MAX} characters`),
    body: z
      .string()
      .trim()
      .min(1)
      .max(5000)
      .describe(
        'plain text (no HTML, no Markdown), no signature and no closing formula: the sender adds their own',
      )
      .refine((b) => !HTML.test(b), 'must be plain text without HTML tags')
      .refine(
        (b) => !SIGN_OFF.test(b),
        'must end without a signature or closing formula (the sender adds their own)',
      ),
  })
  .describe('a follow-up e-mail to the customer');

export interface AnswerShape {
  direction: 'inbound' | 'outbound';
  /** whether a draft may be composed: a two-sided call, not a voicemail */
  draftAllowed: boolean;
}

export function analysisAnswerSchema(shape: AnswerShape) {
  const inbound = shape.direction === 'inbound';
  return z.object({
    caller_name: inbound
      ? text("the caller's name if they gave it")
      : z.null().describe('always null on an outbound call (the name goes into counterparty_name)'),
    summary: text('a short paragraph summarising the call'),
    subject: z
      .string()
      .trim()
      .min(1)
      .max(SUBJECT_MAX)
      .nullable()
      .describe(`a one-line title of the call, at most ${SUBJECT_MAX} characters`),
    service_needed: text('what the customer asked for'),
    services_match: z
      .boolean()
      .nullable()
      .describe(
        'whether the request fits what the organization offers, judged from its name; null when unclear',
      ),
    lead_score: z
      .number()
      .int()
      .min(LEAD_SCORE_MIN)
      .max(LEAD_SCORE_MAX)
      .nullable()
      .describe(
        `how promising the call is as a sales lead, ${LEAD_SCORE_MIN} to ${LEAD_SCORE_MAX}; null when nobody said anything`,
      ),
    preferred_date: text('a date or time the customer asked for, as they said it'),
    client_city: text("the customer's city"),
    client_address: text("the customer's street address"),
    additional_details: text('other details worth knowing (access, urgency, constraints)'),
    caller_location: text('a geographic reference the customer gave'),
    client_country: text("the customer's country"),
    counterparty_name: inbound
      ? z.null().describe('always null on an inbound call')
      : text('the name of the person the agent called'),
    detected_language: z
      .string()
      .regex(/^[a-z]{2}$/, 'must be an ISO 639-1 code such as en or de')
      .nullable()
      .describe('the language of the call as an ISO 639-1 code (en, de, fr, …); null when it cannot be told'),
    proposal_items: z
      .array(
        z.object({
          kind: z
            .string()
            .trim()
            .min(1)
            .max(40)
            .describe('appointment, callback, quote, or another short kind'),
          text: z.string().trim().min(1).max(300).describe('the suggested follow-up or decision'),
        }),
      )
      .max(20)
      .nullable()
      .describe('suggested follow-ups and decisions from the call; null when there are none'),
    followup_email: shape.draftAllowed
      ? followupAnswer.nullable()
      : z.null().describe('always null: no follow-up e-mail after a one-sided call or a voicemail'),
  });
}

export type AnalysisAnswer = z.infer<ReturnType<typeof analysisAnswerSchema>>;

/** The fields a call may hold only null in (the per-call differences of the schema above). */
export type ForbiddenField = 'caller_name' | 'counterparty_name' | 'followup_email';

export function forbiddenFields(shape: AnswerShape): ForbiddenField[] {
  const out: ForbiddenField[] = [shape.direction === 'inbound' ? 'counterparty_name' : 'caller_name'];
  if (!shape.draftAllowed) out.push('followup_email');
  return out;
}

/**
 * What an answer is validated with: analysisAnswerSchema, except that a field the call forbids
 * (forbiddenFields) takes any value or none — the JSON schema sent still says null. A model that
 * does not enforce the schema strictly (most local servers) and fills one in has its answer
 * salvaged (salvageAnswer: the value dropped, the rest kept) instead of retried and refused; only
 * wrong types and out-of-range values anywhere else are refused.
 */
export function acceptedAnswerSchema(shape: AnswerShape) {
  const loose = Object.fromEntries(forbiddenFields(shape).map((f) => [f, z.unknown()])) as Record<
    ForbiddenField,
    z.ZodUnknown
  >;
  return analysisAnswerSchema(shape).extend(loose);
}

/**
 * An accepted answer as the strict schema has it: each forbidden field null. Answers the names of the
 * fields that held something (never their values, which may be personal: a name, a draft).
 */
export function salvageAnswer(
  accepted: z.infer<ReturnType<typeof acceptedAnswerSchema>>,
  shape: AnswerShape,
): { answer: AnalysisAnswer; dropped: ForbiddenField[] } {
  const dropped: ForbiddenField[] = [];
  const answer = { ...accepted } as Record<string, unknown>;
  for (const f of forbiddenFields(shape)) {
    if (answer[f] !== null && answer[f] !== undefined) dropped.push(f);
    answer[f] = null;
  }
  return { answer: answer as AnalysisAnswer, dropped };
}

/**
 * Keywords OpenAI's strict structured outputs do not take; they stay in the zod validation (and
 * the field descriptions say them in words).
 */
const UNSUPPORTED = new Set(['$schema', 'minLength', 'maxLength']);

/** The JSON schema of the answer, as sent in `response_format.json_schema.schema`. */
export function answerJsonSchema(shape: AnswerShape): Record<string, unknown> {
  return strip(z.toJSONSchema(analysisAnswerSchema(shape), { io: 'output' })) as Record<string, unknown>;
}

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!UNSUPPORTED.has(k)) out[k] = strip(x);
  return out;
}

/** A zod error as lines the model can act on: `subject: Too big: expected string to have <=80 characters`. */
export function issueLines(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(answer)'}: ${i.message}`);
}
