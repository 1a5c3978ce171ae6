import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openPostgres } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { testDeps } from '../helpers/deps.ts';
import { mp3Frames } from '../helpers/mp3.ts';
import { startS3, type TestS3 } from '../helpers/s3-server.ts';
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
 * Two API nodes (api + operator roles) and two worker processes on one PostgreSQL and one S3 bucket,
 * each a real `callcap serve` process: what one node does, the others see.
 */
let pg: PgServer;
let s3: TestS3;
let db: Db;
let deps: Deps;
let dir: string;
let a: ServiceNode;
let b: ServiceNode;
let w1: ServiceNode;
let w2: ServiceNode;
let orgId: string;

const op = (path: string, init: { method?: string; body?: unknown; raw?: Buffer; type?: string } = {}) =>
  fetch(`${a.operatorUrl}/admin/v1${path}`, {
    method: init.method ?? 'POST',
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      ...(init.body !== undefined || init.raw ? { 'content-type': init.type ?? 'application/json' } : {}),
    },
    ...(init.raw
      ? { body: new Uint8Array(init.raw) }
      : init.body !== undefined
        ? { body: JSON.stringify(init.body) }
        : {}),
  });

async function newKey(rateLimitPerHour: number): Promise<string> {
  const r = await op(`/organizations/${orgId}/api-keys`, {
    body: { scopes: ['read.calls', 'read.recordings'], rate_limit_per_hour: rateLimitPerHour },
  });
  assert.equal(r.status, 201);
  return ((await r.json()) as { key: string }).key;
}

before(async () => {
  pg = await startPostgres();
  s3 = await startS3();
  dir = await mkdtemp(join(tmpdir(), 'callcap-faults-'));
  const env = { DATABASE_URL: pg.url, ...s3.env };
  a = await startNode(['api', 'operator'], env); // migrates first
  [b, w1, w2] = await Promise.all([
    startNode(['api', 'operator'], env),
    startNode(['worker'], env),
    startNode(['worker'], env),
  ]);
  db = await openPostgres(pg.url, { max: 4 });
  deps = testDeps(db, dir);
  const r = await op('/organizations', {
    body: {
      name: 'Faults Inc',
      owner_email: 'owner@faults.test',
      owner_password: 'a long enough password 1',
    },
  });
  assert.equal(r.status, 201);
  orgId = ((await r.json()) as { organization_id: string }).organization_id;
  assert.equal(
    (
      await op(`/organizations/${orgId}`, {
        method: 'PATCH',
        body: { account_rate_limit_per_hour: 1_000_000 },
      })
    ).status,
    200,
  );
});

after(async () => {
  await Promise.all([stopNode(a), stopNode(b), stopNode(w1), stopNode(w2)]);
  await db?.close();
  await s3?.close();
  await pg?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('a recording ingested through node A downloads through node B (one bucket)', async () => {
  const key = await newKey(1000);
  const created = await op(`/organizations/${orgId}/calls`, {
    body: { direction: 'inbound', caller_phone: '+14155552671' },
  });
  assert.equal(created.status, 201);
  const { call_id: callId } = (await created.json()) as { call_id: string };
  const audio = mp3Frames(383);
  const put = await op(`/calls/${callId}/recording`, { method: 'PUT', raw: audio, type: 'audio/mpeg' });
  assert.equal(put.status, 204);

  const link = await fetch(`${b.publicUrl}/api/v1/calls/${callId}/recording-url`, {
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(link.status, 200);
  const url = new URL(((await link.json()) as { data: { url: string } }).data.url);
  const download = await fetch(`${b.publicUrl}${url.pathname}${url.search}`);
  assert.equal(download.status, 200);
  assert.ok(Buffer.from(await download.arrayBuffer()).equals(audio));
  const ranged = await fetch(`${b.publicUrl}${url.pathname}${url.search}`, {
    headers: { range: 'bytes=0-416' },
  });
  assert.equal(ranged.status, 206);
  assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(audio.subarray(0, 417)));
});

test('per-key limit is exact across nodes: 1000 requests spread over both pass, the 1001st is 429', async () => {
  const key = await newKey(1000);
  const nodes = [a.publicUrl, b.publicUrl];
  const statuses = new Map<number, number>();
  let next = 0;
  const lane = async () => {
    while (next < 1000) {
      const i = next++;
      const r = await fetch(`${nodes[i % 2]}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
      await r.arrayBuffer();
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  assert.deepEqual([...statuses], [[200, 1000]]);
  for (const node of nodes) {
    const r = await fetch(`${node}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(r.status, 429);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.ok(Number(r.headers.get('retry-after')) > 0);
  }
  console.log('[faults] rate limit across 2 API nodes: 1000 x 200, then 429 on both nodes');
});

test('maintenance switched through one node applies on both within a second', async () => {
  const key = await newKey(100_000);
  const statusOf = async (node: string | null) => {
    const r = await fetch(`${node}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    await r.arrayBuffer();
    return r.status;
  };
  assert.equal(await statusOf(a.publicUrl), 200);
  assert.equal(await statusOf(b.publicUrl), 200);
  try {
    assert.equal(
      (await op('/maintenance', { method: 'PUT', body: { public_api_enabled: false } })).status,
      200,
    );
    const ms = await waitFor(
      'both nodes to answer 503',
      async () => (await statusOf(a.publicUrl)) === 503 && (await statusOf(b.publicUrl)) === 503,
      5_000,
      25,
    );
    console.log(`[faults] maintenance on: both nodes answered 503 after ${ms} ms`);
    // The flag is cached for one second per node; polling and a loaded machine add a little.
    assert.ok(ms <= 1_250, `took ${ms} ms`);
  } finally {
    assert.equal(
      (await op('/maintenance', { method: 'PUT', body: { public_api_enabled: true } })).status,
      200,
    );
    await waitFor(
      'both nodes back',
      async () => (await statusOf(a.publicUrl)) === 200 && (await statusOf(b.publicUrl)) === 200,
      5_000,
      50,
    );
  }
});

test('a burst fanned out to several receivers is delivered exactly once each by two workers', async () => {
  const receivers: FaultReceiver[] = [];
  try {
    for (let i = 0; i < 3; i++) receivers.push(await startFaultReceiver('ok'));
    for (const r of receivers) await insertSubscription(deps, { orgId, url: r.url, at: new Date() });
    const ids: string[] = [];
    for (let i = 0; i < 300; i++)
      ids.push(await emit(deps, { orgId, eventType: 'webhook.test', at: new Date() }));
    await waitFor(
      'every event at every receiver',
      () => receivers.every((r) => ids.every((id) => r.seen.has(id))),
      120_000,
      200,
    );
    await new Promise((r) => setTimeout(r, 500)); // a late duplicate would show up now
    const t = tally('burst, 2 workers, 3 receivers', ids, receivers);
    assert.equal(t.lost, 0);
    assert.equal(t.duplicated, 0);
    assert.equal(t.delivered, 900);
  } finally {
    for (const r of receivers) await r.close();
  }
});
