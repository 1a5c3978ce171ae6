/**
 * The event catalogue: the envelope and the `data` of every event type (spec "Events"), as zod
 * schemas. The single source of
 * - the payload builders' return types (event-data/*.ts: a builder that drifts does not compile),
 * - the OpenAPI `webhooks` section (src/http/public/api-v1/openapi/webhooks.ts), against which the
 *   test suite validates every event any test receives (test/helpers/receiver.ts),
 * - the SDK's event types (test/contracts/sdk-types keeps sdk/src/webhooks equal to these).
 *
 * They describe the public contract: keys the spec lets be absent ("present only on events emitted
 * from …", "may appear") are optional although this server always sends them.
 */
import { z } from 'zod';
import { processedAnalysisSchema } from '../../domain/analysis.ts';
import { DIRECTIONS } from '../../domain/values.ts';
import { EVENT_TYPES, type EventType } from './event-types.ts';
import { API_VERSION } from './outbox.ts';

const uuid = () => z.guid();
const dateTime = () => z.iso.datetime({ offset: true });

/** Final outbound states; each one triggers call.outbound.attempted. */
export const FINAL_OUTBOUND_LIFECYCLES = [
  'completed',
  'agent_only',
  'agent_no_answer',
  'customer_no_answer',
  'failed_to_initiate',
] as const;
/** Outbound states that trigger call.failed. */
export const FAILED_OUTBOUND_LIFECYCLES = [
  'agent_no_answer',
  'customer_no_answer',
  'failed_to_initiate',
] as const;

const since20260918 = (description: string) =>
  `${description} Present only on events emitted from 2026-09-18; absent on a replay of an older call.`;

export const callCompletedDataSchema = z
  .object({
    call_id: uuid().describe('Equals resource_id.'),
    direction: z.enum(DIRECTIONS),
    caller_phone: z.string().nullable(),
    customer_phone_e164: z
      .string()
      .nullable()
      .describe('The customer on the call; match CRM contacts on it.'),
    customer_phone_national: z
      .string()
      .nullable()
      .optional()
      .describe(since20260918('The same number in its national format.')),
    company_phone_e164: z
      .string()
      .nullable()
      .optional()
      .describe(since20260918('The number the call came in on or went out from.')),
    call_created_at: dateTime().nullable().optional().describe(since20260918('When the call was recorded.')),
    app_url: z
      .url()
      .nullable()
      .optional()
      .describe(since20260918('Permanent link to the call in the web app (opening it needs a login).')),
    duration: z.number().describe('Recording length in seconds.'),
    recording_url: z
      .url()
      .nullable()
      .describe('Link to the recording, signed for seven days; null when not yet stored at processing time.'),
    transcript_processed: processedAnalysisSchema,
    transcript_original: z.string().nullable().describe('The raw verbatim transcript.'),
  })
  .describe('data of call.completed: the primary data source.');

export const callTranscribedDataSchema = z
  .object({
    call_id: uuid(),
    transcript_original: z.string().nullable(),
    transcript_processed: processedAnalysisSchema,
  })
  .describe('data of call.transcribed. Carries no call metadata and no recording link.');

export const callOutboundAttemptedDataSchema = z
  .object({
    call_id: uuid(),
    agent_user_id: uuid().describe('The user who placed the call.'),
    customer_phone: z.string().describe('The dialled number.'),
    customer_phone_e164: z.string().describe('For CRM matching.'),
    outbound_lifecycle: z.enum(FINAL_OUTBOUND_LIFECYCLES),
    duration: z.number().nullable().describe('Seconds; null when failed at initiation or not yet known.'),
    attempted_at: dateTime().describe('When the event was emitted.'),
    has_recording: z
      .boolean()
      .describe(
        'True only when outbound_lifecycle is completed and the call was not in no_recording mode; the recording ' +
          'then follows as call.recording.ready.',
      ),
  })
  .describe('data of call.outbound.attempted.');

export const callRecordingReadyDataSchema = z
  .object({
    call_id: uuid(),
    recording_url: z
      .url()
      .nullable()
      .describe('Signed for seven days; rarely null, when the link could not be generated.'),
    duration: z.number().nullable(),
  })
  .describe('data of call.recording.ready.');

export const callFailedDataSchema = z
  .object({
    call_id: uuid(),
    outbound_lifecycle: z.enum(FAILED_OUTBOUND_LIFECYCLES).describe('The stage that failed.'),
    failure_reason: z
      .string()
      .nullable()
      .describe('Machine-readable code, for example customer_busy or agent_no_confirmation.'),
  })
  .describe('data of call.failed (outbound calls only).');

