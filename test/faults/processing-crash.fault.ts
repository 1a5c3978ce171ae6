import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { submitTranscript } from '../../src/capture/pipeline.ts';
import { systemClock } from '../../src/clock.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { testDeps } from '../helpers/deps.ts';
import { type FakeProviders, startFakeProviders } from '../helpers/fake-providers.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { type PgServer, type ServiceNode, startNode, startPostgres, stopNode, waitFor } from './cluster.ts';

/**
 * A worker process killed (kill -9) in the middle of a processing stage: its job's lease is short
 * (30 s) because a running stage renews it by a heartbeat, so the call is processed by the next
 * worker within a minute — not after the five minutes the lease once lasted.
 */
let pg: PgServer;
let db: Db;
let deps: Deps;
let dir: string;
let fake: FakeProviders;
const nodes: ServiceNode[] = [];

before(async () => {
  pg = await startPostgres();
  fake = await startFakeProviders();
  dir = await mkdtemp(join(tmpdir(), 'callcap-faults-'));
  db = await openPostgres(pg.url, { max: 4 });
  // the worker processes run on the system clock: so does what this process writes
  deps = { ...testDeps(db, dir), clock: systemClock };
});

after(async () => {
  await Promise.all(nodes.map((n) => stopNode(n)));
  await fake?.close();
  await db?.close();
  await pg?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const worker = async () => {
  const node = await startNode(['worker'], {
    DATABASE_URL: pg.url,
    ANALYSIS_PROVIDER: 'openai',
    ANALYSIS_BASE_URL: fake.openaiBaseUrl,
    // the hung request must outlive the test: only the kill ends it
    ANALYSIS_TIMEOUT_MS: '600000',
  });
  nodes.push(node);
  return node;
};

interface JobRow {
  state: string;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: Date | null;
}

test('kill -9 of a worker mid-stage: the next worker processes the call within a minute', async () => {
  const victim = await worker(); // migrates
  const { orgId } = await insertOrg(db);
  const callId = await insertCall(db, { orgId, recordingState: 'not_captured' });
  const job = async () =>
    (
      await db.query<JobRow>(
        `SELECT state, attempts, lease_owner, lease_expires_at FROM processing_jobs
          WHERE call_id = $1 AND stage = 'analyse'`,
        [callId],
      )
    ).rows[0];

  // The analysis model never answers the first request: the stage hangs in the victim.
  fake.script('chat', { hang: true });
  await submitTranscript(deps, callId, {
    text: 'Agent: Acme Plumbing.\nCustomer: Hi, my name is Jane Miller, my water heater is leaking.',
  });
  await waitFor('the victim to call the analysis model', () => fake.of('chat').length === 1, 30_000);
  const claimed = await job();
  assert.equal(claimed.state, 'pending');
  assert.equal(claimed.attempts, 1);
  assert.ok(claimed.lease_owner && claimed.lease_expires_at);
  // The heartbeat renews the lease while the stage runs (every 10 s).
  const renewedIn = await waitFor(
    'the lease renewed by the heartbeat',
    async () => ((await job()).lease_expires_at?.getTime() ?? 0) > claimed.lease_expires_at!.getTime(),
    30_000,
    250,
  );
  const held = await job();
  assert.equal(held.lease_owner, claimed.lease_owner, 'still the victim’s');

  victim.kill('SIGKILL');
  const killedAt = Date.now();
  assert.equal(await victim.exited(), 'SIGKILL');
  const leaseLeftMs = held.lease_expires_at!.getTime() - killedAt;
  await worker(); // the next worker (stopped by after())
  const startedAt = Date.now();
  const ms = await waitFor(
    'the call processed by the next worker',
    async () =>
      (await db.query<{ s: string }>('SELECT processing_state AS s FROM calls WHERE id = $1', [callId]))
        .rows[0]?.s === 'processed',
    120_000,
    250,
  );
  console.log(
    `[faults] kill -9 mid-stage: lease renewed within ${renewedIn} ms of the stage starting; killed with ${leaseLeftMs} ms of lease left; ` +
      `next worker ready ${startedAt - killedAt} ms after the kill processed the call ${ms} ms later (${Date.now() - killedAt} ms after the kill)`,
  );
  assert.ok(ms < 60_000, `processed ${ms} ms after the next worker started`);
  const done = await job();
  assert.deepEqual([done.state, done.attempts, done.lease_owner], ['succeeded', 2, null]);
  assert.equal(fake.of('chat').length, 2, 'asked once by each worker');
});
