import type { Clock } from '../../clock.ts';
import type { FollowupDraft, ProcessedAnalysis } from '../../domain/analysis.ts';
import type { AnalyzerInput, AnalyzerResult } from '../../domain/capture-providers.ts';
import { callShape, silentCallResult } from '../analyzer.ts';
import { primaryLanguage } from '../language.ts';
import { nothingSaid } from '../transcript-text.ts';
import {
  type AnalysisAnswer,
  type AnswerShape,
  acceptedAnswerSchema,
  answerJsonSchema,
  issueLines,
  salvageAnswer,
} from './analysis-schema.ts';
import { type ProviderHttp, postJson } from './http.ts';
import { type AnalysisProvider, ProviderError } from './types.ts';

/**
 * Analysis by a chat model: `POST {base}/chat/completions` with a strict JSON-schema response format
 * (analysis-schema.ts). OpenAI, and local servers that speak the same API (llama.cpp's server,
 * Ollama's /v1, vLLM), take it. An answer that fails validation (a wrong type, a value out of
 * range) is sent back once with the validation errors; a second failure is ProviderError
 * 'invalid_output' — the answer is never clipped or filled in. A value in a field this call allows
 * only null (caller_name on outbound, counterparty_name on inbound, followup_email when no draft is
 * allowed) is not a reason to refuse: it is dropped and named in the result's droppedFields. After
 * validation the service's own rules still apply: no draft after a one-sided call or a voicemail,
 * the draft's language is the detected one (else the organization's). A transcript in which nobody
 * said anything is never sent: its analysis is all null (silentCallResult).
 */

export const OPENAI_DEFAULT_ANALYSIS_MODEL = 'gpt-5-mini';
const SCHEMA_NAME = 'call_analysis';

export interface OpenAiAnalysisOptions {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  timeoutMs: number;
  /** most bytes of an answer read (PROVIDER_MAX_ANSWER_BYTES; http.ts) */
  maxAnswerBytes?: number;
  clock: Clock;
}

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

const SYSTEM = `You analyse the transcript of a business phone call for the organization named in the request.
Lines start with "Agent:" (the organization's side) or "Customer:" (the other party); an unlabelled transcript has no speaker labels.
Answer with one JSON object that follows the given schema. Rules:
- Use only what was said in the call. Every field the call does not tell is null; never guess names, dates, addresses or numbers.
- subject is one line of at most 80 characters.
- lead_score is an integer from 1 (no business value) to 10 (a ready customer with a clear need, time and place); null when nobody said anything.
- caller_name is the customer's name on an inbound call; counterparty_name is the customer's name on an outbound call; the other one is always null.
- detected_language is the ISO 639-1 code of the language the customer spoke.
- preferred_date is the day the customer wants (said by them, or proposed to them and accepted; the last one when they correct themselves), resolved forward against call_started_at when it is given: the words as said followed by the day in parentheses, e.g. "Friday morning (2026-03-13)". A card's expiry date or a day in the past is not a preferred date.
- followup_email, when the schema allows one: a short e-mail to the customer written in the call's detected language (the organization's language when it cannot be told), plain text, no HTML or Markdown, that thanks them for the call and restates what they asked for and any agreed time. It has no signature and no closing formula such as "Best regards": the sender adds their own. null when no useful e-mail can be written.`;

