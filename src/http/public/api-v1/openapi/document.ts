import { z } from 'zod';
import { listCallsParams } from '../calls-params.ts';
import { recordingOperations, recordingSchemas } from './recordings.ts';
import {
  cacheControlHeader,
  errorContent,
  rateLimitHeaders,
  requestIdHeader,
  SHARED_ERRORS,
} from './responses.ts';
import { CallPageResponse, CallResponse, MeResponse, restSchemas } from './schemas.ts';
import type { JsonSchema, OperationSpec } from './types.ts';
import { buildWebhooks, webhookSchemas } from './webhooks.ts';
import { writeOperations, writeSchemas } from './writes.ts';

/**
 * The OpenAPI 3.1 description of the REST API, generated from the same zod schemas the code
 * validates queries with and answers with. Served without authentication at GET /api/v1/openapi.json;
 * `npm run lint:openapi` checks it with Redocly.
 */
export const API_REVISION = '0.14.0';
const ID_PARAM = { id: { schema: z.guid(), description: 'The call_id.' } };

/** The operations of /api/v1; the recordings add theirs from recordings.ts. */
export const restOperations: OperationSpec[] = [
  {
    method: 'get',
    path: '/me',
    operationId: 'getMe',
    summary: 'Identify the calling key',
    description: 'Identifies the calling API key; use it as a connection test. Needs no scope.',
    tag: 'Identity',
    auth: { bearer: true, scope: null },
    query: {},
    success: [
      { status: 200, description: 'The key identity.', contentType: 'application/json', schema: MeResponse },
    ],
    errors: [400, 401, 402, 403, 429, 500, 503],
  },
  {
    method: 'get',
    path: '/calls',
    operationId: 'listCalls',
    summary: 'List calls',
    description:
      "Calls of the key's organization, newest first (created_at descending, then call_id descending for calls " +
      'recorded at the same instant), paginated. Calls in the trash or scheduled for deletion are listed; deleted ' +
      'calls are not. Unknown or repeated query parameters answer 400. Scope: read.calls.',
    tag: 'Calls',
    auth: { bearer: true, scope: 'read.calls' },
    query: listCallsParams,
    success: [
      {
        status: 200,
        description: 'One page of calls.',
        contentType: 'application/json',
        schema: CallPageResponse,
      },
    ],
    errors: [400, 401, 402, 403, 429, 500, 503],
  },
  {
    method: 'get',
    path: '/calls/{id}',
    operationId: 'getCall',
    summary: 'Read one call',
    description:
      "One call of the key's organization. A call of another organization, a deleted call and a malformed id all " +
      'answer 404 (never 403). Calls in the trash or scheduled for deletion are still readable. Scope: read.calls.',
    tag: 'Calls',
    auth: { bearer: true, scope: 'read.calls' },
    pathParams: ID_PARAM,
    query: {},
    success: [
      { status: 200, description: 'The call.', contentType: 'application/json', schema: CallResponse },
    ],
    errors: [400, 401, 402, 403, 404, 429, 500, 503],
  },
];

const strip = (s: JsonSchema): JsonSchema => {
  const { $schema: _s, $id: _i, ...rest } = s;
  return rest;
};
const toJson = (schema: z.ZodType): JsonSchema =>
  strip(z.toJSONSchema(schema, { io: 'input' }) as JsonSchema);

