import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { AppError, badRequest, parseInput } from '../../../errors.ts';
import { nulInField, nulPath } from '../../nul-guard.ts';

/**
 * JSON bodies of /api/v1's writes (POST /contacts, PATCH /contacts/{id}, POST /calls), read in the
 * handler, at the "400 body" step of routes.ts's order of checks: after the key is authenticated
 * and counted (every request counts, whatever its answer) and after the scope (403 before 400).
 * The scope's content-type parser therefore only keeps the raw text (it never fails; the body
 * limit's 413 still comes from Fastify); readBody then checks the media type (415), the JSON
 * (400), the NUL rule (src/http/nul-guard.ts, 400 naming the field) and the zod schema (400).
 */
interface RawBody {
  raw: string;
  type: string;
}

const RAW = Symbol('raw-body');

/** Installs the raw parser on an encapsulated scope (routes.ts' /api/v1). */
export function keepRawBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    const type = String(req.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    done(null, { [RAW]: { raw: body as string, type } satisfies RawBody });
  });
}

/** The JSON of the request body (undefined when none), validated with `schema`. */
export function readBody<S extends z.ZodObject>(req: FastifyRequest, schema: S): z.infer<S> {
  const held = (req.body as Record<symbol, RawBody> | undefined)?.[RAW];
  let value: unknown;
  if (held && held.raw.trim() !== '') {
    if (held.type !== 'application/json') {
      throw new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Unsupported Content-Type "${held.type}"; send the body as JSON with Content-Type: application/json.`,
      );
    }
    try {
      value = JSON.parse(held.raw);
    } catch {
      throw badRequest(
        'The request body is not valid JSON; send a JSON object with Content-Type: application/json.',
      );
    }
    const nul = nulPath(value);
    if (nul !== null) throw nulInField(nul);
  }
  return parseInput(schema, value);
}
