import type { Queryable } from '../db/types.ts';
import { badRequest, notFound } from '../errors.ts';
import { isUuid, newId } from '../ids.ts';

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

export interface TrackerView {
  tracker_id: string;
  name: string;
  terms: string[];
  created_at: string;
}

function checkTrackerName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > TRACKER_NAME_MAX_LENGTH) {
    throw badRequest(`Field "name" must be 1 to ${TRACKER_NAME_MAX_LENGTH} characters long.`, 'name');
  }
  return name;
}

/** Every tracker of the organization, by name. */
export async function listTrackers(q: Queryable, organizationId: string): Promise<TrackerView[]> {
  const { rows } = await q.query<{ id: string; name: string; terms: string[]; created_at: Date }>(
    'SELECT id, name, terms, created_at FROM trackers WHERE organization_id = $1 ORDER BY lower(name), id',
    [organizationId],
  );
  return rows.map((r) => ({
    tracker_id: r.id,
    name: r.name,
    terms: r.terms,
    created_at: r.created_at.toISOString(),
  }));
}

/**
 * Renames a tracker and/or replaces its terms; 404 when it is not the organization's. Calls
 * processed from then on are matched against the new terms; earlier matches stay as they were.
 */
export async function updateTracker(
  q: Queryable,
  t: { organizationId: string; trackerId: string; name: string; terms: readonly string[] },
): Promise<TrackerView> {
  const name = checkTrackerName(t.name);
  const terms = checkTerms(t.terms);
  const { rows } = await q.query<{ id: string; name: string; terms: string[]; created_at: Date }>(
    `UPDATE trackers SET name = $3, terms = $4 WHERE id = $1 AND organization_id = $2
     RETURNING id, name, terms, created_at`,
    [isUuid(t.trackerId) ? t.trackerId : null, t.organizationId, name, terms],
  );
  const r = rows[0];
  if (!r) throw notFound(`No tracker ${t.trackerId} in your organization.`);
  return { tracker_id: r.id, name: r.name, terms: r.terms, created_at: r.created_at.toISOString() };
}

/** Deletes a tracker (earlier call.tracker.matched events keep its id and name); false when not found. */
export async function deleteTracker(
  q: Queryable,
  organizationId: string,
  trackerId: string,
): Promise<boolean> {
  if (!isUuid(trackerId)) return false;
  const { rowCount } = await q.query('DELETE FROM trackers WHERE id = $1 AND organization_id = $2', [
    trackerId,
    organizationId,
  ]);
  return rowCount > 0;
}
