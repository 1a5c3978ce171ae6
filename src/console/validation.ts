import type { z } from 'zod';
import { badRequest } from '../api/errors.ts';
import { isUuid } from '../ids.ts';

/**
 * Parses a console request body or query with a zod schema; a failure answers 400 BAD_REQUEST
 * naming the field and what it accepts (the first issue is enough to fix the request).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where = 'body'): z.infer<S> {
  const r = schema.safeParse(input ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue?.path.length ? issue.path.join('.') : where;
  throw badRequest(`Invalid ${where} field "${field}": ${issue?.message ?? 'invalid value'}.`);
}

/** An id in a path: anything but a UUID cannot exist, so it answers 404 like an unknown id. */
export function isIdParam(id: string | undefined): id is string {
  return typeof id === 'string' && isUuid(id);
}
