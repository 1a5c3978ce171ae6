import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { DAY } from '../../src/clock.ts';
import { newId } from '../../src/ids.ts';
import { deletionScheduledFactKey } from '../../src/webhooks/outbox/event-data/deletion.ts';
import { T0 } from '../helpers/deps.ts';
import { checkEnvelope, eventsOf, only, typesOf } from '../helpers/events.ts';
import { insertCall, insertOrg, MISSING, storedCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, errorBody, errorJson } from '../helpers/http.ts';

let h: Harness;
let orgId: string;
before(async () => {
  h = await createHarness();
  ({ orgId } = await insertOrg(h.db, { country: 'US' }));
});
after(async () => {
  await h.close();
});

const call = (id: string) => storedCall(h.db, id);

async function subscription(reachedCallId: string | null): Promise<string> {
  const id = newId();
  await h.db.query(
    `INSERT INTO webhook_subscriptions (id, organization_id, url, state, created_at, updated_at)
     VALUES ($1, $2, 'https://hooks.example.test/x', 'active', $3, $3)`,
    [id, orgId, new Date(T0)],
  );
  if (reachedCallId) {
    await h.db.query(
      `INSERT INTO webhook_call_reach (subscription_id, call_id, organization_id, first_delivered_at) VALUES ($1, $2, $3, $4)`,
      [id, reachedCallId, orgId, new Date(T0)],
    );
  }
  return id;
}

test('trash and restore answer 204, set and clear trashed_at, and are idempotent', async () => {
  const id = await insertCall(h.db, { orgId });
  const first = await admin(h, 'POST', `/calls/${id}/trash`);
  assert.equal(first.statusCode, 204);
  assert.equal(first.body, '');
  assert.equal((await call(id)).trashed_at?.toISOString(), T0);
  h.clock.advance(1000);
  assert.equal((await admin(h, 'POST', `/calls/${id}/trash`)).statusCode, 204);
  assert.equal((await call(id)).trashed_at?.toISOString(), T0);
  assert.equal((await admin(h, 'POST', `/calls/${id}/restore`)).statusCode, 204);
  assert.equal((await call(id)).trashed_at, null);
  assert.equal((await admin(h, 'POST', `/calls/${id}/restore`)).statusCode, 204);
  assert.deepEqual(await eventsOf(h.db, id), []);
  h.clock.set(T0);
});

test('every call operation answers 404 for an unknown call', async () => {
  for (const op of ['trash', 'restore', 'erase', 'cancel-deletion']) {
    const res = await admin(h, 'POST', `/calls/${MISSING}/${op}`);
    assert.equal(res.statusCode, 404, op);
    assert.deepEqual(
      errorJson(res),
      errorBody('NOT_FOUND', 'No call with this id exists (or it was erased).'),
    );
  }
  const res = await admin(h, 'POST', `/calls/${MISSING}/schedule-deletion`, { reason: 'user_erasure' });
  assert.equal(res.statusCode, 404);
});

test('schedule-deletion answers 204, sets the schedule 30 days out and emits call.deletion_scheduled to reached subscriptions only', async () => {
  const id = await insertCall(h.db, { orgId });
  const reached = await subscription(id);
  const notReached = await subscription(null);
  const res = await admin(h, 'POST', `/calls/${id}/schedule-deletion`, { reason: 'consent_withdrawn' });
  assert.equal(res.statusCode, 204);
  const pending = new Date(Date.parse(T0) + 30 * DAY);
  const row = await call(id);
  assert.equal(row.deletion_scheduled_at?.toISOString(), T0);
  assert.equal(row.pending_deletion_at?.toISOString(), pending.toISOString());
  assert.equal(row.deletion_reason, 'consent_withdrawn');
  const events = await eventsOf(h.db, id);
  const data = checkEnvelope(only(events, 'call.deletion_scheduled'), {
    type: 'call.deletion_scheduled',
    resourceId: id,
    factKey: deletionScheduledFactKey(id, new Date(T0), pending, 'consent_withdrawn'),
    dataKeys: ['call_id', 'pending_deletion_at', 'reason'],
  });
  assert.deepEqual(data, {
    call_id: id,
    pending_deletion_at: pending.toISOString(),
    reason: 'consent_withdrawn',
  });
  const deliveries = await h.db.query<{ subscription_id: string }>(
    'SELECT subscription_id FROM webhook_deliveries WHERE event_id = $1',
    [events[0].id],
  );
  assert.deepEqual(
    deliveries.rows.map((r) => r.subscription_id),
    [reached],
  );
  assert.notEqual(reached, notReached);
});

test('re-posting an unchanged schedule emits nothing; a new date or reason is a new event', async () => {
  const id = await insertCall(h.db, { orgId });
  const at = '2026-07-01T00:00:00Z';
  await admin(h, 'POST', `/calls/${id}/schedule-deletion`, {
    reason: 'retention_expired',
    pending_deletion_at: at,
  });
  await admin(h, 'POST', `/calls/${id}/schedule-deletion`, {
    reason: 'retention_expired',
    pending_deletion_at: at,
  });
  await admin(h, 'POST', `/calls/${id}/schedule-deletion`, { reason: 'retention_expired' });
  assert.equal((await eventsOf(h.db, id)).length, 1);
  await admin(h, 'POST', `/calls/${id}/schedule-deletion`, { reason: 'user_erasure' });
  const events = await eventsOf(h.db, id);
  assert.equal(events.length, 2);
  assert.deepEqual(events.map((e) => e.envelope.data.reason).sort(), ['retention_expired', 'user_erasure']);
  assert.ok(events.every((e) => e.envelope.data.pending_deletion_at === '2026-07-01T00:00:00.000Z'));
});