export const callOutboundLifecycleRepairedDataSchema = z
  .object({
    call_id: uuid(),
    previous_lifecycle: z.literal('agent_only'),
    new_lifecycle: z.literal('completed'),
    repaired_at: dateTime(),
  })
  .describe('data of call.outbound.lifecycle_repaired.');

export const DELETION_REASONS = [
  'consent_not_asked',
  'consent_withdrawn',
  'retention_expired',
  'user_erasure',
] as const;

export const callDeletionScheduledDataSchema = z
  .object({
    call_id: uuid(),
    pending_deletion_at: dateTime().describe('When the data will be permanently deleted.'),
    reason: z.enum(DELETION_REASONS),
  })
  .describe('data of call.deletion_scheduled.');

export const callRecordingDeletedDataSchema = z
  .object({
    call_id: uuid(),
    reason: z.string().nullable(),
    recording_sid: z
      .string()
      .nullable()
      .describe("The telephony provider's recording id; null when unresolved."),
    deletion_kind: z
      .enum(['hard_deleted', 'provider_404'])
      .describe('hard_deleted: deleted by the service; provider_404: already gone on the provider side.'),
    deleted_at: dateTime(),
  })
  .describe('data of call.recording.deleted. After this event the recording link answers 410.');

export const callFollowupEmailDraftedDataSchema = z
  .object({
    call_id: uuid(),
    subject: z.string(),
    body: z.string().describe('Plain text without signature.'),
    language: z.string().describe('The detected call language, falling back to the account language.'),
  })
  .describe('data of call.followup_email.drafted. The service never sends that e-mail itself.');

export const trackerMatchSchema = z
  .object({
    tracker_id: uuid(),
    name: z.string(),
    matched_terms: z.array(z.string()),
    excerpts: z.array(z.string()).describe('May be empty.'),
  })
  .describe('One keyword tracker that matched the processed transcript.');

export const callTrackerMatchedDataSchema = z
  .object({ call_id: uuid(), matches: z.array(trackerMatchSchema) })
  .describe('data of call.tracker.matched.');

export const contactSchema = z
  .object({
    id: uuid(),
    phone: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    email: z.string().nullable(),
    company: z.string().nullable(),
  })
  .describe('A full contact snapshot; notes and tags are not included.');

export const contactCreatedDataSchema = z
  .object({ contact: contactSchema })
  .describe('data of contact.created.');

export const contactDiffSchema = z
  .object({
    first_name: z.string().nullable().optional(),
    last_name: z.string().nullable().optional(),
    email: z.string().nullable().optional(),
    phone: z.string().optional(),
    company: z.string().nullable().optional(),
    notes: z.unknown().optional().describe('Value type not specified.'),
    tags: z.unknown().optional().describe('Value type not specified.'),
  })
  .describe('Only the changed fields, with their new values; absent keys were not modified.');

export const contactUpdatedDataSchema = z
  .object({ contact_id: uuid(), diff: contactDiffSchema })
  .describe('data of contact.updated.');

export const webhookTestDataSchema = callCompletedDataSchema
  .extend({
    _test: z.literal(true),
    _message: z.string(),
    _sent_at: dateTime(),
  })
  .describe(
    'data of webhook.test: a synthetic call.completed payload (call_id synthetic) plus _test, _message and ' +
      '_sent_at. Exclude it from business processing; it does not prove that real audio is available.',
  );

export type CallCompletedData = z.output<typeof callCompletedDataSchema>;
export type CallTranscribedData = z.output<typeof callTranscribedDataSchema>;
export type CallOutboundAttemptedData = z.output<typeof callOutboundAttemptedDataSchema>;
export type CallRecordingReadyData = z.output<typeof callRecordingReadyDataSchema>;
export type CallFailedData = z.output<typeof callFailedDataSchema>;
export type CallOutboundLifecycleRepairedData = z.output<typeof callOutboundLifecycleRepairedDataSchema>;
export type CallDeletionScheduledData = z.output<typeof callDeletionScheduledDataSchema>;
export type CallRecordingDeletedData = z.output<typeof callRecordingDeletedDataSchema>;
export type CallFollowupEmailDraftedData = z.output<typeof callFollowupEmailDraftedDataSchema>;
export type CallTrackerMatchedData = z.output<typeof callTrackerMatchedDataSchema>;
export type ContactCreatedData = z.output<typeof contactCreatedDataSchema>;
export type ContactDiff = z.output<typeof contactDiffSchema>;
export type ContactUpdatedData = z.output<typeof contactUpdatedDataSchema>;
export type WebhookTestData = z.output<typeof webhookTestDataSchema>;
export type FinalOutboundLifecycle = (typeof FINAL_OUTBOUND_LIFECYCLES)[number];
export type FailedOutboundLifecycle = (typeof FAILED_OUTBOUND_LIFECYCLES)[number];
export type DeletionReason = (typeof DELETION_REASONS)[number];

