import type { Queryable } from '../db/types.ts';
import { COUNT_CAP } from '../domain/inbox.ts';
import type { TenantScope } from '../domain/tenant.ts';
import { CRM_STATUSES, type CrmStatus } from '../domain/values.ts';

/**
 * The web app's pipeline board (/app/calls/board) as a read model: for each crm_status (new → to
 * call → contacted → qualified) its newest calls and its count (up to COUNT_CAP + 1), in one statement.
 * Each column and its count are LATERAL reads of the (organization, crm_status, created_at) index,
 * so a column costs its cards and at most COUNT_CAP index entries, not the organization's calls.
 */
export interface BoardCard {
  id: string;
  crm_status: CrmStatus;
  direction: 'inbound' | 'outbound';
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
  caller_name: string | null;
  created_at: Date;
  contact_name: string | null;
  analysis_caller_name: string | null;
  subject: string | null;
  lead_score: number | null;
}

export interface BoardColumn {
  status: CrmStatus;
  count: number;
  cards: BoardCard[];
}

/** Cards per column: the newest; the inbox filtered by the status lists the rest. */
export const BOARD_CARDS = 30;

export async function readBoard(db: Queryable, scope: TenantScope): Promise<BoardColumn[]> {
  const { rows } = await db.query<Omit<BoardCard, 'crm_status'> & { status: CrmStatus; n: string }>(
    `SELECT s.status, n.n, c.id, c.direction, c.customer_phone_e164, c.customer_phone_national, c.caller_name,
            c.created_at, nullif(concat_ws(' ', k.first_name, k.last_name), '') AS contact_name,
            ca.analysis ->> 'caller_name' AS analysis_caller_name, ca.analysis ->> 'subject' AS subject,
            (ca.analysis ->> 'lead_score')::numeric AS lead_score
       FROM unnest($2::text[]) WITH ORDINALITY s(status, o)
      CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM (
          SELECT 1 FROM calls WHERE organization_id = $1 AND environment = $3 AND erased_at IS NULL AND crm_status = s.status
          LIMIT ${COUNT_CAP + 1}) x
      ) n
       LEFT JOIN LATERAL (
        SELECT * FROM calls WHERE organization_id = $1 AND environment = $3 AND erased_at IS NULL AND crm_status = s.status
         ORDER BY created_at DESC, id DESC LIMIT ${BOARD_CARDS}
      ) c ON true
      LEFT JOIN LATERAL (
        SELECT analysis FROM call_analyses WHERE call_id = c.id AND organization_id = c.organization_id OFFSET 0
      ) ca ON true
      LEFT JOIN LATERAL (
        SELECT first_name, last_name FROM contacts
         WHERE organization_id = c.organization_id AND environment = c.environment AND phone_e164 = c.customer_phone_e164
         ORDER BY created_at, id LIMIT 1
      ) k ON true
      ORDER BY s.o, c.created_at DESC, c.id DESC`,
    [scope.organizationId, CRM_STATUSES, scope.environment],
  );
  const columns = CRM_STATUSES.map((status): BoardColumn => ({ status, count: 0, cards: [] }));
  const byStatus = new Map(columns.map((c) => [c.status, c]));
  for (const r of rows) {
    const col = byStatus.get(r.status);
    if (!col) continue;
    col.count = Number(r.n);
    if (r.id !== null)
      col.cards.push({
        ...r,
        crm_status: r.status,
        lead_score: r.lead_score === null ? null : Number(r.lead_score),
      });
  }
  return columns;
}
