import { openPostgres } from '../src/db/postgres.ts';
import { newId } from '../src/ids.ts';
import { emitEvent } from '../src/webhooks/outbox.ts';
import { claimDeliveries } from '../src/webhooks/sql/claim-deliveries.ts';
import { completeDeliveries } from '../src/webhooks/sql/complete-delivery.ts';
const db = await openPostgres(process.env.URL ?? 'postgres://postgres@127.0.0.1:5432/cc_bench_webhooks', { max: 20 });
await db.exec('VACUUM ANALYZE webhook_deliveries');
const orgId = newId();
await db.query(`INSERT INTO organizations (id, name, created_at) VALUES ($1, 'D', now())`, [orgId]);
const subs: string[] = [];
for (let i = 0; i < 10; i++) { const sid = newId(); subs.push(sid); await db.query(`INSERT INTO webhook_subscriptions (id, organization_id, url, state, last_verified_at, created_at, updated_at) VALUES ($1,$2,'http://x','active',now(),now(),now())`, [sid, orgId]); }
const N = 2000;
for (let d = 0; d < N; d += 100) await db.transaction(async (tx) => { for (let i = d; i < d + 100; i++) { const c = newId(); await emitEvent(tx, { organizationId: orgId, eventType: 'call.completed', resourceId: c, callId: c, factKey: c, data: { x: i, pad: 'y'.repeat(1200) }, createdAt: new Date() }); } });
if (process.env.VAC) await db.exec('VACUUM (ANALYZE) webhook_deliveries, webhook_attempts, webhook_call_reach, events');
const B = Number(process.env.B ?? 22);
let tc = 0, tk = 0, n = 0;
const t = performance.now();
for (;;) {
  const now = new Date();
  let a = performance.now();
  const rows = await claimDeliveries(db, { now, limit: B, owner: 'o', leaseUntil: new Date(now.getTime() + 60000) });
  tc += performance.now() - a;
  if (rows.length === 0) break;
  n += rows.length;
  a = performance.now();
  await completeDeliveries(db, { owner: 'o', now, items: rows.map((r) => ({ deliveryId: r.id, subscriptionId: r.subscriptionId, organizationId: r.organizationId, attemptNumber: 1, startedAt: now, durationMs: 1, status: 200, snippet: 'ok', secretId: r.id, signatureTimestamp: 1, reachCallId: r.callId, resetCounters: false })) });
  tk += performance.now() - a;
}
const s = (performance.now() - t) / 1000;
console.log('batch', B, 'deliveries', n, 'rate', Math.round(n / s), '/s; per delivery: claim', (tc / n * 1000).toFixed(0), 'µs, complete', (tk / n * 1000).toFixed(0), 'µs');
await db.close();
