import type { z } from 'zod';
import type { Scope } from '../../../../accounts/api-key-format.ts';
import type { QueryParams } from '../query.ts';

/**
 * How an operation describes itself for the OpenAPI document (openapi.ts builds the document from
 * these). The zod schemas are the ones the code validates and answers with.
 */
export type JsonSchema = Record<string, unknown>;

export interface SuccessSpec {
  status: number;
  description: string;
  contentType: string;
  /** a zod schema listed in the components (referenced by $ref), or a raw JSON Schema */
  schema: z.ZodType | JsonSchema;
  /** extra response headers (name → header object) beyond Cache-Control and X-RateLimit-* */
  headers?: Record<string, JsonSchema>;
}

/**
 * An error answer. A bare status uses the shared components.responses entry for it (400, 401, 402,
 * 403, 404, 429, 500, 503); an object describes an operation-specific one (409, 410, …).
 */
export type ErrorSpec =
  | number
  | {
      status: number;
      description: string;
      /** whether X-RateLimit-* headers ride on this answer (default: required) */
      rateLimitHeaders?: 'required' | 'optional' | 'none';
      headers?: Record<string, JsonSchema>;
    };

export interface OperationSpec {
  method: 'get' | 'post' | 'patch';
  /** OpenAPI path template relative to the server URL ({base_url}), e.g. /calls/{id} */
  path: string;
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  /** Bearer API key with this scope (null: any valid key), or no Bearer authentication at all. */
  auth: { bearer: true; scope: Scope | null } | { bearer: false };
  pathParams?: Record<string, { schema: z.ZodType; description: string }>;
  query?: QueryParams;
  /** a JSON request body: the zod schema the route validates it with (listed in the components) */
  requestBody?: { schema: z.ZodType; description: string; required: boolean };
  /** takes the Idempotency-Key header (and its answers may carry Idempotent-Replayed) */
  idempotent?: boolean;
  /** whether X-RateLimit-* headers ride on the success answers (default: when bearer-authenticated) */
  rateLimited?: boolean;
  /** the Cache-Control value of this operation's answers (default no-store) */
  cacheControl?: string;
  success: SuccessSpec[];
  errors: ErrorSpec[];
}
