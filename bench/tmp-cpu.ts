import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { newId } from '../src/ids.ts';
import { deriveKeys } from '../src/keys.ts';
import { createLogger } from '../src/log.ts';
import { fileBlobStore } from '../src/recordings/store.ts';
import { emitEvent } from '../src/webhooks/outbox.ts';
import { encryptSecret } from '../src/webhooks/secret-box.ts';
import { createDeliveryWorker } from '../src/webhooks/worker.ts';
import { createWebhookClient } from '../src/webhooks/http-client.ts';
import { deliveryHeaders } from '../src/webhooks/signing.ts';
const ticks = (pid: number) => { try { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); } catch { return 0; } };
const pgTicks = () => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).reduce((a, p) => { try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('cc_bench_cpu') ? a + ticks(Number(p)) : a; } catch { return a; } }, 0);
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }); await admin.connect();
await admin.query('DROP DATABASE IF EXISTS cc_bench_cpu WITH (FORCE)'); await admin.query('CREATE DATABASE cc_bench_cpu'); await admin.end();
const db0 = await openPostgres('postgres://postgres@127.0.0.1:5432/cc_bench_cpu', { max: 20 }); await migrate(db0);
const STATS = new Map<string, { n: number; rows: number }>();
const db = { ...db0, async query(sql: string, p?: any) { const r = await db0.query(sql, p); const k = sql.trim().slice(0, 12); const st = STATS.get(k) ?? { n: 0, rows: 0 }; st.n++; st.rows += r.rows.length; STATS.set(k, st); return r; } } as typeof db0;
const child = fork(join(import.meta.dirname, 'webhook-receiver.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise<number>((r) => child.once('message', (m: any) => r(m.port)));
const url = `http://127.0.0.1:${port}/h`;
const deps: any = { db, clock: systemClock, config: loadConfig({ DATA_DIR: tmpdir(), WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'silent' }), keys: deriveKeys(randomBytes(32)), store: fileBlobStore(tmpdir()), log: createLogger('silent'), adminToken: 'x'.repeat(20) };
const orgId = newId();
await db.query(`INSERT INTO organizations (id, name, created_at) VALUES ($1, 'T', now())`, [orgId]);
for (let i = 0; i < 10; i++) { const sid = newId();
  await db.query(`INSERT INTO webhook_subscriptions (id, organization_id, url, state, last_verified_at, created_at, updated_at) VALUES ($1,$2,$3,'active',now(),now(),now())`, [sid, orgId, url]);
  await db.query(`INSERT INTO webhook_secrets (id, subscription_id, organization_id, ciphertext, status, kind, created_at, activated_at) VALUES ($1,$2,$3,$4,'active','initial',now(),now())`, [newId(), sid, orgId, encryptSecret(deps.keys.secretEncryptionKey, 'whsec_x')]); }
const body = JSON.stringify({ pad: 'y'.repeat(1400) });
async function measure(label: string, n: number, fn: () => Promise<void>) {
  const c0 = process.cpuUsage(); const r0 = ticks(child.pid!); const p0 = pgTicks(); const t = performance.now();
  await fn();
  const s = (performance.now() - t) / 1000; const c = process.cpuUsage(c0);
  const us = (x: number) => (x / n).toFixed(0);
  console.log(label.padEnd(10), 'rate', Math.round(n / s), '/s | CPU µs per item: worker', us(c.user + c.system), 'receiver', us((ticks(child.pid!) - r0) * 10000), 'postgres', us((pgTicks() - p0) * 10000));
}
for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++) {
  const client = createWebhookClient({ allowPrivateTargets: true }); let sent = 0;
  if (!process.env.NOCEIL) await measure('ceiling', 20000, async () => { await Promise.all(Array.from({ length: 64 }, async () => { while (sent < 20000) { sent++; await client.post(url, body, deliveryHeaders({ secret: 'whsec_x', body, timestampSeconds: 1, eventId: 'e', eventType: 't' })); } })); });
  await client.close();
  for (let d = 0; d < 2000; d += 100) await db.transaction(async (tx) => { for (let i = d; i < d + 100; i++) { const c = newId(); await emitEvent(tx, { organizationId: orgId, eventType: 'call.completed', resourceId: c, callId: c, factKey: c, data: { x: i, pad: 'y'.repeat(1200) }, createdAt: new Date() }); } });
  await db.exec('VACUUM (ANALYZE) webhook_deliveries, webhook_attempts, webhook_call_reach, events');
  const w = createDeliveryWorker(deps, { concurrency: 64 });
  await measure('deliveries', 20000, async () => { await w.start(); for (;;) { const r = await db.query<{ n: number }>(`SELECT count(*)::int n FROM webhook_deliveries WHERE status='pending'`); if (r.rows[0].n === 0) break; await new Promise((r) => setTimeout(r, 50)); } });
  await w.stop();
}
console.log(STATS); child.kill(); await db0.close();
