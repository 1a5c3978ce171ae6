import pg from 'pg';
const c = new pg.Client({ connectionString: process.env.URL });
await c.connect();
const now = new Date();
const variants: Record<string, string> = {
  join: `SELECT d.id FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
   WHERE d.status = 'pending' AND NOT d.held AND d.next_attempt_at <= $1 AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1)
     AND s.state = 'active' AND s.deleted_at IS NULL ORDER BY d.next_attempt_at LIMIT 22 FOR UPDATE OF d SKIP LOCKED`,
  nojoin: `SELECT d.id FROM webhook_deliveries d
   WHERE d.status = 'pending' AND NOT d.held AND d.next_attempt_at <= $1 AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1)
   ORDER BY d.next_attempt_at LIMIT 22 FOR UPDATE OF d SKIP LOCKED`,
  exists: `SELECT d.id FROM webhook_deliveries d
   WHERE d.status = 'pending' AND NOT d.held AND d.next_attempt_at <= $1 AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1)
     AND EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = d.subscription_id AND s.state = 'active' AND s.deleted_at IS NULL)
   ORDER BY d.next_attempt_at LIMIT 22 FOR UPDATE OF d SKIP LOCKED`,
};
for (const [k, sql] of Object.entries(variants)) {
  await c.query('BEGIN');
  const ex = await c.query({ text: 'EXPLAIN (ANALYZE) ' + sql, values: [now] });
  const lines = ex.rows.map((r) => r['QUERY PLAN'] as string);
  console.log(k.padEnd(8), lines.find((l) => l.includes('Execution'))?.trim(), '|', lines.filter((l) => /Scan|Sort /.test(l)).map((l) => l.trim().split('  ')[0]).join(' ; '));
  await c.query('ROLLBACK');
}
await c.end();
