import { inScope, scopeParams } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import type { TenantScope } from '../../domain/tenant.ts';
import { badRequest, notFound } from '../../errors.ts';

/**
 * The delivery log of one subscription (the deliveries table is also the queue): newest first,
 * keyset-paginated on (created_at, id), each delivery with its attempts. next_attempt_at is shown
 * only while a delivery is pending (afterwards it means nothing).
 */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead_lettered', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const DELIVERY_LOG_DEFAULT_LIMIT = 20;
export const DELIVERY_LOG_MAX_LIMIT = 100;

export interface AttemptView {
  attempt_number: number;
  started_at: string;
  duration_ms: number;
  response_status: number | null;
  error_class: string | null;
  response_snippet: string | null;
  signed_with_secret_id: string | null;
}

export interface DeliveryView {
  delivery_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_response_status: number | null;
  reason: string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  attempt_log: AttemptView[];
}

export function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const createdAt = new Date(at);
    if (typeof id !== 'string' || !/^[0-9a-f-]{36}$/i.test(id) || Number.isNaN(createdAt.getTime()))
      throw new Error();
    return { createdAt, id };
  } catch {
    throw badRequest(
      'Query parameter "cursor" is not valid; pass the next_cursor of the previous page unchanged.',
    );
  }
}

type Row = {
  id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  last_response_status: number | null;
  reason: string | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
};

export async function listDeliveries(
  q: Queryable,
  f: {
    /** the subscription's scope: its deliveries are of its environment */
    scope: TenantScope;
    subscriptionId: string;
    status?: DeliveryStatus;
    /** only deliveries of this event type */
    eventType?: string;
    limit: number;
    cursor?: string;
  },
): Promise<{ items: DeliveryView[]; next_cursor: string | null }> {
  const sub = await q.query(
    `SELECT 1 FROM webhook_subscriptions
      WHERE id = $1 AND ${inScope(null, 2, 3)} AND deleted_at IS NULL AND kind = 'webhook'`,
    [f.subscriptionId, ...scopeParams(f.scope)],
  );
  if (sub.rowCount === 0) throw notFound(`No webhook subscription ${f.subscriptionId} in your organization.`);
  const after = f.cursor ? decodeCursor(f.cursor) : null;
  const { rows } = await q.query<Row>(
    `SELECT id, event_id, event_type, status, attempts, next_attempt_at, last_response_status, reason, last_error,
            created_at, delivered_at
       FROM webhook_deliveries
      WHERE organization_id = $1 AND subscription_id = $2
        AND ($3::text IS NULL OR status = $3)
        AND ($4::timestamptz IS NULL OR (created_at, id) < ($4::timestamptz, $5::uuid))
        AND ($7::text IS NULL OR event_type = $7)
      ORDER BY created_at DESC, id DESC
      LIMIT $6`,
    [
      f.scope.organizationId,
      f.subscriptionId,
      f.status ?? null,
      after?.createdAt ?? null,
      after?.id ?? null,
      f.limit + 1,
      f.eventType ?? null,
    ],
  );
  const page = rows.slice(0, f.limit);
  const attempts = await attemptsOf(
    q,
    f.scope.organizationId,
    page.map((r) => r.id),
  );
  const last = page[page.length - 1];
  return {
    items: page.map((r) => ({
      delivery_id: r.id,
      event_id: r.event_id,
      event_type: r.event_type,
      status: r.status,
      attempts: r.attempts,
      next_attempt_at: r.status === 'pending' ? r.next_attempt_at.toISOString() : null,
      last_response_status: r.last_response_status,
      reason: r.reason,
      last_error: r.last_error,
      created_at: r.created_at.toISOString(),
      delivered_at: r.delivered_at?.toISOString() ?? null,
      attempt_log: attempts.get(r.id) ?? [],
    })),
    next_cursor: rows.length > f.limit && last ? encodeCursor(last.created_at, last.id) : null,
  };
}

async function attemptsOf(
  q: Queryable,
  organizationId: string,
  ids: string[],
): Promise<Map<string, AttemptView[]>> {
  const out = new Map<string, AttemptView[]>();
  if (ids.length === 0) return out;
  const { rows } = await q.query<{
    delivery_id: string;
    attempt_number: number;
    started_at: Date;
    duration_ms: number;
    response_status: number | null;
    error_class: string | null;
    response_snippet: string | null;
    secret_id: string | null;
  }>(
    `SELECT delivery_id, attempt_number, started_at, duration_ms, response_status, error_class, response_snippet, secret_id
       FROM webhook_attempts WHERE delivery_id = ANY ($1::uuid[]) AND organization_id = $2
      ORDER BY started_at, attempt_number`,
    [ids, organizationId],
  );
  for (const a of rows) {
    const list = out.get(a.delivery_id) ?? [];
    list.push({
      attempt_number: a.attempt_number,
      started_at: a.started_at.toISOString(),
      duration_ms: a.duration_ms,
      response_status: a.response_status,
      error_class: a.error_class,
      response_snippet: a.response_snippet,
      signed_with_secret_id: a.secret_id,
    });
    out.set(a.delivery_id, list);
  }
  return out;
}