export function openAiAnalysis(opts: OpenAiAnalysisOptions): AnalysisProvider {
  const name = 'openai';
  const base = opts.baseUrl?.replace(/\/+$/, '') ?? 'https://api.openai.com/v1';
  const model = opts.model ?? OPENAI_DEFAULT_ANALYSIS_MODEL;
  const http: ProviderHttp = {
    provider: name,
    timeoutMs: opts.timeoutMs,
    maxAnswerBytes: opts.maxAnswerBytes,
    clock: opts.clock,
    secrets: opts.apiKey ? [opts.apiKey] : [],
  };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;

  const complete = async (messages: Message[], schema: Record<string, unknown>): Promise<string> => {
    const body = await postJson(http, `${base}/chat/completions`, {
      headers,
      body: JSON.stringify({
        model,
        messages,
        response_format: { type: 'json_schema', json_schema: { name: SCHEMA_NAME, strict: true, schema } },
      }),
    });
    const message = (body as { choices?: { message?: { content?: unknown; refusal?: unknown } }[] })
      ?.choices?.[0]?.message;
    if (!message)
      throw new ProviderError(name, 'fatal', 'openai answered a chat completion without choices[0].message');
    if (typeof message.refusal === 'string' && message.refusal)
      return JSON.stringify({ refusal: message.refusal });
    if (typeof message.content !== 'string')
      throw new ProviderError(name, 'fatal', 'openai answered a chat completion without message content');
    return message.content;
  };

  return {
    name,
    async analyze(input: AnalyzerInput): Promise<AnalyzerResult> {
      if (nothingSaid(input.transcript)) return silentCallResult();
      const { twoSided } = callShape(input.transcript, input.organization.name, {
        voicemail: input.voicemail,
      });
      const shape: AnswerShape = { direction: input.direction, draftAllowed: twoSided };
      const zod = acceptedAnswerSchema(shape);
      const schema = answerJsonSchema(shape);
      const messages: Message[] = [
        { role: 'system', content: SYSTEM },
        {
          role: 'user',
          content: JSON.stringify({
            organization: input.organization,
            direction: input.direction,
            language_reported_by_speech_to_text: primaryLanguage(input.language),
            follow_up_email_allowed: twoSided,
            // relative dates ("tomorrow", "el lunes") are said relative to this
            call_started_at: input.startedAt?.toISOString() ?? null,
            transcript: input.transcript,
          }),
        },
      ];
      let problems: string[] = [];
      for (let attempt = 1; attempt <= 2; attempt++) {
        const content = await complete(messages, schema);
        problems = validate(zod, content);
        if (problems.length === 0) {
          const { answer, dropped } = salvageAnswer(zod.parse(JSON.parse(content)), shape);
          const result = toResult(answer, input, twoSided);
          return dropped.length ? { ...result, droppedFields: dropped } : result;
        }
        messages.push(
          { role: 'assistant', content },
          {
            role: 'user',
            content: `Your answer was rejected:\n${problems.map((p) => `- ${p}`).join('\n')}\nAnswer again with the whole corrected JSON object.`,
          },
        );
      }
      throw new ProviderError(
        name,
        'invalid_output',
        `the model's analysis broke the schema twice: ${problems.join('; ')}`.slice(0, 1000),
      );
    },
  };
}

function validate(zod: ReturnType<typeof acceptedAnswerSchema>, content: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    return ['the answer is not a JSON object'];
  }
  if (json && typeof json === 'object' && 'refusal' in json && Object.keys(json).length === 1)
    return [`the model refused: ${String((json as { refusal: unknown }).refusal).slice(0, 200)}`];
  const r = zod.safeParse(json);
  return r.success ? [] : issueLines(r.error);
}

function toResult(a: AnalysisAnswer, input: AnalyzerInput, twoSided: boolean): AnalyzerResult {
  const language = a.detected_language ?? primaryLanguage(input.language);
  const analysis: ProcessedAnalysis = {
    caller_name: a.caller_name,
    summary: a.summary,
    subject: a.subject,
    service_needed: a.service_needed,
    services_match: a.services_match,
    lead_score: a.lead_score,
    preferred_date: a.preferred_date,
    client_city: a.client_city,
    client_address: a.client_address,
    additional_details: a.additional_details,
    caller_location: a.caller_location,
    client_country: a.client_country,
    counterparty_name: input.direction === 'outbound' ? a.counterparty_name : null,
    proposal_items: a.proposal_items && a.proposal_items.length > 0 ? a.proposal_items : null,
  };
  if (language) analysis.detected_language = language;
  // the service's rule, whatever the model answered: a draft only after a two-sided call
  const followup: FollowupDraft | null =
    twoSided && a.followup_email
      ? {
          subject: a.followup_email.subject,
          body: a.followup_email.body,
          language: language ?? primaryLanguage(input.organization.language) ?? input.organization.language,
        }
      : null;
  return { analysis, followup };
}