export function buildOpenApiDocument(opts: {
  publicBaseUrl: string;
  operations?: OperationSpec[];
  schemas?: Record<string, z.ZodType>;
}): JsonSchema {
  const operations = opts.operations ?? [...restOperations, ...writeOperations, ...recordingOperations];
  const schemas = opts.schemas ?? { ...restSchemas, ...writeSchemas, ...recordingSchemas, ...webhookSchemas };
  const registry = z.registry<{ id: string }>();
  const idOf = new Map<z.ZodType, string>();
  for (const [id, schema] of Object.entries(schemas)) {
    registry.add(schema, { id });
    idOf.set(schema, id);
  }
  const generated = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, JsonSchema>;
  };
  const componentSchemas = Object.fromEntries(
    Object.entries(generated.schemas).map(([k, v]) => [k, strip(v)]),
  );
  const refOf = (schema: z.ZodType | JsonSchema): JsonSchema => {
    if (!(schema instanceof z.ZodType)) return schema;
    const id = idOf.get(schema);
    if (!id) throw new Error('An operation answers with a zod schema that is not listed in the components');
    return { $ref: `#/components/schemas/${id}` };
  };

  const paths: Record<string, Record<string, JsonSchema>> = {};
  const usedErrors = new Set<number>();
  for (const op of operations) {
    const rateLimited = op.rateLimited ?? op.auth.bearer;
    const responses: Record<string, JsonSchema> = {};
    for (const s of op.success) {
      responses[String(s.status)] = {
        description: s.description,
        headers: {
          'Cache-Control': cacheControlHeader(op.cacheControl),
          'X-Request-Id': requestIdHeader,
          ...(rateLimited ? rateLimitHeaders(true) : {}),
          ...s.headers,
        },
        content: { [s.contentType]: { schema: refOf(s.schema) } },
      };
    }
    for (const e of op.errors) {
      if (typeof e === 'number') {
        const shared = SHARED_ERRORS[e];
        if (!shared)
          throw new Error(`No shared error response for status ${e}; describe it in the operation`);
        usedErrors.add(e);
        responses[String(e)] = { $ref: `#/components/responses/${shared.name}` };
      } else {
        const rl = e.rateLimitHeaders ?? 'required';
        responses[String(e.status)] = {
          description: e.description,
          headers: {
            'Cache-Control': cacheControlHeader(op.cacheControl),
            'X-Request-Id': requestIdHeader,
            ...(rl === 'none' ? {} : rateLimitHeaders(rl === 'required')),
            ...e.headers,
          },
          content: errorContent,
        };
      }
    }
    const parameters = [
      ...Object.entries(op.pathParams ?? {}).map(([name, p]) => ({
        name,
        in: 'path',
        required: true,
        description: p.description,
        schema: toJson(p.schema),
      })),
      ...Object.entries(op.query ?? {}).map(([name, p]) => ({
        name,
        in: 'query',
        required: false,
        description: `${p.description} Accepts ${p.accepts}.`,
        schema: toJson(p.schema),
      })),
      ...(op.idempotent
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description:
                'Makes the request safe to retry (as Stripe has it): 1 to 255 printable ASCII characters, e.g. a UUID. ' +
                'The same key with the same body within 24 hours answers the first answer again (same status, same body, ' +
                'header Idempotent-Replayed: true) and has no second effect, also when the two requests arrive at the same ' +
                'moment; the same key with a different body answers 422 IDEMPOTENCY_KEY_REUSED. Keys are scoped to the ' +
                "organization, the key's environment and the operation (the organization's API keys share them). " +
                'Answers 429 and 5xx are not kept: a retry runs again. An empty, over-long or non-printable key answers 400 ' +
                'with error.param Idempotency-Key.',
              schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
            },
          ]
        : []),
      {
        name: 'X-Request-Id',
        in: 'header',
        required: false,
        description:
          'Your id for this request (1 to 128 characters of letters, digits and `._:-`); it is echoed in the ' +
          'X-Request-Id response header and logged. Any other value is replaced by a fresh UUID, never refused.',
        schema: { type: 'string' },
      },
    ];
    paths[op.path] ??= {};
    paths[op.path][op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      description: op.description,
      tags: [op.tag],
      security: op.auth.bearer ? [{ apiKey: op.auth.scope ? [op.auth.scope] : [] }] : [],
      ...(parameters.length ? { parameters } : {}),
      ...(op.requestBody
        ? {
            requestBody: {
              description: op.requestBody.description,
              required: op.requestBody.required,
              content: { 'application/json': { schema: toJson(op.requestBody.schema) } },
            },
          }
        : {}),
      responses,
    };
  }

  const responses = Object.fromEntries(
    [...usedErrors].sort().map((s) => [SHARED_ERRORS[s].name, SHARED_ERRORS[s].response]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Call Capture Service API',
      version: API_REVISION,
      summary: 'REST API of the Call Capture Service (interface version 2026-06-15, Beta).',
      description:
        'Records, transcribes and summarises phone calls. The REST API reads calls and recordings, reads and writes ' +
        'contacts and places outbound calls; webhooks are the primary data channel. All data is scoped to the ' +
        'organization of the API key. Limits: 1000 requests per hour per key, 5000 per account (sum of its keys), ' +
        'fixed windows resetting on the UTC hour; every request counts, whatever its status, writes like reads. ' +
        'New response fields, event types and endpoints may be added within v1.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: `${opts.publicBaseUrl}/api/v1`, description: 'This deployment' }],
    security: [{ apiKey: [] }],
    tags: [
      { name: 'Identity', description: 'The calling key.' },
      { name: 'Calls', description: 'Recorded calls and their processed analysis; placing outbound calls.' },
      { name: 'Contacts', description: 'The organization’s contacts, linked to calls by the E.164 number.' },
      { name: 'Recordings', description: 'Signed links to call recordings.' },
    ]
      .filter((t) => operations.some((o) => o.tag === t.name))
      .concat({
        name: 'Webhooks',
        description:
          'The event catalogue: the signed POSTs the service sends to a subscription, and the verification handshake.',
      }),
    paths,
    webhooks: buildWebhooks(),
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <API_KEY>. Keys are created in the web app on the integrations settings page. ' +
            'Cookies and query parameters never authenticate. The security requirement lists the scope an operation needs.',
        },
      },
      schemas: componentSchemas,
      responses,
    },
  };
}
