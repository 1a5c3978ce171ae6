import { openPostgres } from '../src/db/postgres.ts';
import { newId } from '../src/ids.ts';
import { emitEvent } from '../src/webhooks/outbox.ts';
const db = await openPostgres(process.env.URL!);
const orgId = newId();
await db.query(`INSERT INTO organizations (id, name, created_at) VALUES ($1, 'D', now())`, [orgId]);
for (let i = 0; i < 10; i++) await db.query(`INSERT INTO webhook_subscriptions (id, organization_id, url, state, last_verified_at, created_at, updated_at) VALUES ($1,$2,'http://x','active',now(),now(),now())`, [newId(), orgId]);
for (let d = 0; d < 2000; d += 100) await db.transaction(async (tx) => { for (let i = d; i < d + 100; i++) { const c = newId(); await emitEvent(tx, { organizationId: orgId, eventType: 'call.completed', resourceId: c, callId: c, factKey: c, data: { x: i }, createdAt: new Date() }); } });
await db.close();
