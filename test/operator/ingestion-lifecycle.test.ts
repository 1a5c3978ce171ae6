import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { T0 } from '../helpers/deps.ts';
import {
  ATTEMPTED_KEYS,
  checkEnvelope,
  eventsOf,
  failEventsOfType,
  only,
  typesOf,
} from '../helpers/events.ts';
import { insertCall, insertOrg, MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, errorBody, errorJson } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';

let h: Harness;
let orgId: string;
let ownerId: string;
before(async () => {
  h = await createHarness();
  ({ orgId, ownerId } = await insertOrg(h.db, { country: 'US' }));
});
after(async () => {
  await h.close();
});

async function outboundCall(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'outbound',
    caller_phone: '+14155550100',
    customer_phone: '(415) 555-2671',
    agent_user_id: ownerId,
    ...extra,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().call_id;
}

const move = (id: string, state: string, failure_reason?: string) =>
  admin(
    h,
    'POST',
    `/calls/${id}/lifecycle`,
    failure_reason === undefined ? { state } : { state, failure_reason },
  );

async function walk(id: string, states: string[]) {
  for (const s of states) {
    const res = await move(id, s);
    assert.equal(res.statusCode, 200, `${s}: ${res.body}`);
  }
}

const row = async (id: string) =>
  (
    await h.db.query('SELECT outbound_lifecycle, failure_reason, recording_state FROM calls WHERE id = $1', [
      id,
    ])
  ).rows[0];

test('an in-progress step answers 200 {call_id, outbound_lifecycle} and emits nothing', async () => {
  const id = await outboundCall();
  const res = await move(id, 'agent_answered');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { call_id: id, outbound_lifecycle: 'agent_answered' });
  assert.deepEqual(await eventsOf(h.db, id), []);
});

test('reaching completed emits call.outbound.attempted with exactly its keys and has_recording true', async () => {
  const id = await outboundCall();
  await walk(id, ['agent_answered', 'ringing_customer', 'in_progress', 'completed']);
  const events = await eventsOf(h.db, id);
  assert.deepEqual(typesOf(events), ['call.outbound.attempted']);
  const data = checkEnvelope(events[0], {
    type: 'call.outbound.attempted',
    resourceId: id,
    factKey: `${id}:completed`,
    dataKeys: ATTEMPTED_KEYS,
  });
  assert.deepEqual(data, {
    call_id: id,
    agent_user_id: ownerId,
    customer_phone: '(415) 555-2671',
    customer_phone_e164: '+14155552671',
    outbound_lifecycle: 'completed',
    duration: null,
    attempted_at: T0,
    has_recording: true,
  });
  assert.deepEqual(await row(id), {
    outbound_lifecycle: 'completed',
    failure_reason: null,
    recording_state: 'pending',
  });
});

test('customer_no_answer emits call.outbound.attempted and call.failed and the recording is never captured', async () => {
  const id = await outboundCall();
  await walk(id, ['agent_answered', 'ringing_customer']);
  const res = await move(id, 'customer_no_answer', 'customer_busy');
  assert.deepEqual(res.json(), { call_id: id, outbound_lifecycle: 'customer_no_answer' });
  const events = await eventsOf(h.db, id);
  assert.deepEqual(typesOf(events), ['call.failed', 'call.outbound.attempted']);
  const failed = checkEnvelope(only(events, 'call.failed'), {
    type: 'call.failed',
    resourceId: id,
    factKey: `${id}:customer_no_answer`,
    dataKeys: ['call_id', 'outbound_lifecycle', 'failure_reason'],
  });
  assert.deepEqual(failed, {
    call_id: id,
    outbound_lifecycle: 'customer_no_answer',
    failure_reason: 'customer_busy',
  });
  const attempted = only(events, 'call.outbound.attempted').envelope.data;
  assert.equal(attempted.has_recording, false);
  assert.equal(attempted.outbound_lifecycle, 'customer_no_answer');
  assert.deepEqual(await row(id), {
    outbound_lifecycle: 'customer_no_answer',
    failure_reason: 'customer_busy',
    recording_state: 'not_captured',
  });
});

test('failed_to_initiate from the initial state has duration null and failure_reason null', async () => {
  const id = await outboundCall();
  await move(id, 'failed_to_initiate');
  const events = await eventsOf(h.db, id);
  assert.equal(only(events, 'call.outbound.attempted').envelope.data.duration, null);
  assert.deepEqual(only(events, 'call.failed').envelope.data, {
    call_id: id,
    outbound_lifecycle: 'failed_to_initiate',
    failure_reason: null,
  });
});

