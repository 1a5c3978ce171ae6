import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { T0 } from '../helpers/deps.ts';
import { CALL_COMPLETED_KEYS, checkEnvelope, eventsOf, only, typesOf } from '../helpers/events.ts';
import { insertOrg, MISSING, storedCall } from '../helpers/fixtures.ts';
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

const callRow = (id: string) => storedCall(h.db, id);

test('an inbound call answers 201 {call_id} and stores the caller as the customer', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: '(415) 555-2671',
    company_phone: '+1 415 555 0100',
    caller_name: 'Jane Miller',
    created_at: '2026-06-14T09:30:00+02:00',
    crm_status: 'to_call',
    review_status: 'needs_review',
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['call_id']);
  const row = await callRow(body.call_id);
  assert.equal(row.organization_id, orgId);
  assert.equal(row.direction, 'inbound');
  assert.equal(row.caller_phone, '(415) 555-2671');
  assert.equal(row.customer_phone_e164, '+14155552671');
  assert.equal(row.customer_phone_national, '(415) 555-2671');
  assert.equal(row.customer_phone_rdigits, '17625555141');
  assert.equal(row.company_phone_e164, '+14155550100');
  assert.equal(row.caller_name, 'Jane Miller');
  assert.equal(row.crm_status, 'to_call');
  assert.equal(row.review_status, 'needs_review');
  assert.equal(row.outbound_lifecycle, null);
  assert.equal(row.agent_user_id, null);
  assert.equal(row.recording_state, 'pending');
  assert.equal(row.processing_state, 'none');
  assert.equal(row.created_at.toISOString(), '2026-06-14T07:30:00.000Z');
  assert.deepEqual(await eventsOf(h.db, body.call_id), []);
});

test('an inbound caller id that is no usable number is stored with a null customer phone', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: 'anonymous',
  });
  assert.equal(res.statusCode, 201, res.body);
  const row = await callRow(res.json().call_id);
  assert.equal(row.caller_phone, 'anonymous');
  assert.equal(row.customer_phone_e164, null);
  assert.equal(row.customer_phone_national, null);
  assert.equal(row.crm_status, 'new');
  assert.equal(row.created_at.toISOString(), '2026-06-15T10:00:00.000Z');
});

test('an outbound call stores the dialled number as the customer and starts in ringing_agent with the owner as agent', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'outbound',
    caller_phone: '+14155550100',
    customer_phone: '415.555.2671',
  });
  assert.equal(res.statusCode, 201, res.body);
  const row = await callRow(res.json().call_id);
  assert.equal(row.customer_phone, '415.555.2671');
  assert.equal(row.customer_phone_e164, '+14155552671');
  assert.equal(row.outbound_lifecycle, 'ringing_agent');
  assert.equal(row.agent_user_id, ownerId);
});

test('an outbound call without customer_phone is a 400 naming the field', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'outbound',
    caller_phone: '+14155550100',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Field "customer_phone": is required for outbound calls (the dialled number).',
      T0,
      'customer_phone',
    ),
  );
});

test('an outbound call to an unusable number is a 422 VALIDATION_ERROR', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'outbound',
    caller_phone: '+14155550100',
    customer_phone: '12',
  });
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().error.code, 'VALIDATION_ERROR');
  assert.match(res.json().error.message, /customer_phone "12" is not a usable phone number/);
});

test('an unusable company_phone is a 422 VALIDATION_ERROR', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: '+14155552671',
    company_phone: 'front desk',
  });
  assert.equal(res.statusCode, 422);
  assert.match(res.json().error.message, /company_phone/);
});

test('an agent_user_id of another organization is a 422 and nothing is stored', async () => {
  const other = await insertOrg(h.db);
  const before = (await h.db.query('SELECT count(*)::int AS n FROM calls')).rows[0].n;
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'outbound',
    caller_phone: '+14155550100',
    customer_phone: '+14155552671',
    agent_user_id: other.ownerId,
  });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(
    errorJson(res),
    errorBody('VALIDATION_ERROR', `agent_user_id ${other.ownerId} is not a user of this organization.`),
  );
  assert.equal((await h.db.query('SELECT count(*)::int AS n FROM calls')).rows[0].n, before);
});

