import type { z } from 'zod';
import { badRequest } from '../../../errors.ts';
import { nulInQueryParameter } from '../../nul-guard.ts';

/**
 * Query parameters of the REST API, read from the raw query string (req.url), not from Fastify's
 * parsed req.query, so that a repeated parameter (?page=1&page=2) is seen and refused instead of
 * silently becoming an array or the last value. Every operation refuses unknown parameters: a
 * misspelt filter (?stauts=new) must not quietly return everything.
 *
 * The zod schema of each parameter is both the validation and the OpenAPI parameter schema
 * (openapi.ts runs z.toJSONSchema on it).
 */
export interface QueryParam<S extends z.ZodType = z.ZodType> {
  schema: S;
  /** what the parameter means (OpenAPI description) */
  description: string;
  /** the accepted values, in words; a 400 names the parameter and quotes this */
  accepts: string;
  /** digits only, read as a number before validation ("1e3", "+5", " 5" are refused) */
  integer?: boolean;
  /** rewrites the decoded value before validation */
  normalize?: (raw: string) => string;
}

export type QueryParams = Record<string, QueryParam>;
export type QueryValues<P extends QueryParams> = { [K in keyof P]: z.output<P[K]['schema']> };

/** A parameter name or value quoted for a message: escaped, and cut short. */
const quote = (s: string): string => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

function acceptedList(params: QueryParams): string {
  const names = Object.keys(params);
  return names.length === 0
    ? 'This operation takes no query parameters.'
    : `Accepted parameters: ${names.join(', ')}.`;
}

/** Reads and validates the query string of `url`; throws 400 BAD_REQUEST naming the parameter. */
export function readQuery<P extends QueryParams>(url: string, params: P): QueryValues<P> {
  const q = url.indexOf('?');
  const search = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const raw = new Map<string, string>();
  for (const [name, value] of search) {
    // The edge's NUL rule (src/http/nul-guard.ts), applied here: this is where /api/v1 reads its query.
    if (name.includes('\u0000') || value.includes('\u0000')) throw nulInQueryParameter(name);
    if (!Object.hasOwn(params, name)) {
      throw badRequest(`Unknown query parameter ${quote(name)}. ${acceptedList(params)}`, name);
    }
    if (raw.has(name)) {
      throw badRequest(`Query parameter "${name}" is given more than once; give it at most once.`, name);
    }
    raw.set(name, value);
  }
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(params)) {
    const given = raw.get(name);
    let value: unknown = given;
    if (given !== undefined) {
      const text = def.normalize ? def.normalize(given) : given;
      value = def.integer && /^[0-9]{1,20}$/.test(text) ? Number(text) : text;
    }
    const parsed = def.schema.safeParse(value);
    if (!parsed.success) {
      throw badRequest(
        `Invalid value ${quote(given ?? '')} for query parameter "${name}": expected ${def.accepts}.`,
        name,
      );
    }
    out[name] = parsed.data;
  }
  return out as QueryValues<P>;
}
