import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openPostgres } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { testDeps } from '../helpers/deps.ts';
import { emit, insertSubscription } from '../helpers/webhooks.ts';
import {
  ADMIN_TOKEN,
  type FaultReceiver,
  type PgServer,
  type ServiceNode,
  startFaultReceiver,
  startNode,
  startPostgres,
  stopNode,
  tally,
  waitFor,
} from './cluster.ts';

/**
 * PostgreSQL restarted under load: the API answers in the error shape within a bounded time (never
 * hangs), the pool and the worker's LISTEN connection come back by themselves, nothing is lost.
 */
let pg: PgServer;
let db: Db;
let deps: Deps;
let dir: string;
let api: ServiceNode;
let worker: ServiceNode;

before(async () => {
  pg = await startPostgres();
  dir = await mkdtemp(join(tmpdir(), 'callcap-faults-'));
  api = await startNode(['api', 'operator'], { DATABASE_URL: pg.url });
  worker = await startNode(['worker'], { DATABASE_URL: pg.url });
  db = await openPostgres(pg.url, { max: 4 });
  deps = testDeps(db, dir);
});

after(async () => {
  await Promise.all([stopNode(api), stopNode(worker)]);
  await db?.close();
  await pg?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Retries a statement of the test's own while its pool reconnects. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= 50) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

interface Sample {
  at: number;
  status: number | 'hung';
  code: string | null;
  ms: number;
}

const REQUEST_BOUND_MS = 10_000;

test('PostgreSQL restarted under load: error-shaped answers in bounded time, self-recovery, nothing lost', async () => {
  const receiver: FaultReceiver = await startFaultReceiver('ok');
  try {
    const op = (path: string, body: unknown, method = 'POST') =>
      fetch(`${api.operatorUrl}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const org = await op('/organizations', {
      name: 'Restart Inc',
      owner_email: 'owner@restart.test',
      owner_password: 'a long enough password 1',
    });
    assert.equal(org.status, 201);
    const { organization_id: orgId } = (await org.json()) as { organization_id: string };
    await op(`/organizations/${orgId}`, { account_rate_limit_per_hour: 1_000_000 }, 'PATCH');
    const k = await op(`/organizations/${orgId}/api-keys`, {
      scopes: ['read.calls'],
      rate_limit_per_hour: 1_000_000,
    });
    const { key } = (await k.json()) as { key: string };
    await insertSubscription(deps, { orgId, url: receiver.url, at: new Date() });

    // Load: four lanes of GET /api/v1/calls for the whole test.
    const samples: Sample[] = [];
    let loading = true;
    const lane = async () => {
      while (loading) {
        const t0 = Date.now();
        try {
          const r = await fetch(`${api.publicUrl}/api/v1/calls?limit=5`, {
            headers: { authorization: `Bearer ${key}` },
            signal: AbortSignal.timeout(REQUEST_BOUND_MS * 3),
          });
          const body = (await r.json()) as { error?: { code?: string } };
          samples.push({ at: t0, status: r.status, code: body.error?.code ?? null, ms: Date.now() - t0 });
        } catch {
          samples.push({ at: t0, status: 'hung', code: null, ms: Date.now() - t0 });
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const lanes = Promise.all(Array.from({ length: 4 }, lane));

    const ids: string[] = [];
    for (let i = 0; i < 50; i++)
      ids.push(await emit(deps, { orgId, eventType: 'webhook.test', at: new Date() }));
    await new Promise((r) => setTimeout(r, 500));

    const down = Date.now();
    await pg.stop('fast');
    await new Promise((r) => setTimeout(r, 3_000));
    await pg.start();
    const up = Date.now();
    console.log(`[faults] PostgreSQL down for ${up - down} ms`);

    const recoveredIn = await waitFor(
      'GET /api/v1/calls to answer 200 again',
      () => samples.some((s) => s.at > up && s.status === 200),
      30_000,
    );
    const ready = await fetch(`${api.publicUrl}/readyz`);
    assert.equal(ready.status, 200);
    for (let i = 0; i < 50; i++) {
      ids.push(await retrying(() => emit(deps, { orgId, eventType: 'webhook.test', at: new Date() })));
    }
    await waitFor(
      'every event delivered after the restart',
      () => ids.every((id) => receiver.seen.has(id)),
      90_000,
      200,
    );
    loading = false;
    await lanes;

    const during = samples.filter((s) => s.at >= down && s.at < up);
    const byOutcome = new Map<string, number>();
    for (const s of during) {
      const label = `${s.status}${s.code ? ` ${s.code}` : ''}`;
      byOutcome.set(label, (byOutcome.get(label) ?? 0) + 1);
    }
    const slowest = Math.max(...samples.map((s) => s.ms));
    console.log(
      `[faults] while down: ${[...byOutcome].map(([k, n]) => `${n} x ${k}`).join(', ')}; slowest answer ${slowest} ms; 200 again ${recoveredIn} ms after the start`,
    );
    assert.ok(during.length > 0, 'requests were made while the database was down');
    for (const s of during) {
      assert.ok(
        (s.status === 500 && s.code === 'DATABASE_ERROR') || s.status === 503 || s.status === 200,
        `while down: ${s.status} ${s.code}`,
      );
    }
    assert.ok(
      during.some((s) => s.status !== 200),
      'the outage was visible to clients',
    );
    assert.equal(samples.filter((s) => s.status === 'hung').length, 0, 'no request hung');
    assert.ok(slowest <= REQUEST_BOUND_MS, `slowest answer ${slowest} ms`);
    const t = tally('PostgreSQL restart under load', ids, [receiver]);
    assert.equal(t.lost, 0);
  } finally {
    await receiver.close();
  }
});
