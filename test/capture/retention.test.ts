import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runRetentionSweep } from '../../src/capture/retention.ts';
import { DAY } from '../../src/clock.ts';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let key: string;
let orgId: string;
before(async () => {
  h = await createHarness();
  const org = await insertOrg(h.db);
  orgId = org.orgId;
  ({ key } = await insertApiKey(h.db, { orgId, userId: org.ownerId }));
});
after(async () => {
  await h.close();
});

const get = (url: string) =>
  h.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { authorization: `Bearer ${key}` } });

test('a call whose scheduled deletion is due is erased by the sweep; one not yet due is kept', async () => {
  const now = h.clock.now();
  const due = await insertCall(h.db, { orgId, pendingDeletionAt: new Date(now.getTime() - 1000) });
  const later = await insertCall(h.db, { orgId, pendingDeletionAt: new Date(now.getTime() + DAY) });
  const r = await runRetentionSweep(h.deps);
  assert.equal(r.erased, 1);
  assert.equal((await get(`/calls/${due}`)).statusCode, 404);
  assert.equal((await get(`/calls/${later}`)).statusCode, 200);
  assert.equal((await runRetentionSweep(h.deps)).erased, 0, 'a second sweep finds nothing to erase');
});

test('with retention_days, audio older than the retention is deleted: recording-url answers 410 RECORDING_DELETED', async () => {
  await h.db.query('UPDATE organizations SET retention_days = 30 WHERE id = $1', [orgId]);
  const now = h.clock.now().getTime();
  const old = await insertCall(h.db, {
    orgId,
    recordingState: 'available',
    duration: 12,
    createdAt: new Date(now - 31 * DAY),
  });
  const recent = await insertCall(h.db, {
    orgId,
    recordingState: 'available',
    duration: 12,
    createdAt: new Date(now - 29 * DAY),
  });
  const r = await runRetentionSweep(h.deps);
  assert.equal(r.recordingsDeleted, 1);
  const gone = await get(`/calls/${old}/recording-url`);
  assert.equal(gone.statusCode, 410);
  assert.equal(gone.json().error.code, 'RECORDING_DELETED');
  assert.equal((await get(`/calls/${old}`)).statusCode, 200, 'the call itself stays readable');
  assert.equal((await get(`/calls/${recent}/recording-url`)).statusCode, 200);
  const ev = await h.db.query<{ body: string }>(
    `SELECT body FROM events WHERE resource_id = $1 AND event_type = 'call.recording.deleted'`,
    [old],
  );
  assert.equal(ev.rows.length, 1);
  const data = JSON.parse(ev.rows[0].body).data;
  assert.equal(data.reason, 'retention_expired');
  assert.equal(data.deletion_kind, 'hard_deleted');
});

test('two sweeps at once (two workers) erase a due call once and log no failure', async () => {
  const errors: unknown[] = [];
  const log = { ...h.deps.log, error: (o: unknown) => errors.push(o) } as typeof h.deps.log;
  const deps = { ...h.deps, log };
  const call = await insertCall(h.db, { orgId, pendingDeletionAt: new Date(h.clock.now().getTime() - 1000) });
  const [a, b] = await Promise.all([runRetentionSweep(deps), runRetentionSweep(deps)]);
  assert.equal(a.erased + b.erased, 1);
  assert.deepEqual(errors, []);
  assert.equal((await get(`/calls/${call}`)).statusCode, 404);
});

test('one run clears a backlog larger than a batch, batch after batch, and stops at its bound', async () => {
  const past = new Date(h.clock.now().getTime() - 1000);
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push(await insertCall(h.db, { orgId, pendingDeletionAt: past }));
  const bounded = await runRetentionSweep(h.deps, { batch: 2, maxBatches: 1 });
  assert.equal(bounded.erased, 2, 'a run reads at most maxBatches batches');
  const r = await runRetentionSweep(h.deps, { batch: 2 });
  assert.equal(r.erased, 3, 'the rest in one run: full batches are followed by the next');
  for (const id of ids) assert.equal((await get(`/calls/${id}`)).statusCode, 404);
});
