import type { z } from 'zod';
import { processedAnalysisSchema } from '../../../../domain/analysis.ts';
import {
  contactDiffSchema,
  contactSchema,
  EVENT_DATA_SCHEMAS,
  EVENT_DESCRIPTIONS,
  EVENT_ENVELOPE_SCHEMAS,
  HANDSHAKE_EVENT_TYPE,
  trackerMatchSchema,
  verificationHandshakeReplySchema,
  verificationHandshakeSchema,
} from '../../../../webhooks/outbox/event-schemas.ts';
import { EVENT_TYPES, type EventType, TEST_EVENT_TYPE } from '../../../../webhooks/outbox/event-types.ts';
import type { JsonSchema } from './types.ts';

/**
 * The event catalogue of the OpenAPI document: the OpenAPI 3.1 `webhooks` section, one entry per
 * event type (and the verification handshake), built from the zod schemas the payload builders are
 * typed by (src/webhooks/outbox/event-schemas.ts). Every event any test receives is validated
 * against it (test/helpers/receiver.ts).
 */

/** call.outbound.lifecycle_repaired → CallOutboundLifecycleRepaired */
const pascal = (type: string) =>
  type
    .split(/[._]/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

export const dataSchemaName = (type: EventType) => `${pascal(type)}Data`;
export const eventSchemaName = (type: EventType) => `${pascal(type)}Event`;

/** components.schemas of the catalogue. */
export const webhookSchemas: Record<string, z.ZodType> = {
  ProcessedAnalysis: processedAnalysisSchema,
  Contact: contactSchema,
  ContactDiff: contactDiffSchema,
  TrackerMatch: trackerMatchSchema,
  ...Object.fromEntries(EVENT_TYPES.map((t) => [dataSchemaName(t), EVENT_DATA_SCHEMAS[t]])),
  ...Object.fromEntries(EVENT_TYPES.map((t) => [eventSchemaName(t), EVENT_ENVELOPE_SCHEMAS[t]])),
  VerificationHandshake: verificationHandshakeSchema,
  VerificationHandshakeReply: verificationHandshakeReplySchema,
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const headerParam = (name: string, description: string, schema: JsonSchema, required = true) => ({
  name,
  in: 'header',
  required,
  description,
  schema,
});

const DELIVERY = [
  'Delivery is at-least-once and unordered: de-duplicate on event_id and write idempotently (data.call_id groups ',
  'the events of one call). Verify service-signature over the exact raw body before parsing it: HMAC-SHA256 of ',
  '"<t>.<raw body>" keyed by the signing secret, hex encoded; reject a t more than 600 s old or 300 s ahead. New ',
  'optional fields and new event types may be added within v1.',
].join('');

const EVENT_RESPONSES = {
  '2XX': { description: 'Acknowledges HTTP receipt only.' },
  '401': { description: 'Pauses the subscription at once; the delivery is dead-lettered.' },
  '403': { description: 'Pauses the subscription at once; the delivery is dead-lettered.' },
  '410': { description: 'Two in a row pause the subscription.' },
  '422': { description: 'Pauses the subscription at once; the delivery is dead-lettered.' },
  default: {
    description:
      'Any other failure (another status, no answer, a time-out) is transient: up to 5 attempts in all, retried after ' +
      '2 min, 5 min, 30 min and 2 h; 50 consecutive transient failures pause the subscription.',
  },
};

function eventOperation(type: EventType): JsonSchema {
  const parameters = [
    headerParam(
      'service-signature',
      't=<unix seconds>,v1=<64 lowercase hex characters>: the HMAC-SHA256 of "<t>.<raw body>". Exactly one v1 ' +
        'signature is sent.',
      { type: 'string', pattern: '^t=\\d+,v1=[0-9a-f]{64}$' },
    ),
    headerParam('service-event-id', 'Equals the body’s event_id.', { type: 'string', format: 'uuid' }),
    headerParam('service-event-type', 'Equals the body’s event_type.', { type: 'string', const: type }),
    headerParam(
      'service-environment',
      'The data environment of the event: live, or test for an event of test data (a test key, the web app in test ' +
        'mode). A subscription receives the events of its own environment only. The envelope is the same in both.',
      { type: 'string', enum: ['live', 'test'] },
    ),
  ];
  if (type === TEST_EVENT_TYPE) {
    parameters.push(
      headerParam(
        'service-secret-rotation-id',
        'Present only on a test sent with a pending secret during a rotation: the id of that rotation.',
        { type: 'string' },
        false,
      ),
    );
  }
  return {
    operationId: `${pascal(type)[0].toLowerCase()}${pascal(type).slice(1)}Event`,
    summary: type,
    description: `${EVENT_DESCRIPTIONS[type]}\n\n${DELIVERY}`,
    tags: ['Webhooks'],
    security: [],
    parameters,
    requestBody: {
      required: true,
      content: { 'application/json': { schema: ref(eventSchemaName(type)) } },
    },
    responses: EVENT_RESPONSES,
  };
}

const handshakeOperation: JsonSchema = {
  operationId: 'verificationHandshake',
  summary: `${HANDSHAKE_EVENT_TYPE} (verification handshake, not an event)`,
  description:
    'Sent unsigned (no service-signature header) when a subscription is created or re-verified. It is ' +
    'unauthenticated: answer it and never create business records from it. Permissive mode (the default) accepts ' +
    'any 2xx and ignores the body; strict mode needs a 2xx with the JSON body {"challenge": "<the same string>"}. ' +
    'Echoing the challenge satisfies both.',
  tags: ['Webhooks'],
  security: [],
  requestBody: {
    required: true,
    content: { 'application/json': { schema: ref('VerificationHandshake') } },
  },
  responses: {
    '2XX': {
      description: 'Verifies the subscription. Strict mode requires this body; permissive mode ignores it.',
      content: { 'application/json': { schema: ref('VerificationHandshakeReply') } },
    },
    '4XX': { description: 'Verification fails; the subscription stays inactive.' },
    default: { description: 'Verification fails; the subscription stays inactive.' },
  },
};

/** The OpenAPI `webhooks` object: every event type in the spec's order, then the handshake. */
export function buildWebhooks(): Record<string, JsonSchema> {
  return {
    ...Object.fromEntries(EVENT_TYPES.map((t) => [t, { post: eventOperation(t) }])),
    [HANDSHAKE_EVENT_TYPE]: { post: handshakeOperation },
  };
}
