/**
 * GET /metrics on the operator listener: webhook delivery metrics in the Prometheus text format
 * (hand-written, version 0.0.4). Every number is computed from the database at scrape time, so the
 * figures are right whichever process made the attempts (one `serve` process or many workers);
 * each scrape is three grouped scans of the webhook tables — fine at a 15–60 s scrape interval.
 *
 * Protected by the operator bearer token like /admin/v1 (the listener is loopback by default, but an
 * operator who opens it for a Prometheus elsewhere should not publish tenant-wide counts): in
 * prometheus.yml, `authorization: { credentials_file: <DATA_DIR>/admin-token }`.
 */
import type { Queryable } from '../../db/types.ts';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead_lettered', 'skipped'] as const;
export const QUEUES = ['ready', 'in_flight', 'scheduled', 'held'] as const;
/** Latency buckets in seconds: milliseconds for an idle queue up to the 2 h retry and beyond. */
export const LATENCY_BUCKETS = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 86400,
];

const DEPTH_SQL = `
SELECT status,
       CASE WHEN status <> 'pending' THEN ''
            WHEN held THEN 'held'
            WHEN lease_owner IS NOT NULL AND lease_expires_at > $1 THEN 'in_flight'
            WHEN next_attempt_at <= $1 THEN 'ready'
            ELSE 'scheduled' END AS queue,
       count(*)::bigint AS n
  FROM webhook_deliveries GROUP BY 1, 2`;

const ATTEMPTS_SQL = `
SELECT CASE WHEN response_status IS NOT NULL THEN (response_status / 100)::text || 'xx'
            ELSE coalesce(error_class, 'other') END AS outcome,
       count(*)::bigint AS n
  FROM webhook_attempts GROUP BY 1 ORDER BY 1`;

const LATENCY_SQL = `
SELECT ${LATENCY_BUCKETS.map((b, i) => `count(*) FILTER (WHERE lat <= ${b})::bigint AS b${i}`).join(', ')},
       count(*)::bigint AS n, coalesce(sum(lat), 0)::float8 AS total
  FROM (SELECT extract(epoch FROM d.delivered_at - e.created_at)::float8 AS lat
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         WHERE d.status = 'delivered') x`;

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function family(name: string, type: string, help: string, samples: [string, number][]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, v] of samples) lines.push(`${name}${labels} ${v}`);
  return lines.join('\n');
}

export async function renderWebhookMetrics(db: Queryable, now: Date): Promise<string> {
  const depth = await db.query<{ status: string; queue: string; n: number }>(DEPTH_SQL, [now]);
  const byStatus = new Map<string, number>();
  const byQueue = new Map<string, number>();
  for (const r of depth.rows) {
    byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + Number(r.n));
    if (r.queue) byQueue.set(r.queue, Number(r.n));
  }
  const attempts = await db.query<{ outcome: string; n: number }>(ATTEMPTS_SQL);
  const lat = (await db.query<Record<string, number>>(LATENCY_SQL)).rows[0];

  return `${[
    family(
      'callcap_webhook_deliveries',
      'gauge',
      'Webhook deliveries by status (the queue and the delivery log).',
      DELIVERY_STATUSES.map((s) => [`{status="${s}"}`, byStatus.get(s) ?? 0]),
    ),
    family(
      'callcap_webhook_queue_depth',
      'gauge',
      'Pending deliveries: ready (due), in_flight (leased), scheduled (later retry), held (subscription not active).',
      QUEUES.map((q) => [`{queue="${q}"}`, byQueue.get(q) ?? 0]),
    ),
    family(
      'callcap_webhook_attempts_total',
      'counter',
      'Delivery attempts by outcome: HTTP status class, or the error class when no reply came.',
      attempts.rows.map((r) => [`{outcome="${esc(r.outcome)}"}`, Number(r.n)]),
    ),
    family(
      'callcap_webhook_delivery_latency_seconds',
      'histogram',
      'Time from event creation to the 2xx that delivered it, retries included.',
      [
        ...LATENCY_BUCKETS.map((b, i): [string, number] => [`_bucket{le="${b}"}`, Number(lat[`b${i}`])]),
        ['_bucket{le="+Inf"}', Number(lat.n)],
        ['_sum', Number(lat.total)],
        ['_count', Number(lat.n)],
      ],
    ),
  ].join('\n')}\n`;
}
