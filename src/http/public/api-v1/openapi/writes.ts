import { z } from 'zod';
import { createContactBody, listContactsParams, updateContactBody } from '../contacts-params.ts';
import { placeCallBody } from '../place-call.ts';
import { inboundTestCallBody } from '../test-helpers.ts';
import { header, retryAfterHeader } from './responses.ts';
import { CallResponse, envelope } from './schemas.ts';
import type { ErrorSpec, OperationSpec } from './types.ts';

/**
 * The contacts operations and POST /calls (spec/api-v1-additions.md "Contacts", "Placing calls"),
 * their schemas and their own error answers; document.ts imports this file.
 */
const dateTime = () => z.iso.datetime({ offset: true });

export const Contact = z
  .object({
    contact_id: z.guid(),
    phone: z.string().describe('As given.'),
    phone_e164: z
      .string()
      .nullable()
      .describe(
        'Null when not a usable number (possible for contacts created outside this API; POST and PATCH refuse unusable numbers).',
      ),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    email: z.string().nullable(),
    company: z.string().nullable(),
    notes: z.string().nullable(),
    tags: z.array(z.string()),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .describe(
    'A contact. Same fields as the contact.created snapshot (whose id is contact_id), plus notes and tags.',
  );

export const ContactPage = z
  .object({
    items: z.array(Contact),
    has_more: z.boolean().describe('Whether another page exists; prefer it over comparing counts.'),
    page: z.int(),
    limit: z.int(),
  })
  .describe('One page of contacts, newest first.');

export const ContactResponse = envelope(Contact);
export const ContactPageResponse = envelope(ContactPage);

export const CreateContactRequest = createContactBody.describe(
  'A new contact. Empty strings are stored as null; tags are trimmed, empty ones dropped, case-insensitive duplicates removed.',
);
export const UpdateContactRequest = updateContactBody.describe(
  'Any of the writable fields (at least one); null or an empty string clears a field.',
);
export const PlaceCallRequest = placeCallBody.describe(
  'agent_user_id defaults to the key’s user; agent_phone to the phone that user last used on an outbound call; ' +
    'from_number to the organization’s service number when it has exactly one.',
);

export const InboundTestCallRequest = inboundTestCallBody.describe(
  'scenario defaults to conversation; caller_phone to the documented test caller +12025550199 (not allowed with ' +
    'anonymous); script, lines "Agent: …" / "Customer: …", is the transcript (default: the scenario’s own).',
);

export const writeSchemas: Record<string, z.ZodType> = {
  Contact,
  ContactPage,
  ContactResponse,
  ContactPageResponse,
};

const ID_PARAM = { id: { schema: z.guid(), description: 'The contact_id.' } };

const REPLAYED = {
  'Idempotent-Replayed': header(
    'Present (`true`) when this answer is the stored answer of an earlier request with the same Idempotency-Key and body.',
    { type: 'string', const: 'true' },
    false,
  ),
};

const BODY_ERRORS: ErrorSpec[] = [
  {
    status: 413,
    description: 'PAYLOAD_TOO_LARGE: the body is over 1 MiB (refused before authentication).',
    rateLimitHeaders: 'optional',
  },
  {
    status: 415,
    description: 'UNSUPPORTED_MEDIA_TYPE: a body that is not Content-Type: application/json.',
  },
];

const IDEMPOTENCY_CONFLICT: ErrorSpec = {
  status: 409,
  description:
    'CONFLICT: a request with the same Idempotency-Key is still being processed after 15 seconds of waiting; retry to get its answer.',
};

function writeErrors(extra: ErrorSpec[], unprocessable: string): ErrorSpec[] {
  return [
    400,
    401,
    402,
    403,
    ...BODY_ERRORS,
    ...extra,
    { status: 422, description: unprocessable },
    {
      status: 429,
      description:
        'RATE_LIMITED: the hourly limit of the key or of the account is exceeded (writes count like reads), or this address ' +
        'sent too many failed authentications in the current minute. Retry after Retry-After seconds.',
      headers: { 'Retry-After': retryAfterHeader },
    },
    500,
    503,
  ];
}

export const writeOperations: OperationSpec[] = [
  {
    method: 'get',
    path: '/contacts',
    operationId: 'listContacts',
    summary: 'List contacts',
    description:
      "Contacts of the key's organization and environment, newest first (created_at descending, then contact_id " +
      'descending), paginated as GET /calls. Unknown or repeated query parameters answer 400. Scope: read.contacts.',
    tag: 'Contacts',
    auth: { bearer: true, scope: 'read.contacts' },
    query: listContactsParams,
    success: [
      {
        status: 200,
        description: 'One page of contacts.',
        contentType: 'application/json',
        schema: ContactPageResponse,
      },
    ],
    errors: [400, 401, 402, 403, 429, 500, 503],
  },
  {
    method: 'get',
    path: '/contacts/{id}',
    operationId: 'getContact',
    summary: 'Read one contact',
    description:
      "One contact of the key's organization and environment; another organization's or environment's contact and a " +
      'malformed id answer 404 (never 403). Scope: read.contacts.',
    tag: 'Contacts',
    auth: { bearer: true, scope: 'read.contacts' },
    pathParams: ID_PARAM,
    query: {},
    success: [
      { status: 200, description: 'The contact.', contentType: 'application/json', schema: ContactResponse },
    ],
    errors: [400, 401, 402, 403, 404, 429, 500, 503],
  },
  {
    method: 'post',
    path: '/contacts',
    operationId: 'createContact',
    summary: 'Create a contact',
    description:
      'Creates a contact and emits contact.created. A phone number another contact of the environment has (same ' +
      'E.164 number) answers 409 CONTACT_EXISTS naming it in error.contact_id. Honours Idempotency-Key. Scope: write.contacts.',
    tag: 'Contacts',
    auth: { bearer: true, scope: 'write.contacts' },
    query: {},
    requestBody: { schema: CreateContactRequest, description: 'The contact.', required: true },
    idempotent: true,
    success: [
      {
        status: 201,
        description:
          'The contact created (or, replayed, the one an earlier request with the same key created).',
        contentType: 'application/json',
        schema: ContactResponse,
        headers: REPLAYED,
      },
    ],
    errors: writeErrors(
      [
        {
          status: 409,
          description:
            'CONTACT_EXISTS: another contact of the environment has this E.164 number (error.contact_id names it). ' +
            'CONFLICT: a request with the same Idempotency-Key is still being processed after 15 seconds; retry.',
          headers: REPLAYED,
        },
      ],
      'VALIDATION_ERROR: an unusable phone number or e-mail address (error.param phone or email). ' +
        'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with a different body in the last 24 hours (error.param Idempotency-Key).',
    ),
  },
  {
    method: 'patch',
    path: '/contacts/{id}',
    operationId: 'updateContact',
    summary: 'Update a contact',
    description:
      'Changes any of the writable fields and emits contact.updated whose diff holds only what changed; an update ' +
      'that changes nothing answers 200 and emits nothing. Scope: write.contacts.',
    tag: 'Contacts',
    auth: { bearer: true, scope: 'write.contacts' },
    pathParams: ID_PARAM,
    query: {},
    requestBody: { schema: UpdateContactRequest, description: 'The fields to change.', required: true },
    success: [
      {
        status: 200,
        description: 'The contact as stored.',
        contentType: 'application/json',
        schema: ContactResponse,
      },
    ],
    errors: writeErrors(
      [
        404,
        {
          status: 409,
          description:
            'CONTACT_EXISTS: another contact of the environment has this E.164 number (error.contact_id).',
        },
      ],
      'VALIDATION_ERROR: an unusable phone number or e-mail address (error.param phone or email).',
    ),
  },
  {
    method: 'post',
    path: '/calls',
    operationId: 'placeCall',
    summary: 'Place an outbound call',
    description:
      'Rings the agent first, then dials the customer from a service number once the agent confirms; the call is ' +
      'recorded, transcribed and delivered like any call (the same service function and events as a call placed ' +
      'from the web app). Answers 201 with the call (direction outbound, outbound_lifecycle ringing_agent, or ' +
      'failed_to_initiate when the carrier refused at once — call.failed follows). Besides the hourly limits, an ' +
      'organization may place a capped number of calls per minute (default 10). Honours Idempotency-Key. Scope: write.calls.',
    tag: 'Calls',
    auth: { bearer: true, scope: 'write.calls' },
    query: {},
    requestBody: { schema: PlaceCallRequest, description: 'The call to place.', required: true },
    idempotent: true,
    success: [
      {
        status: 201,
        description: 'The call placed (or, replayed, the one an earlier request with the same key placed).',
        contentType: 'application/json',
        schema: CallResponse,
        headers: REPLAYED,
      },
    ],
    errors: writeErrors(
      [IDEMPOTENCY_CONFLICT],
      'VALIDATION_ERROR with error.param: customer_phone or agent_phone not a usable number, agent_user_id not a user of ' +
        'the organization, from_number not one of its service numbers or not defaultable, agent_phone not defaultable, ' +
        'or telephony not set up (from_number). IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with a different ' +
        'body in the last 24 hours (error.param Idempotency-Key).',
    ),
  },
  {
    method: 'post',
    path: '/test-helpers/inbound-calls',
    operationId: 'createInboundTestCall',
    summary: 'Start an inbound test call',
    description:
      'Test keys only. The simulated carrier rings the organization’s test number and plays the scenario through the ' +
      'real pipeline (recording, transcript from the script, analysis, events), in a few seconds: conversation ends ' +
      'with call.completed and call.followup_email.drafted; voicemail is one-sided (no draft); recording_refused is the ' +
      'caller refusing the recording (recording-url answers 409); anonymous has a withheld caller id ' +
      '(customer_phone_e164 null). Answers 201 with the call as it starts. Counts against the per-minute cap of ' +
      'POST /calls. Scope: write.calls.',
    tag: 'Calls',
    auth: { bearer: true, scope: 'write.calls' },
    query: {},
    requestBody: { schema: InboundTestCallRequest, description: 'The test call to play.', required: true },
    success: [
      {
        status: 201,
        description: 'The test call, started.',
        contentType: 'application/json',
        schema: CallResponse,
      },
    ],
    errors: writeErrors(
      [],
      'VALIDATION_ERROR with error.param: caller_phone not a usable number (or given with scenario anonymous), ' +
        'script without a turn ("Agent: …" / "Customer: …"). A live key answers 403 FORBIDDEN.',
    ),
  },
];