/** The data schema of each event type. */
export const EVENT_DATA_SCHEMAS = {
  'call.completed': callCompletedDataSchema,
  'call.outbound.attempted': callOutboundAttemptedDataSchema,
  'call.recording.ready': callRecordingReadyDataSchema,
  'call.transcribed': callTranscribedDataSchema,
  'call.failed': callFailedDataSchema,
  'call.outbound.lifecycle_repaired': callOutboundLifecycleRepairedDataSchema,
  'call.deletion_scheduled': callDeletionScheduledDataSchema,
  'call.recording.deleted': callRecordingDeletedDataSchema,
  'call.followup_email.drafted': callFollowupEmailDraftedDataSchema,
  'call.tracker.matched': callTrackerMatchedDataSchema,
  'contact.created': contactCreatedDataSchema,
  'contact.updated': contactUpdatedDataSchema,
  'webhook.test': webhookTestDataSchema,
} as const satisfies Record<EventType, z.ZodType>;

/** When each event type is emitted (spec "Event types"). */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'call.completed': 'Recording and transcript of a completed call are processed; the primary data source.',
  'call.outbound.attempted': 'An outbound dial reaches a final state (connected or failed).',
  'call.recording.ready': 'The recording file is available.',
  'call.transcribed': 'The transcript is ready; sent in the same processing run as call.completed.',
  'call.failed': 'An outbound call did not complete; outbound calls only.',
  'call.outbound.lifecycle_repaired': 'An outbound call state is corrected retroactively.',
  'call.deletion_scheduled':
    'A call is scheduled for deletion (erasure, retention). Sent only for calls whose content reached this endpoint.',
  'call.recording.deleted':
    'A recording was deleted. Sent only for calls whose content reached this endpoint; a 2xx means the instruction ' +
    'arrived, never that your copy is gone.',
  'call.followup_email.drafted':
    'A follow-up e-mail draft was composed after a two-sided call; not for voicemail or when no draft could be ' +
    'composed. The service never sends that e-mail itself.',
  'call.tracker.matched': 'At least one configured keyword tracker matches the processed transcript.',
  'contact.created': 'A new contact is created.',
  'contact.updated': 'A contact is edited.',
  'webhook.test':
    'The manual Test action on a subscription (also sent with a pending secret during a rotation, then carrying ' +
    'service-secret-rotation-id). resource_id is the subscription id.',
};

/** The envelope of one event type: exactly these six keys. */
export function eventEnvelopeSchema<T extends EventType>(type: T) {
  return z
    .object({
      api_version: z.literal(API_VERSION),
      event_id: uuid().describe('UUID v5, unique per event; de-duplicate on it (per subscription).'),
      event_type: z.literal(type),
      resource_id: uuid().describe(
        'The call id for call events, the contact id for contact events, the subscription id for webhook.test.',
      ),
      created_at: dateTime().describe(
        'When the event was sent (can be days after the call for a repaired event).',
      ),
      data: EVENT_DATA_SCHEMAS[type],
    })
    .describe(`A signed ${type} delivery.`);
}

/** Every event envelope, by event type. */
export const EVENT_ENVELOPE_SCHEMAS = Object.fromEntries(
  EVENT_TYPES.map((type) => [type, eventEnvelopeSchema(type)]),
) as { [T in EventType]: ReturnType<typeof eventEnvelopeSchema<T>> };

export const HANDSHAKE_EVENT_TYPE = 'webhook.subscription.verify';

/** The unsigned verification handshake (not an event): exactly these two keys. */
export const verificationHandshakeSchema = z
  .object({ event_type: z.literal(HANDSHAKE_EVENT_TYPE), challenge: z.string() })
  .describe('The verification handshake, sent unsigned when a subscription is created or re-verified.');

/** The reply strict mode requires (permissive mode accepts any 2xx and ignores the body). */
export const verificationHandshakeReplySchema = z
  .object({ challenge: z.string().describe('Exactly the received challenge.') })
  .describe('The reply to the verification handshake in strict mode.');