test('the repair agent_only → completed emits lifecycle_repaired and a second, distinct call.outbound.attempted', async () => {
  const id = await outboundCall();
  await walk(id, ['agent_answered', 'ringing_customer', 'agent_only']);
  let events = await eventsOf(h.db, id);
  assert.deepEqual(typesOf(events), ['call.outbound.attempted']);
  assert.equal(events[0].envelope.data.has_recording, false);
  h.clock.advance(3 * 24 * 3600 * 1000);
  const repairedAt = h.clock.now().toISOString();
  await move(id, 'completed');
  events = await eventsOf(h.db, id);
  assert.deepEqual(typesOf(events), [
    'call.outbound.attempted',
    'call.outbound.attempted',
    'call.outbound.lifecycle_repaired',
  ]);
  const repaired = checkEnvelope(only(events, 'call.outbound.lifecycle_repaired'), {
    type: 'call.outbound.lifecycle_repaired',
    resourceId: id,
    factKey: id,
    dataKeys: ['call_id', 'previous_lifecycle', 'new_lifecycle', 'repaired_at'],
    createdAt: repairedAt,
  });
  assert.deepEqual(repaired, {
    call_id: id,
    previous_lifecycle: 'agent_only',
    new_lifecycle: 'completed',
    repaired_at: repairedAt,
  });
  const attempts = events.filter((e) => e.event_type === 'call.outbound.attempted');
  const last = attempts.find((e) => e.envelope.data.outbound_lifecycle === 'completed')!;
  checkEnvelope(last, {
    type: 'call.outbound.attempted',
    resourceId: id,
    factKey: `${id}:completed`,
    dataKeys: ATTEMPTED_KEYS,
    createdAt: repairedAt,
  });
  assert.equal(last.envelope.data.has_recording, true);
  assert.notEqual(attempts[0].id, attempts[1].id);
  h.clock.set(T0);
});

test('an impossible transition is a 422 VALIDATION_ERROR naming both states and changes nothing', async () => {
  const id = await outboundCall();
  await walk(id, ['agent_answered', 'ringing_customer', 'in_progress', 'completed']);
  const res = await move(id, 'in_progress');
  assert.equal(res.statusCode, 422);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'VALIDATION_ERROR',
      'An outbound call cannot move from completed to in_progress (completed is final).',
    ),
  );
  const skip = await move(await outboundCall(), 'in_progress');
  assert.deepEqual(
    skip.json().error.message,
    'An outbound call cannot move from ringing_agent to in_progress (allowed from ringing_agent: agent_answered, agent_no_answer, failed_to_initiate, reconciliation_required).',
  );
  assert.equal((await row(id)).outbound_lifecycle, 'completed');
  assert.equal((await eventsOf(h.db, id)).length, 1);
});

test('reporting the current state again answers 200 and emits nothing new', async () => {
  const id = await outboundCall();
  await walk(id, ['failed_to_initiate']);
  const res = await move(id, 'failed_to_initiate');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { call_id: id, outbound_lifecycle: 'failed_to_initiate' });
  assert.equal((await eventsOf(h.db, id)).length, 2);
});

test('reconciliation_required resolves into a final state', async () => {
  const id = await outboundCall();
  await walk(id, ['agent_answered', 'reconciliation_required', 'agent_no_answer']);
  assert.deepEqual(typesOf(await eventsOf(h.db, id)), ['call.failed', 'call.outbound.attempted']);
});

test('a call in no_recording mode completes with has_recording false', async () => {
  const id = await outboundCall({ recording_mode: 'no_recording' });
  await walk(id, ['agent_answered', 'ringing_customer', 'in_progress', 'completed']);
  assert.equal(only(await eventsOf(h.db, id), 'call.outbound.attempted').envelope.data.has_recording, false);
});

test('an inbound call has no lifecycle: 422', async () => {
  const id = await insertCall(h.db, { orgId, direction: 'inbound' });
  const res = await move(id, 'agent_answered');
  assert.equal(res.statusCode, 422);
  assert.deepEqual(
    errorJson(res),
    errorBody('VALIDATION_ERROR', 'Only outbound calls have an outbound lifecycle; this call is inbound.'),
  );
});

test('unknown calls are a 404 and bad bodies a 400 naming the field', async () => {
  assert.equal((await move(MISSING, 'completed')).statusCode, 404);
  const id = await outboundCall();
  const bad = await move(id, 'exploded');
  assert.equal(bad.statusCode, 400);
  assert.match(bad.json().error.message, /^Field "state": /);
  const reason = await move(id, 'agent_answered', 'customer_busy');
  assert.equal(reason.statusCode, 400);
  assert.deepEqual(
    errorJson(reason),
    errorBody(
      'BAD_REQUEST',
      'Field "failure_reason" applies only to the states agent_no_answer, customer_no_answer, failed_to_initiate; omit it for agent_answered.',
      T0,
      'failure_reason',
    ),
  );
  assert.equal((await row(id)).outbound_lifecycle, 'ringing_agent');
});

test('a failure after the domain write rolls the whole transition back: no state change, no event', async () => {
  const id = await outboundCall();
  await walk(id, ['agent_answered', 'ringing_customer']);
  const restore = await failEventsOfType(h.db, 'call.failed');
  try {
    const res = await move(id, 'customer_no_answer', 'customer_busy');
    assert.equal(res.statusCode, 500);
    assert.equal(res.json().error.code, 'DATABASE_ERROR');
  } finally {
    await restore();
  }
  assert.deepEqual(await row(id), {
    outbound_lifecycle: 'ringing_customer',
    failure_reason: null,
    recording_state: 'pending',
  });
  assert.deepEqual(await eventsOf(h.db, id), []);
});

test('ending without a conversation settles a processing run that was waiting for the recording', async () => {
  const id = await outboundCall();
  await admin(h, 'POST', `/calls/${id}/transcript`, { text: 'Agent: Hello? Hello?' });
  await settleJobs(h.deps);
  assert.deepEqual(await eventsOf(h.db, id), []);
  await walk(id, ['agent_answered', 'ringing_customer', 'customer_no_answer']);
  assert.deepEqual(typesOf(await eventsOf(h.db, id)), [
    'call.completed',
    'call.failed',
    'call.outbound.attempted',
    'call.transcribed',
  ]);
});