test('bad bodies are a 400 naming the field', async () => {
  const cases: [unknown, RegExp][] = [
    [{ direction: 'sideways', caller_phone: '+1' }, /Field "direction"/],
    [{ direction: 'inbound' }, /Field "caller_phone" is required/],
    [{ direction: 'inbound', caller_phone: '+14155552671', colour: 'red' }, /Unknown field "colour"/],
    [{ direction: 'inbound', caller_phone: '+14155552671', created_at: 'yesterday' }, /Field "created_at"/],
    [{ direction: 'inbound', caller_phone: '+14155552671', recording_mode: 'off' }, /Field "recording_mode"/],
    [{ direction: 'inbound', caller_phone: '+14155552671', crm_status: 'won' }, /Field "crm_status"/],
    [{ direction: 'inbound', caller_phone: '+14155552671', agent_user_id: 'bob' }, /Field "agent_user_id"/],
    [
      { direction: 'inbound', caller_phone: '+14155552671', transcript_processed: { lead_score: 11 } },
      /Field "transcript_processed.lead_score"/,
    ],
    [
      {
        direction: 'inbound',
        caller_phone: '+14155552671',
        transcript_processed: { subject: 'x'.repeat(81) },
      },
      /Field "transcript_processed.subject"/,
    ],
  ];
  for (const [body, message] of cases) {
    const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, body);
    assert.equal(res.statusCode, 400, JSON.stringify(body));
    assert.equal(res.json().error.code, 'BAD_REQUEST');
    assert.match(res.json().error.message, message);
  }
});

test('an unknown or malformed organization is a 404', async () => {
  for (const org of [MISSING, 'acme']) {
    const res = await admin(h, 'POST', `/organizations/${org}/calls`, {
      direction: 'inbound',
      caller_phone: '+14155552671',
    });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(errorJson(res), errorBody('NOT_FOUND', `No organization ${org}.`));
  }
});

test('a call in no_recording mode is never captured', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'outbound',
    caller_phone: '+14155550100',
    customer_phone: '+14155552671',
    recording_mode: 'no_recording',
  });
  const row = await callRow(res.json().call_id);
  assert.equal(row.recording_mode, 'no_recording');
  assert.equal(row.recording_state, 'not_captured');
});

test('an imported, analysed call without recording completes at once with its own analysis and draft', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: '+14155552671',
    recording_mode: 'no_recording',
    created_at: '2026-01-02T03:04:05Z',
    transcript_original: 'Caller: I need a new boiler.',
    transcript_processed: {
      caller_name: 'Ana',
      summary: 'Wants a new boiler.',
      lead_score: 8,
      detected_language: 'en',
      something_new: 'dropped',
      followup_email: { subject: 'Your boiler', body: 'Hello Ana', language: 'en' },
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  const id = res.json().call_id;
  const row = await callRow(id);
  assert.equal(row.processing_state, 'processed');
  assert.equal(row.caller_name, 'Ana');
  const events = await eventsOf(h.db, id);
  assert.deepEqual(typesOf(events), ['call.completed', 'call.followup_email.drafted', 'call.transcribed']);
  const completed = checkEnvelope(only(events, 'call.completed'), {
    type: 'call.completed',
    resourceId: id,
    factKey: id,
    dataKeys: CALL_COMPLETED_KEYS,
  });
  assert.equal(completed.call_created_at, '2026-01-02T03:04:05.000Z');
  assert.equal(completed.duration, 0);
  assert.equal(completed.recording_url, null);
  assert.equal(completed.transcript_original, 'Caller: I need a new boiler.');
  const tp = completed.transcript_processed as Record<string, unknown>;
  assert.equal(tp.caller_name, 'Ana');
  assert.equal(tp.lead_score, 8);
  assert.equal(tp.subject, null);
  assert.equal('something_new' in tp, false);
  assert.equal('followup_email' in tp, false);
  const drafted = checkEnvelope(only(events, 'call.followup_email.drafted'), {
    type: 'call.followup_email.drafted',
    resourceId: id,
    factKey: id,
    dataKeys: ['call_id', 'subject', 'body', 'language'],
  });
  assert.deepEqual(drafted, { call_id: id, subject: 'Your boiler', body: 'Hello Ana', language: 'en' });
});

test('an imported transcript without analysis is analysed right after the response and waits for its recording', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: '+14155552671',
    transcript_original: 'Agent: Acme.\nCaller: Hi, my name is Tom Baker. I need a gas safety check.',
  });
  const id = res.json().call_id;
  assert.deepEqual(res.json(), { call_id: id });
  // queued for the analyse stage in the insert's transaction, run right after the response
  await settleJobs(h.deps);
  const a = (
    await h.db.query('SELECT transcript_original, analysis FROM call_analyses WHERE call_id = $1', [id])
  ).rows[0];
  assert.equal((a.analysis as Record<string, unknown>).caller_name, 'Tom Baker');
  assert.equal((a.analysis as Record<string, unknown>).service_needed, 'a gas safety check');
  assert.equal((await callRow(id)).processing_state, 'processed');
  assert.deepEqual(await eventsOf(h.db, id), []);
});
