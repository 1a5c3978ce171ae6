import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../../../errors.ts';

/** Largest form body the pages accept: their forms are a few short fields. */
export const FORM_BODY_LIMIT = 64 * 1024;

/** A parsed application/x-www-form-urlencoded body: a repeated name (checkboxes) becomes an array. */
export type FormBody = Record<string, string | string[]>;

/**
 * The form parser of the page routes (encapsulated: the JSON API does not see it). Pages post
 * classic HTML forms, so they work without JavaScript.
 */
export function installFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_req, body, done) => {
      const out: FormBody = Object.create(null);
      for (const [name, value] of new URLSearchParams(body as string)) {
        const had = out[name];
        if (had === undefined) out[name] = value;
        else out[name] = Array.isArray(had) ? [...had, value] : [had, value];
      }
      done(null, out);
    },
  );
}

/** The form body of a request (an empty object when there is none). */
export const formOf = (body: unknown): FormBody =>
  body && typeof body === 'object' && !Array.isArray(body) ? (body as FormBody) : {};

/**
 * One field's value: undefined when absent. A field given twice where one is expected, or a value
 * that is not text (a JSON body posted to a page), is a 400.
 */
export function field(form: FormBody, name: string): string | undefined {
  const v: unknown = form[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw badRequest(`Field "${name}" is given more than once.`, name);
  if (typeof v !== 'string') throw badRequest(`Field "${name}" must be text.`, name);
  return v;
}

/** Every text value of a repeated field (checkboxes, multi-selects), in the order sent. */
export function fields(form: FormBody, name: string): string[] {
  const v: unknown = form[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}
