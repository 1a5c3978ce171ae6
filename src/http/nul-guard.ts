import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type AppError, badRequest } from '../errors.ts';

/**
 * The NUL character (U+0000) at the edge of both listeners. PostgreSQL text cannot hold it, so a
 * NUL that reached a statement failed it (500 DATABASE_ERROR). One rule instead, applied before any
 * handler reads the input (docs/decisions.md, issue 15 item 3):
 *
 * - JSON bodies, form bodies and query strings: a NUL anywhere (a value, an object key, an array
 *   element, at any depth) answers 400 BAD_REQUEST naming the field or parameter by its path
 *   (`contacts[0].name`, as the zod formatter names fields), error.param the same path. This is
 *   installNulGuard's preValidation hook on the root of each listener, so every route, present and
 *   future, has it; on the pages the 400 is rendered as an error page by their error handler.
 * - Scopes that apply the rule themselves, at their own place in their order of checks, say so
 *   with nulRuleAppliedBy: /api/v1's operations read their query through readQuery (the "400
 *   query" step, after authentication and the key's counting; the signed download's token and exp
 *   only match a minted link); /telephony/twilio verifies the signature over the parameters as
 *   Twilio sent them and then drops the character (withoutNul), so a real call still gets its TwiML.
 * - Path parameters are ids the handlers validate (a UUID, a fixed name), and headers cannot carry
 *   a NUL at all (Node's HTTP parser refuses the request; error-handler.ts clientErrorHandler).
 */

const NUL = '\u0000';

/** Longest path an answer names (a body nested thousands deep is cut, not echoed whole). */
const PATH_SHOWN_MAX = 200;

/** The message of a NUL in a body field (`path` '' = the body itself is a string). */
export function nulInField(path: string): AppError {
  return path === ''
    ? badRequest('The request body must not contain a NUL character.')
    : badRequest(`Field "${path}" must not contain a NUL character.`, path);
}

/** The message of a NUL in a query parameter (its name or its value). */
export function nulInQueryParameter(name: string): AppError {
  return badRequest(`Query parameter "${shown(name)}" must not contain a NUL character.`, shown(name));
}

/** A name as an error message shows it: a NUL inside it written as the six characters \u0000. */
const shown = (name: string): string => name.replaceAll(NUL, '\\u0000');

const isPlainObject = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * The path of the first string holding a NUL in a parsed body or query (a value or an object key),
 * or null when there is none. Only plain objects, arrays and strings are walked (an uploaded file is
 * a Buffer or a stream and is not text). Iterative: a deeply nested body cannot exhaust the stack.
 */
export function nulPath(value: unknown): string | null {
  // Each entry: a value and the index of its parent entry with the key it has there, so a path
  // string is only built for the one hit.
  const values: unknown[] = [value];
  const parents: number[] = [-1];
  const keys: (string | number)[] = [''];
  const pathOf = (i: number, last?: string): string => {
    const parts: (string | number)[] = last === undefined ? [] : [last];
    for (let j = i; j > 0; j = parents[j]!) parts.push(keys[j]!);
    parts.reverse();
    const path = parts
      .map((p, n) => (typeof p === 'number' ? `[${p}]` : n ? `.${shown(p)}` : shown(p)))
      .join('');
    return path.length > PATH_SHOWN_MAX ? `${path.slice(0, PATH_SHOWN_MAX)}…` : path;
  };
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'string') {
      if (v.includes(NUL)) return pathOf(i);
    } else if (Array.isArray(v)) {
      for (let n = 0; n < v.length; n++) {
        values.push(v[n]);
        parents.push(i);
        keys.push(n);
      }
    } else if (v !== null && typeof v === 'object' && isPlainObject(v)) {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes(NUL)) return pathOf(i, k);
        values.push(child);
        parents.push(i);
        keys.push(k);
      }
    }
  }
  return null;
}

/** Parameters (a form or a query) without the NUL character in their values; a name holding one is dropped. */
export function withoutNul<P extends Record<string, string | string[]>>(
  params: P,
): { params: P; changed: string[] } {
  const changed: string[] = [];
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(params)) {
    const values = Array.isArray(value) ? value : [value];
    if (name.includes(NUL) || values.some((v) => v.includes(NUL))) changed.push(shown(name));
    if (name.includes(NUL)) continue;
    out[name] = Array.isArray(value) ? value.map((v) => v.replaceAll(NUL, '')) : value.replaceAll(NUL, '');
  }
  return { params: out as P, changed };
}

/** What a scope applies itself (see nulRuleAppliedBy); by request, set in the scope's onRequest. */
const ownRule = new WeakMap<FastifyRequest, { body: boolean; query: boolean }>();

/**
 * Declares that the routes (and the not-found answer) of this encapsulated scope apply the NUL rule
 * to their body and/or query themselves, so installNulGuard leaves those parts alone. Call it
 * before registering the scope's routes, and say at the call who applies it instead.
 */
export function nulRuleAppliedBy(scope: FastifyInstance, parts: { body?: boolean; query?: boolean }): void {
  const own = { body: parts.body === true, query: parts.query === true };
  scope.addHook('onRequest', async (req) => {
    ownRule.set(req, own);
  });
}

/** The first query parameter whose name or value holds a NUL (Fastify's parsed query), or null. */
export function nulQueryParameter(query: unknown): string | null {
  if (query === null || typeof query !== 'object') return null;
  for (const [name, value] of Object.entries(query)) {
    if (name.includes(NUL) || nulPath(value) !== null) return name;
  }
  return null;
}

/**
 * The edge rule, installed on the root instance of each listener before its routes: after the body
 * is parsed and before any route's handler (preValidation), a NUL in the query string or the body
 * is a 400 naming it. Scopes' onRequest hooks (authentication, the page guard) run first, so a
 * caller without a session still gets its 401 or redirect.
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    if (req.is404) return; // an unknown address stays a 404, whatever it carries
    const own = ownRule.get(req);
    if (!own?.query) {
      const name = nulQueryParameter(req.query);
      if (name !== null) throw nulInQueryParameter(name);
    }
    if (!own?.body) {
      const at = nulPath(req.body);
      if (at !== null) throw nulInField(at);
    }
  });
}
