import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { newId } from '../src/ids.ts';
import { emitEvent } from '../src/webhooks/outbox.ts';
import { claimDeliveries } from '../src/webhooks/sql/claim-deliveries.ts';
import { completeDeliveries } from '../src/webhooks/sql/complete-delivery.ts';
const ticks = (pid: number) => { try { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); } catch { return 0; } };
let PIDS: number[] = [];
const pgTicks = () => PIDS.reduce((a, p) => a + ticks(p), 0);
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }); await admin.connect();
await admin.query('DROP DATABASE IF EXISTS cc_bench_cpu WITH (FORCE)'); await admin.query('CREATE DATABASE cc_bench_cpu'); await admin.end();
const db = await openPostgres('postgres://postgres@127.0.0.1:5432/cc_bench_cpu', { max: 20 }); await migrate(db);
if (process.env.DROPFK) { await db.exec('ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_organization_id_fkey; ALTER TABLE webhook_call_reach DROP CONSTRAINT webhook_call_reach_organization_id_fkey; '); }
if (process.env.FILL) await db.exec(`ALTER TABLE webhook_deliveries SET (fillfactor = ${process.env.FILL})`);
const orgId = newId();
await db.query(`INSERT INTO organizations (id, name, created_at) VALUES ($1, 'D', now())`, [orgId]);
for (let i = 0; i < 10; i++) await db.query(`INSERT INTO webhook_subscriptions (id, organization_id, url, state, last_verified_at, created_at, updated_at) VALUES ($1,$2,'http://x','active',now(),now(),now())`, [newId(), orgId]);
const B = Number(process.env.B ?? 22);
await Promise.all(Array.from({ length: 5 }, () => db.query('SELECT pg_sleep(0.05)')));
PIDS = (await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = 'cc_bench_cpu'`)).rows.map((r) => r.pid);
for (let round = 0; round < 2; round++) {
  let p0 = pgTicks();
  for (let d = 0; d < 2000; d += 100) await db.transaction(async (tx) => { for (let i = d; i < d + 100; i++) { const c = newId(); await emitEvent(tx, { organizationId: orgId, eventType: 'call.completed', resourceId: c, callId: c, factKey: c, data: { x: i, pad: 'y'.repeat(1200) }, createdAt: new Date() }); } });
  console.log('emit pg µs/delivery', ((pgTicks() - p0) * 10000 / 20000).toFixed(0));
  await db.exec('VACUUM (ANALYZE) webhook_deliveries, webhook_attempts, webhook_call_reach, events');
  const claimed: any[] = [];
  p0 = pgTicks();
  for (;;) { const now = new Date(); const rows = await claimDeliveries(db, { now, limit: B, owner: 'o', leaseUntil: new Date(now.getTime() + 60000) }); if (!rows.length) break; claimed.push(rows);
    if (claimed.length === 300 && round === 1 && process.env.EXPLAIN) {
      const { CLAIM_DELIVERIES_SQL } = await import('../src/webhooks/sql/claim-deliveries.ts');
      await db.transaction(async (tx) => { const ex = await tx.query<any>('EXPLAIN (ANALYZE, BUFFERS) ' + CLAIM_DELIVERIES_SQL, [now, B, 'x', new Date(now.getTime() + 60000)]); console.log(ex.rows.map((r: any) => r['QUERY PLAN']).slice(0, 22).join('\n')); throw new Error('rollback'); }).catch(() => {});
    } }
  const pc = pgTicks() - p0;
  p0 = pgTicks();
  for (const rows of claimed) { const now = new Date(); await completeDeliveries(db, { owner: 'o', now, items: rows.map((r: any) => ({ deliveryId: r.id, subscriptionId: r.subscriptionId, organizationId: r.organizationId, attemptNumber: 1, startedAt: now, durationMs: 1, status: 200, snippet: 'ok', secretId: r.id, signatureTimestamp: 1, reachCallId: r.callId, resetCounters: false })) }); }
  const pk = pgTicks() - p0;
  console.log(`batch ${B}: pg CPU µs per delivery: claim ${(pc * 10000 / 20000).toFixed(0)}, complete ${(pk * 10000 / 20000).toFixed(0)}`);
}
console.log((await db.query('select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where relname = $1', ['webhook_deliveries'])).rows[0]);
await db.close();
