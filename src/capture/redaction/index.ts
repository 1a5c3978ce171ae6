import type { Queryable } from '../../db/types.ts';
import { redactText } from './redact.ts';

/**
 * Redaction as the pipeline applies it (docs/capture.md "Redaction"): whether an organization has
 * it on (organizations.redaction_enabled, on unless the owner turned it off), and the redaction of
 * a transcript, of every string of an analysis or draft. The finding itself is ./redact.ts (pure).
 */

export { PII_TOKEN, type PiiKind, type PiiSpan, redactText } from './redact.ts';

export async function redactionEnabled(q: Queryable, organizationId: string): Promise<boolean> {
  const { rows } = await q.query<{ on: boolean }>(
    'SELECT redaction_enabled AS on FROM organizations WHERE id = $1',
    [organizationId],
  );
  return rows[0]?.on ?? true;
}

/** The text with what redaction finds replaced by its tokens. */
export function redacted(text: string): string {
  return redactText(text).text;
}

/** Every string in a JSON value redacted (an analysis, a follow-up draft): the second line behind a redacted transcript. */
export function redactStrings<T>(value: T): T {
  if (typeof value === 'string') return redacted(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactStrings(v)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactStrings(v)])) as T;
  }
  return value;
}
