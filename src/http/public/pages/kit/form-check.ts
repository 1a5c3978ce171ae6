import type { z } from 'zod';
import { AppError, badRequest, invalidInput } from '../../../../errors.ts';
import type { Notice } from './layout.ts';

/** Checking a page form's values: with the services' zod schemas, in the page's own words. */

/**
 * A page form's values checked with the zod schema the service (or the operator API) uses for the
 * same action, so page and API accept exactly the same values. A refusal is a 400 in the page's
 * words: `wording` maps a field to the sentence the page shows (the first failing field is named);
 * a field without one gets the API's message.
 */
export function checkForm<S extends z.ZodObject>(
  schema: S,
  values: Record<string, unknown>,
  wording: Readonly<Partial<Record<keyof z.infer<S> & string, string>>>,
): z.infer<S> {
  const r = schema.safeParse(values);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  const name = first?.path.length ? String(first.path[0]) : undefined;
  const text = name === undefined ? undefined : (wording as Record<string, string | undefined>)[name];
  if (name !== undefined && text !== undefined) throw badRequest(text, name);
  throw invalidInput(r.error.issues, Object.keys(schema.shape));
}

/** An AppError a form caused, as the notice of the re-rendered form; anything else is rethrown. */
export function formError(err: unknown): { status: number; notice: Notice } {
  if (err instanceof AppError && err.status < 500) {
    return { status: err.status, notice: { kind: 'error', text: err.message } };
  }
  throw err;
}
