import type { Deps } from '../deps.ts';
import type { Scope, TenantScope } from '../domain/tenant.ts';
import type { CrmStatus, ReviewStatus } from '../domain/values.ts';
import { isUuid } from '../ids.ts';
import { lockCallInScope } from './call-record.ts';

/**
 * The web app's edit of a call's CRM status and review status (spec value sets). The spec names no
 * event for either change, so none is emitted; GET /calls and GET /calls/{id} show the new values at
 * once. An edit that changes nothing writes nothing (updated_at stays).
 */
export async function setCallStatuses(
  deps: Deps,
  scope: Scope,
  callId: string,
  next: { crmStatus: CrmStatus; reviewStatus: ReviewStatus | null },
): Promise<{ changed: boolean }> {
  return deps.db.transaction(async (tx) => {
    const call = await lockCallInScope(tx, scope, callId);
    const { rows } = await tx.query<{ crm_status: string; review_status: string | null }>(
      'SELECT crm_status, review_status FROM calls WHERE id = $1',
      [call.id],
    );
    const cur = rows[0]!;
    if (cur.crm_status === next.crmStatus && cur.review_status === next.reviewStatus)
      return { changed: false };
    await tx.query('UPDATE calls SET crm_status = $2, review_status = $3, updated_at = $4 WHERE id = $1', [
      call.id,
      next.crmStatus,
      next.reviewStatus,
      deps.clock.now(),
    ]);
    return { changed: true };
  });
}

/**
 * The lead inbox's quick and bulk actions: one change (a CRM status, a review status, or both) to
 * several calls of the scope, in one transaction. An id of another organization, an erased call or a
 * malformed id is skipped like a call that does not exist — the answer does not tell them apart — and
 * a call already in the asked state is not written. Returns how many calls changed.
 */
export async function setStatusesOfCalls(
  deps: Deps,
  scope: TenantScope,
  callIds: readonly string[],
  next: { crmStatus?: CrmStatus; reviewStatus?: ReviewStatus },
): Promise<{ changed: number }> {
  const ids = [...new Set(callIds.filter(isUuid))];
  if (ids.length === 0 || (next.crmStatus === undefined && next.reviewStatus === undefined))
    return { changed: 0 };
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `UPDATE calls SET crm_status = coalesce($3::text, crm_status), review_status = coalesce($4::text, review_status),
              updated_at = $5
        WHERE organization_id = $1 AND environment = $6 AND id = ANY($2::uuid[]) AND erased_at IS NULL
          AND (crm_status IS DISTINCT FROM coalesce($3::text, crm_status)
               OR review_status IS DISTINCT FROM coalesce($4::text, review_status))
       RETURNING id`,
      [
        scope.organizationId,
        ids,
        next.crmStatus ?? null,
        next.reviewStatus ?? null,
        deps.clock.now(),
        scope.environment,
      ],
    );
    return { changed: rows.length };
  });
}
