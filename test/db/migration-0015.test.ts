/** Migration 0015: the call page's timeline columns, backfilled from the events of calls that predate it. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import type { Db } from '../../src/db/types.ts';
import { newId } from '../../src/ids.ts';
import { createTestDb } from '../helpers/db.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';

const FILE = '0015_call_page_timeline.sql';
let db: Db;
before(async () => {
  db = await createTestDb();
  // Back to the schema before 0015, so the migration runs over rows written without its columns.
  await db.exec(`ALTER TABLE calls DROP COLUMN outbound_ended_at, DROP COLUMN outbound_repaired_at,
                   DROP COLUMN tracker_matches`);
  await db.query('DELETE FROM schema_migrations WHERE name = $1', [FILE]);
});
after(() => db?.close());

test('0015 reads the outbound steps and the tracker matches of older calls from their events, once', async () => {
  const { orgId } = await insertOrg(db);
  const event = (callId: string, type: string, at: string, data: Record<string, unknown>) =>
    db.query(
      `INSERT INTO events (id, organization_id, event_type, resource_id, call_id, body, created_at)
       VALUES ($1, $2, $3, $4, $4, $5, $6)`,
      [newId(), orgId, type, callId, JSON.stringify({ id: newId(), type, data }), at],
    );
  const match = { tracker_id: newId(), name: 'Leaks', matched_terms: ['leak'], excerpts: ['a leak'] };
  // Only the agent at 09:31, repaired to completed at 09:40; its trackers matched.
  const repaired = await insertCall(db, { orgId, direction: 'outbound', outboundLifecycle: 'completed' });
  await event(repaired, 'call.outbound.attempted', '2026-06-14T09:31:00Z', {
    outbound_lifecycle: 'agent_only',
  });
  await event(repaired, 'call.outbound.lifecycle_repaired', '2026-06-14T09:40:00Z', {});
  await event(repaired, 'call.outbound.attempted', '2026-06-14T09:40:00Z', {
    outbound_lifecycle: 'completed',
  });
  await event(repaired, 'call.tracker.matched', '2026-06-14T09:41:00Z', {
    call_id: repaired,
    matches: [match],
  });
  // Completed with no tracker matched; still ringing; erased (its matches are not brought back).
  const quiet = await insertCall(db, { orgId });
  await db.query(`UPDATE calls SET completion_emitted_at = '2026-06-14T10:00:00Z' WHERE id = $1`, [quiet]);
  const ringing = await insertCall(db, { orgId, direction: 'outbound', outboundLifecycle: 'ringing_agent' });
  const erased = await insertCall(db, { orgId, erasedAt: new Date('2026-06-15T00:00:00Z') });
  await event(erased, 'call.tracker.matched', '2026-06-14T09:41:00Z', { call_id: erased, matches: [match] });

  assert.deepEqual(await migrate(db), [FILE]);
  const { rows } = await db.query<{
    id: string;
    outbound_ended_at: Date | null;
    outbound_repaired_at: Date | null;
    tracker_matches: unknown;
  }>(
    'SELECT id, outbound_ended_at, outbound_repaired_at, tracker_matches FROM calls WHERE organization_id = $1',
    [orgId],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  assert.deepEqual(byId.get(repaired), {
    id: repaired,
    outbound_ended_at: new Date('2026-06-14T09:31:00Z'),
    outbound_repaired_at: new Date('2026-06-14T09:40:00Z'),
    tracker_matches: [match],
  });
  assert.deepEqual(byId.get(quiet), {
    id: quiet,
    outbound_ended_at: null,
    outbound_repaired_at: null,
    tracker_matches: [],
  });
  for (const id of [ringing, erased]) {
    assert.deepEqual(byId.get(id), {
      id,
      outbound_ended_at: null,
      outbound_repaired_at: null,
      tracker_matches: null,
    });
  }
  assert.deepEqual(await migrate(db), []);
});
