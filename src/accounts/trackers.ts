import type { Queryable } from '../db/types.ts';
import { badRequest, notFound } from '../errors.ts';
import { newId } from '../ids.ts';

/** Keyword trackers: processed transcripts are matched against their terms (call.tracker.matched). */
export const TRACKER_NAME_MAX_LENGTH = 100;
export const TRACKER_MAX_TERMS = 50;
export const TRACKER_TERM_MAX_LENGTH = 100;

/** Trims terms, drops case-insensitive duplicates (first spelling wins) and checks the limits. */
export function checkTerms(terms: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of terms) {
    const t = raw.trim();
    if (t.length === 0 || t.length > TRACKER_TERM_MAX_LENGTH) {
      throw badRequest(
        `Every entry of "terms" must be 1 to ${TRACKER_TERM_MAX_LENGTH} characters long.`,
        'terms',
      );
    }
    if (!seen.has(t.toLowerCase())) {
      seen.add(t.toLowerCase());
      out.push(t);
    }
  }
  if (out.length === 0 || out.length > TRACKER_MAX_TERMS) {
    throw badRequest(
      `Field "terms" must list 1 to ${TRACKER_MAX_TERMS} terms, e.g. ["refund", "cancel"].`,
      'terms',
    );
  }
  return out;
}

export async function createTracker(
  tx: Queryable,
  t: { organizationId: string; name: string; terms: readonly string[]; now: Date },
): Promise<{ tracker_id: string }> {
  const name = t.name.trim();
  if (name.length === 0 || name.length > TRACKER_NAME_MAX_LENGTH) {
    throw badRequest(`Field "name" must be 1 to ${TRACKER_NAME_MAX_LENGTH} characters long.`, 'name');
  }
  const terms = checkTerms(t.terms);
  const org = await tx.query('SELECT 1 FROM organizations WHERE id = $1', [t.organizationId]);
  if (org.rowCount === 0) throw notFound(`No organization ${t.organizationId}.`);
  const id = newId();
  await tx.query(
    'INSERT INTO trackers (id, organization_id, name, terms, created_at) VALUES ($1, $2, $3, $4, $5)',
    [id, t.organizationId, name, terms, t.now],
  );
  return { tracker_id: id };
}