test('cancel-deletion clears the schedule; scheduling again later is a new fact', async () => {
  const id = await insertCall(h.db, { orgId });
  await admin(h, 'POST', `/calls/${id}/schedule-deletion`, {
    reason: 'user_erasure',
    pending_deletion_at: '2026-08-01T00:00:00Z',
  });
  assert.equal((await admin(h, 'POST', `/calls/${id}/cancel-deletion`)).statusCode, 204);
  const row = await call(id);
  assert.deepEqual(
    [row.deletion_scheduled_at, row.pending_deletion_at, row.deletion_reason],
    [null, null, null],
  );
  h.clock.advance(1000);
  await admin(h, 'POST', `/calls/${id}/schedule-deletion`, {
    reason: 'user_erasure',
    pending_deletion_at: '2026-08-01T00:00:00Z',
  });
  assert.equal((await eventsOf(h.db, id)).length, 2);
  h.clock.set(T0);
});

test('bad schedule-deletion bodies are a 400 naming the field', async () => {
  const id = await insertCall(h.db, { orgId });
  for (const [body, message] of [
    [{}, /Field "reason": Invalid option: expected one of "consent_not_asked"/],
    [{ reason: 'bored' }, /Field "reason"/],
    [{ reason: 'user_erasure', pending_deletion_at: 'soon' }, /Field "pending_deletion_at"/],
    [{ reason: 'user_erasure', pending_deletion_at: '2026-06-14T00:00:00Z' }, /must not be in the past/],
  ] as const) {
    const res = await admin(h, 'POST', `/calls/${id}/schedule-deletion`, body);
    assert.equal(res.statusCode, 400, JSON.stringify(body));
    assert.match(res.json().error.message, message);
  }
  assert.equal((await call(id)).deletion_scheduled_at, null);
});

test('erase answers 204: personal data, transcript and audio are gone, call.recording.deleted is emitted, and the call is 404 from then on', async () => {
  const id = await insertCall(h.db, { orgId, callerName: 'Jane', recordingState: 'available', duration: 9 });
  const key = `recordings/${orgId}/${id}/a.mp3`;
  await h.deps.store.put(key, Readable.from([Buffer.from('ID3 audio')]));
  await h.db.query(`UPDATE calls SET recording_key = $2, recording_sid = 'RE42' WHERE id = $1`, [id, key]);
  await h.db.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, analysis, created_at, updated_at)
     VALUES ($1, $2, 'secret words', '{}', $3, $3)`,
    [id, orgId, new Date(T0)],
  );
  await subscription(id);
  const res = await admin(h, 'POST', `/calls/${id}/erase`);
  assert.equal(res.statusCode, 204);
  const row = await call(id);
  assert.equal(row.erased_at?.toISOString(), T0);
  assert.deepEqual(
    [row.caller_phone, row.customer_phone_e164, row.customer_phone_national, row.customer_phone_rdigits],
    ['', null, null, null],
  );
  assert.deepEqual([row.company_phone_e164, row.caller_name, row.recording_key], [null, null, null]);
  assert.equal(row.recording_state, 'deleted');
  assert.equal((await h.db.query('SELECT 1 FROM call_analyses WHERE call_id = $1', [id])).rowCount, 0);
  assert.equal(await h.deps.store.size(key), null);
  const events = await eventsOf(h.db, id);
  assert.deepEqual(typesOf(events), ['call.recording.deleted']);
  const data = checkEnvelope(events[0], {
    type: 'call.recording.deleted',
    resourceId: id,
    factKey: id,
    dataKeys: ['call_id', 'reason', 'recording_sid', 'deletion_kind', 'deleted_at'],
  });
  assert.deepEqual(data, {
    call_id: id,
    reason: 'call_erased',
    recording_sid: 'RE42',
    deletion_kind: 'hard_deleted',
    deleted_at: T0,
  });
  for (const [op, body] of [
    ['erase', undefined],
    ['trash', undefined],
    ['transcript', { text: 'hi' }],
    ['lifecycle', { state: 'completed' }],
    ['schedule-deletion', { reason: 'user_erasure' }],
  ] as const) {
    const again = await admin(h, 'POST', `/calls/${id}/${op}`, body);
    assert.equal(again.statusCode, 404, op);
  }
});

test('erasing a call without stored audio emits nothing and uses the scheduled reason when there was one', async () => {
  const id = await insertCall(h.db, { orgId });
  assert.equal((await admin(h, 'POST', `/calls/${id}/erase`)).statusCode, 204);
  assert.deepEqual(await eventsOf(h.db, id), []);

  const scheduled = await insertCall(h.db, { orgId, recordingState: 'available', recordingKey: 'gone.mp3' });
  await admin(h, 'POST', `/calls/${scheduled}/schedule-deletion`, { reason: 'retention_expired' });
  await admin(h, 'POST', `/calls/${scheduled}/erase`);
  assert.equal(
    only(await eventsOf(h.db, scheduled), 'call.recording.deleted').envelope.data.reason,
    'retention_expired',
  );
});
