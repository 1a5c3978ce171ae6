import type { Deps } from '../deps.ts';
import type { Scope } from '../domain/tenant.ts';
import type { CrmStatus, ReviewStatus } from '../domain/values.ts';
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
