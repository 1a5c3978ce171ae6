import { z } from 'zod';
import {
  AGENT_FAILURE_REASONS,
  CUSTOMER_FAILURE_REASONS,
  INITIATE_FAILURE_REASONS,
} from '../../../../domain/outbound-progress.ts';
import {
  CRM_STATUSES,
  DIRECTIONS,
  ENVIRONMENTS,
  OUTBOUND_LIFECYCLES,
  REVIEW_STATUSES,
} from '../../../../domain/values.ts';

/**
 * Response bodies of the REST API as zod schemas (spec "Resources and their fields", "Errors").
 * openapi.ts turns them into components.schemas; tests validate every response against that.
 */
const uuid = () => z.guid();
const dateTime = () => z.iso.datetime({ offset: true });

export const Meta = z
  .object({ timestamp: dateTime().describe('When the response was produced.') })
  .describe('Response metadata.');

export const FollowupEmail = z
  .object({
    subject: z.string(),
    body: z.string().describe('Plain text, without signature.'),
    language: z.string().describe('Detected call language, falling back to the account language.'),
  })
  .describe('A follow-up e-mail draft for the customer to review and send; the service never sends it.');

export const TranscriptProcessed = z
  .object({
    caller_name: z.string().nullable(),
    summary: z.string().nullable(),
    service_needed: z.string().nullable(),
    followup_email: FollowupEmail.nullable(),
  })
  .describe('Allowlisted analysis of the call. Gives no access to the raw transcript or the audio.');

export const Call = z
  .object({
    call_id: uuid().describe('Stable call identifier.'),
    direction: z.enum(DIRECTIONS),
    caller_phone: z.string().describe('Stored caller phone; use customer_phone_e164 to match a CRM contact.'),
    customer_phone_e164: z
      .string()
      .nullable()
      .describe('The customer on the call in both directions; null when the carrier gave no usable number.'),
    customer_phone_national: z
      .string()
      .nullable()
      .describe(
        "Same number in its country's national format; null when the stored value is not a usable number.",
      ),
    company_phone_e164: z
      .string()
      .nullable()
      .describe('The number the call came in on or went out from; null when not recorded.'),
    app_url: z
      .url()
      .nullable()
      .describe('Permanent link to the call in the web app; does not expire; opening it requires a login.'),
    caller_name: z.string().nullable(),
    duration: z.number().nullable().describe('Recording length in seconds, not total call duration.'),
    crm_status: z.enum(CRM_STATUSES).describe('Legacy CRM kanban status.'),
    review_status: z.enum(REVIEW_STATUSES).nullable(),
    outbound_lifecycle: z
      .enum(OUTBOUND_LIFECYCLES)
      .nullable()
      .describe(
        `Null for calls without an outbound lifecycle. The failed states agent_no_answer, customer_no_answer and failed_to_initiate are announced by the call.failed event, whose failure_reason is one of: ${AGENT_FAILURE_REASONS.join(', ')} (agent_no_answer); ${CUSTOMER_FAILURE_REASONS.join(', ')} (customer_no_answer); ${INITIATE_FAILURE_REASONS.join(', ')} (failed_to_initiate); or null. New codes may be added within v1.`,
      ),
    transcript_processed: TranscriptProcessed.nullable().describe('Null when the call has no analysis.'),
    created_at: dateTime().describe('When the call was recorded.'),
  })
  .describe('A call. All fields are always present (nullable where stated).');

export const KeyIdentity = z
  .object({
    api_key_id: uuid(),
    user_id: uuid().describe('The user who owns the key.'),
    organization_id: uuid(),
    scopes: z.array(z.string()),
    rate_limit_per_hour: z.int().optional().describe("The key's own hourly limit."),
    environment: z
      .enum(ENVIRONMENTS)
      .describe(
        "The key's data environment: a test key (cc_test_…) reads and writes test data only, a live key live data only.",
      ),
  })
  .describe('The API key a request authenticated with.');

export const CallPage = z
  .object({
    items: z.array(Call),
    has_more: z.boolean().describe('Whether another page exists; prefer it over comparing counts.'),
    page: z.int(),
    limit: z.int(),
  })
  .describe('One page of calls, newest first.');

export const ErrorBody = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.string().describe('Stable; clients log and branch on it.'),
      message: z.string().describe('Human-readable; may change.'),
      param: z
        .string()
        .optional()
        .describe(
          'BAD_REQUEST, VALIDATION_ERROR and IDEMPOTENCY_KEY_REUSED, when one query parameter, body field or header is at ' +
            'fault: its name (the first one the message names), e.g. limit, customer_phone, Idempotency-Key.',
        ),
      contact_id: z
        .guid()
        .optional()
        .describe('CONTACT_EXISTS only: the contact that already has the phone number.'),
    }),
    meta: Meta.extend({
      request_id: z
        .string()
        .regex(/^[A-Za-z0-9._:-]{1,128}$/)
        .optional()
        .describe(
          'The request id, as in the X-Request-Id response header; quote it when reporting a problem.',
        ),
    }),
  })
  .describe('Every REST error.');

/** The success envelope around `data`. */
export const envelope = <T extends z.ZodType>(data: T) =>
  z.object({ success: z.literal(true), data, meta: Meta.optional() });

export const MeResponse = envelope(KeyIdentity);
export const CallResponse = envelope(Call);
export const CallPageResponse = envelope(CallPage);

/** components.schemas of the REST API (the recordings add theirs in recordings.ts). */
export const restSchemas: Record<string, z.ZodType> = {
  Meta,
  Error: ErrorBody,
  FollowupEmail,
  TranscriptProcessed,
  Call,
  KeyIdentity,
  CallPage,
  MeResponse,
  CallResponse,
  CallPageResponse,
};
