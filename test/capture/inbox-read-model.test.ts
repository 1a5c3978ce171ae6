/**
 * The inbox read model on what migration 0030 put on the calls row: calls.lead_score and
 * calls.search_vector follow every write of the call's analysis (insert, update, delete, erasure),
 * the lead-score sort and the search read them, and both stay within the scope's environment.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readInbox } from '../../src/capture/inbox.ts';
import type { Db } from '../../src/db/types.ts';
import type { InboxQuery } from '../../src/domain/inbox.ts';
import type { TenantScope } from '../../src/domain/tenant.ts';
import { createTestDb } from '../helpers/db.ts';
import { insertAnalysis, insertCall, insertOrg } from '../helpers/fixtures.ts';

let db: Db;
let orgId: string;
let live: TenantScope;

const QUERY: InboxQuery = {
  view: 'all',
  sort: 'newest',
  page: 1,
  limit: 25,
  from: null,
  to: null,
  direction: null,
  status: null,
  words: null,
  phoneDigits: null,
};

async function onCall(id: string): Promise<{ lead_score: string | null; same_vector: boolean | null }> {
  const { rows } = await db.query<{ lead_score: string | null; same_vector: boolean | null }>(
    `SELECT c.lead_score::text AS lead_score, c.search_vector IS NOT DISTINCT FROM a.search_vector AS same_vector
       FROM calls c LEFT JOIN call_analyses a ON a.call_id = c.id WHERE c.id = $1`,
    [id],
  );
  return rows[0]!;
}

async function call(
  at: string,
  score: unknown,
  transcript: string | null,
  extra: { environment?: 'live' | 'test'; e164?: string; review?: string } = {},
): Promise<string> {
  const id = await insertCall(db, {
    orgId,
    createdAt: new Date(at),
    environment: extra.environment ?? 'live',
    customerE164: extra.e164 ?? '+14155550100',
    reviewStatus: extra.review ?? null,
  });
  if (transcript !== null) {
    await insertAnalysis(db, { callId: id, orgId, analysis: { subject: 'A call', lead_score: score } });
    await db.query('UPDATE call_analyses SET transcript_original = $2 WHERE call_id = $1', [id, transcript]);
  }
  return id;
}

const ids = async (q: Partial<InboxQuery>, scope = live): Promise<string[]> =>
  (await readInbox(db, scope, { ...QUERY, ...q })).rows.map((r) => r.id);

before(async () => {
  db = await createTestDb();
  ({ orgId } = await insertOrg(db));
  live = { organizationId: orgId, environment: 'live' };
});

after(async () => {
  await db.close();
});

test('calls.lead_score and calls.search_vector follow the analysis: insert, update, delete, erasure', async () => {
  const id = await call('2026-05-01T10:00:00Z', 7, 'Caller: the gutter overflows');
  assert.deepEqual(await onCall(id), { lead_score: '7', same_vector: true });
  assert.deepEqual(await ids({ words: 'gutter' }), [id]);

  // a new analysis (reprocessing) and a new transcript: the row follows, the old word no longer finds it
  await db.query(
    `UPDATE call_analyses SET analysis = jsonb_set(analysis, '{lead_score}', '2'), transcript_original = $2
      WHERE call_id = $1`,
    [id, 'Caller: the boiler whistles'],
  );
  assert.deepEqual(await onCall(id), { lead_score: '2', same_vector: true });
  assert.deepEqual(await ids({ words: 'gutter' }), []);
  assert.deepEqual(await ids({ words: 'boiler' }), [id]);

  // a score that is not a number, or none: no score (sorted last), the call still found by its words
  await db.query(
    `UPDATE call_analyses SET analysis = jsonb_set(analysis, '{lead_score}', '"high"') WHERE call_id = $1`,
    [id],
  );
  assert.deepEqual(await onCall(id), { lead_score: null, same_vector: true });
  await db.query(`UPDATE call_analyses SET analysis = analysis - 'lead_score' WHERE call_id = $1`, [id]);
  assert.deepEqual(await onCall(id), { lead_score: null, same_vector: true });

  // the analysis deleted (as erasure does): nothing of it stays on the call
  await db.query(
    `UPDATE call_analyses SET analysis = jsonb_set(analysis, '{lead_score}', '9') WHERE call_id = $1`,
    [id],
  );
  assert.deepEqual(await onCall(id), { lead_score: '9', same_vector: true });
  await db.query('DELETE FROM call_analyses WHERE call_id = $1', [id]);
  const { rows } = await db.query<{ lead_score: string | null; search_vector: string | null }>(
    'SELECT lead_score::text AS lead_score, search_vector::text AS search_vector FROM calls WHERE id = $1',
    [id],
  );
  assert.deepEqual(rows[0], { lead_score: null, search_vector: null });
  assert.deepEqual(await ids({ words: 'boiler' }), []);
  await db.query('DELETE FROM calls WHERE id = $1', [id]);
});

test('sort by lead score: highest first, unscored last, ties newest first; pages, views and searches alike', async () => {
  const a = await call('2026-06-01T10:00:00Z', 9, 'Caller: a burst pipe in the kitchen', {
    review: 'needs_review',
  });
  const b = await call('2026-06-02T10:00:00Z', 4, 'Caller: a dripping tap in the kitchen');
  const c = await call('2026-06-03T10:00:00Z', null, 'Caller: wrong number');
  const d = await call('2026-06-04T10:00:00Z', 9, 'Caller: a new kitchen sink', { review: 'needs_review' });
  const e = await call('2026-06-05T10:00:00Z', null, null); // no analysis at all
  const f = await call('2026-06-06T10:00:00Z', 6.5, 'Caller: kitchen drain smells');
  try {
    assert.deepEqual(await ids({ sort: 'score' }), [d, a, f, b, e, c]);
    assert.deepEqual(await ids({ sort: 'score', limit: 2, page: 2 }), [f, b]);
    const third = await readInbox(db, live, { ...QUERY, sort: 'score', limit: 2, page: 3 });
    assert.deepEqual(
      third.rows.map((r) => [r.id, r.lead_score]),
      [
        [e, null],
        [c, null],
      ],
    );
    assert.equal(third.hasMore, false);
    assert.deepEqual(await ids({ sort: 'score', view: 'needs_review' }), [d, a]);
    // a search: its matches in score order, the counts of its matches
    const found = await readInbox(db, live, { ...QUERY, sort: 'score', words: 'kitchen' });
    assert.deepEqual(
      found.rows.map((r) => r.id),
      [d, a, f, b],
    );
    assert.deepEqual(found.counts, { needs_review: 2, needs_decision: 0, new: 0, all: 4 });
    assert.deepEqual(
      await ids({ sort: 'score', words: 'kitchen', view: 'needs_review', limit: 1, page: 2 }),
      [a],
    );
    assert.deepEqual(
      (await readInbox(db, live, { ...QUERY, sort: 'score' })).rows.find((r) => r.id === f)?.lead_score,
      6.5,
    );
  } finally {
    await db.query('DELETE FROM call_analyses WHERE call_id = ANY($1)', [[a, b, c, d, e, f]]);
    await db.query('DELETE FROM calls WHERE id = ANY($1)', [[a, b, c, d, e, f]]);
  }
});

test("a search by word or number finds only the scope's environment", async () => {
  const l = await call('2026-07-01T10:00:00Z', 5, 'Caller: the septic tank is full', {
    e164: '+14155550177',
  });
  const t = await call('2026-07-02T10:00:00Z', 8, 'Caller: the septic tank backs up', {
    environment: 'test',
    e164: '+14155550177',
  });
  const testScope: TenantScope = { organizationId: orgId, environment: 'test' };
  try {
    assert.deepEqual(await ids({ words: 'septic' }), [l]);
    assert.deepEqual(await ids({ words: 'septic' }, testScope), [t]);
    assert.deepEqual(await ids({ words: 'septic', sort: 'score' }, testScope), [t]);
    assert.deepEqual(await ids({ sort: 'score' }, testScope), [t]);
    const number = { words: '(415) 555-0177', phoneDigits: ['4155550177'] };
    assert.deepEqual(await ids(number), [l]);
    assert.deepEqual(await ids(number, testScope), [t]);
    // another organization's words never match
    const other = (await insertOrg(db)).orgId;
    assert.deepEqual(await ids({ words: 'septic' }, { organizationId: other, environment: 'live' }), []);
  } finally {
    await db.query('DELETE FROM call_analyses WHERE call_id = ANY($1)', [[l, t]]);
    await db.query('DELETE FROM calls WHERE id = ANY($1)', [[l, t]]);
  }
});
