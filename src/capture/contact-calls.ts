import type { Queryable } from '../db/types.ts';
import type { TenantScope } from '../domain/tenant.ts';
import type { CrmStatus, Direction, ReviewStatus } from '../domain/values.ts';

/**
 * A contact's call history (the web app's contact page): the calls of the organization whose
 * customer number is the contact's E.164 number — calls and contacts are joined by that number
 * (spec/api-v1-additions.md "Contacts") — newest first, erased calls left out.
 */

export interface ContactCall {
  id: string;
  direction: Direction;
  created_at: Date;
  duration: number | null;
  subject: string | null;
  crm_status: CrmStatus;
  review_status: ReviewStatus | null;
  trashed: boolean;
}

/** How many calls the contact page lists at most (the newest); the calls list has them all. */
export const CONTACT_CALLS_LIMIT = 50;

export async function callsOfNumber(
  q: Queryable,
  scope: TenantScope,
  phoneE164: string,
): Promise<{ items: ContactCall[]; has_more: boolean }> {
  const { rows } = await q.query<ContactCall>(
    `SELECT c.id, c.direction, c.created_at, c.duration::float8 AS duration, c.crm_status, c.review_status,
            c.trashed_at IS NOT NULL AS trashed, ca.analysis->>'subject' AS subject
       FROM calls c
       LEFT JOIN call_analyses ca ON ca.call_id = c.id AND ca.organization_id = c.organization_id
      WHERE c.organization_id = $1 AND c.environment = $4 AND c.customer_phone_e164 = $2 AND c.erased_at IS NULL
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT $3`,
    [scope.organizationId, phoneE164, CONTACT_CALLS_LIMIT + 1, scope.environment],
    { name: 'pages_contact_calls_v2' },
  );
  return { items: rows.slice(0, CONTACT_CALLS_LIMIT), has_more: rows.length > CONTACT_CALLS_LIMIT };
}
