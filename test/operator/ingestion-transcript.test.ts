import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { completeIfReady, onRecordingStored, RECORDING_WAIT_MS } from '../../src/capture/completion.ts';
import { DAY, SECOND } from '../../src/clock.ts';
import { canonicalAnalysis } from '../../src/domain/analysis.ts';
import { newId } from '../../src/ids.ts';
import { T0 } from '../helpers/deps.ts';
import {
  CALL_COMPLETED_KEYS,
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
import { waitFor } from '../helpers/wait.ts';

let h: Harness;
let orgId: string;
let trackerId: string;
before(async () => {
  h = await createHarness();
  ({ orgId } = await insertOrg(h.db, { country: 'US' }));
  trackerId = newId();
  await h.db.query(
    `INSERT INTO trackers (id, organization_id, name, terms, created_at) VALUES ($1, $2, 'Urgent jobs', $3, $4)`,
    [trackerId, orgId, ['urgent', 'water heater', 'refund'], new Date(T0)],
  );
});
after(async () => {
  await h.close();
});

const TRANSCRIPT = `Agent: Acme Plumbing, how can I help you?
Caller: Hi, my name is Jane Miller. I need a plumber to fix my water heater. It's urgent.
Agent: Where are you?
Caller: 42 Oak Street, Springfield. Tomorrow morning would be great.`;

const state = async (id: string) =>
  (await h.db.query<{ processing_state: string }>('SELECT processing_state FROM calls WHERE id = $1', [id]))
    .rows[0].processing_state;

async function postTranscript(id: string, body: unknown = { text: TRANSCRIPT }) {
  return admin(h, 'POST', `/calls/${id}/transcript`, body);
}

/** What the recordings side does when audio is stored: the column change, then onRecordingStored in the same tx. */
async function storeAudio(id: string, duration: number) {
  await h.db.transaction(async (tx) => {
    await tx.query(
      `UPDATE calls SET recording_state = 'available', recording_key = $2, duration = $3, recording_sid = 'RE123' WHERE id = $1`,
      [id, `recordings/${orgId}/${id}/a.mp3`, duration],
    );
    await onRecordingStored(tx, h.deps, id);
  });
}

test('a transcript answers 202 {call_id, processing_state: queued} and is analysed right after the response', async () => {
  const id = await insertCall(h.db, { orgId });
  const res = await postTranscript(id);
  assert.equal(res.statusCode, 202, res.body);
  assert.deepEqual(res.json(), { call_id: id, processing_state: 'queued' });
  await waitFor(async () => (await state(id)) === 'processed', 'the in-process analysis');
  const a = (await h.db.query('SELECT * FROM call_analyses WHERE call_id = $1', [id])).rows[0];
  assert.equal(a.transcript_original, TRANSCRIPT);
  assert.equal(a.language, 'en');
  const analysis = a.analysis as Record<string, unknown>;
  assert.equal(analysis.caller_name, 'Jane Miller');
  assert.equal(analysis.service_needed, 'a plumber to fix my water heater');
  assert.equal((a.followup_email as Record<string, unknown>).language, 'en');
  const call = (await h.db.query('SELECT caller_name, pending_transcript FROM calls WHERE id = $1', [id]))
    .rows[0];
  assert.deepEqual(call, { caller_name: 'Jane Miller', pending_transcript: null });
  // The recording has not arrived: the processing run's events wait for it.
  assert.deepEqual(await eventsOf(h.db, id), []);

  await storeAudio(id, 42.5);
  const events = await eventsOf(h.db, id);
  assert.deepEqual(typesOf(events), [
    'call.completed',
    'call.followup_email.drafted',
    'call.tracker.matched',
    'call.transcribed',
  ]);
  const tp = canonicalAnalysis(analysis);
  const completed = checkEnvelope(only(events, 'call.completed'), {
    type: 'call.completed',
    resourceId: id,
    factKey: id,
    dataKeys: CALL_COMPLETED_KEYS,
  });
  const exp = Math.floor((Date.parse(T0) + 7 * DAY) / 1000);
  assert.match(
    String(completed.recording_url),
    new RegExp(
      `^https://calls\\.example\\.test/api/v1/calls/${id}/recording\\.mp3\\?token=[A-Za-z0-9_-]{43}&exp=${exp}$`,
    ),
  );
  assert.deepEqual(completed, {
    call_id: id,
    direction: 'inbound',
    caller_phone: '+14155552671',
    customer_phone_e164: '+14155552671',
    customer_phone_national: '(415) 555-2671',
    company_phone_e164: '+14155550100',
    call_created_at: '2026-06-01T00:00:00.000Z',
    app_url: `https://calls.example.test/app/calls/${id}`,
    duration: 42.5,
    recording_url: completed.recording_url,
    transcript_processed: tp,
    transcript_original: TRANSCRIPT,
  });
  const transcribed = checkEnvelope(only(events, 'call.transcribed'), {
    type: 'call.transcribed',
    resourceId: id,
    factKey: id,
    dataKeys: ['call_id', 'transcript_original', 'transcript_processed'],
  });
  assert.deepEqual(transcribed, { call_id: id, transcript_original: TRANSCRIPT, transcript_processed: tp });
  const drafted = checkEnvelope(only(events, 'call.followup_email.drafted'), {
    type: 'call.followup_email.drafted',
    resourceId: id,
    factKey: id,
    dataKeys: ['call_id', 'subject', 'body', 'language'],
  });
  assert.equal(drafted.subject, 'Your enquiry: a plumber to fix your water heater');
  assert.deepEqual(drafted, { call_id: id, ...(a.followup_email as object) });
  const matched = checkEnvelope(only(events, 'call.tracker.matched'), {
    type: 'call.tracker.matched',
    resourceId: id,
    factKey: id,
    dataKeys: ['call_id', 'matches'],
  });
  assert.deepEqual(matched, {
    call_id: id,
    matches: [
      {
        tracker_id: trackerId,
        name: 'Urgent jobs',
        matched_terms: ['urgent', 'water heater'],
        excerpts: [
          "…Jane Miller. I need a plumber to fix my water heater. It's urgent. Agent: Where are you? Caller:…",
          "…need a plumber to fix my water heater. It's urgent. Agent: Where are you? Caller: 42 Oak Street,…",
        ],
      },
    ],
  });
  for (const e of events) assert.equal(e.call_id, id);

  // The same fact again (a second upload, a retried callback) yields no second event.
  await h.db.transaction((tx) => onRecordingStored(tx, h.deps, id));
  assert.equal((await eventsOf(h.db, id)).length, 4);
});

test('a call whose audio is already stored completes in the same run as its analysis', async () => {
  const id = await insertCall(h.db, {
    orgId,
    recordingState: 'available',
    recordingKey: 'k.mp3',
    duration: 10,
  });
  await postTranscript(id, { text: 'Caller: Just a voicemail, please leave a message.', language: 'en' });
  await settleJobs(h.deps);
  const events = await eventsOf(h.db, id);
  // a one-sided voicemail: no draft; no tracker term: no match
  assert.deepEqual(typesOf(events), ['call.completed', 'call.transcribed']);
  const data = only(events, 'call.completed').envelope.data;
  assert.equal(data.duration, 10);
  assert.match(String(data.recording_url), /recording\.mp3\?token=/);
});

test('a trashed call completes without a recording link', async () => {
  const id = await insertCall(h.db, {
    orgId,
    recordingState: 'available',
    recordingKey: 'k.mp3',
    duration: 3,
    trashedAt: new Date(T0),
  });
  await postTranscript(id);
  await settleJobs(h.deps);
  assert.equal(only(await eventsOf(h.db, id), 'call.completed').envelope.data.recording_url, null);
});

test('a recording that never arrives releases call.completed after the wait, with duration 0 and no link', async () => {
  const id = await insertCall(h.db, { orgId });
  await postTranscript(id);
  await settleJobs(h.deps);
  assert.equal(await state(id), 'processed');
  h.clock.advance(RECORDING_WAIT_MS - 1000);
  await settleJobs(h.deps);
  assert.deepEqual(await eventsOf(h.db, id), []);
  h.clock.advance(1000);
  await settleJobs(h.deps);
  const events = await eventsOf(h.db, id);
  const created = new Date(Date.parse(T0) + RECORDING_WAIT_MS).toISOString();
  const data = checkEnvelope(only(events, 'call.completed'), {
    type: 'call.completed',
    resourceId: id,
    factKey: id,
    dataKeys: CALL_COMPLETED_KEYS,
    createdAt: created,
  });
  assert.equal(data.duration, 0);
  assert.equal(data.recording_url, null);
  h.clock.set(T0);
});

test('a refused or never-captured recording does not hold the run back', async () => {
  for (const recordingState of ['refused', 'not_captured'] as const) {
    const id = await insertCall(h.db, { orgId, recordingState });
    await postTranscript(id);
    await settleJobs(h.deps);
    assert.equal(only(await eventsOf(h.db, id), 'call.completed').envelope.data.duration, 0, recordingState);
  }
});

test('re-posting the same transcript is harmless; a different one is a 409 CONFLICT', async () => {
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  assert.deepEqual((await postTranscript(id)).json(), { call_id: id, processing_state: 'queued' });
  // the in-process analysis may or may not have finished in between
  const second = await postTranscript(id);
  assert.equal(second.statusCode, 202);
  assert.equal(second.json().call_id, id);
  assert.ok(['queued', 'processed'].includes(second.json().processing_state));
  await waitFor(async () => (await state(id)) === 'processed', 'the analysis');
  const again = await postTranscript(id);
  assert.equal(again.statusCode, 202);
  assert.deepEqual(again.json(), { call_id: id, processing_state: 'processed' });
  assert.equal((await eventsOf(h.db, id)).filter((e) => e.event_type === 'call.completed').length, 1);
  const other = await postTranscript(id, { text: 'Caller: something else entirely.' });
  assert.equal(other.statusCode, 409);
  assert.deepEqual(
    errorJson(other),
    errorBody(
      'CONFLICT',
      'This call already has a different transcript; a call is transcribed once. Re-post the same text to retry safely.',
    ),
  );
});

test('bad transcript bodies are a 400 naming the field; unknown and erased calls are a 404', async () => {
  const id = await insertCall(h.db, { orgId });
  for (const [body, message] of [
    [{}, /Field "text" is required/],
    [{ text: '   ' }, /Field "text": must not be empty/],
    [{ text: 'hi', language: 'english!' }, /Field "language"/],
    [{ text: 'hi', speaker: 'x' }, /Unknown field "speaker"/],
  ] as const) {
    const res = await postTranscript(id, body);
    assert.equal(res.statusCode, 400, JSON.stringify(body));
    assert.match(res.json().error.message, message);
  }
  const erased = await insertCall(h.db, { orgId, erasedAt: new Date(T0) });
  for (const target of [MISSING, 'nope', erased]) {
    const res = await postTranscript(target);
    assert.equal(res.statusCode, 404);
    assert.deepEqual(
      errorJson(res),
      errorBody('NOT_FOUND', 'No call with this id exists (or it was erased).'),
    );
  }
});

test('an analysis run that fails inside its transaction keeps nothing and is retried by a runner after its backoff', async () => {
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  const restore = await failEventsOfType(h.db, 'call.transcribed');
  try {
    await postTranscript(id);
    // the in-process run fails inside its transaction: nothing of it is kept, the job is rescheduled
    await waitFor(
      async () =>
        (
          await h.db.query(
            `SELECT 1 FROM processing_jobs WHERE call_id = $1 AND stage = 'analyse' AND last_error IS NOT NULL`,
            [id],
          )
        ).rowCount === 1,
      'the failed run',
    );
    assert.equal(await state(id), 'queued');
    assert.equal((await h.db.query('SELECT 1 FROM call_analyses WHERE call_id = $1', [id])).rowCount, 0);
    assert.deepEqual(await eventsOf(h.db, id), []);
  } finally {
    await restore();
  }
  await settleJobs(h.deps);
  assert.equal(await state(id), 'queued', 'not before its backoff');
  h.clock.advance(15 * SECOND);
  await settleJobs(h.deps);
  assert.equal(await state(id), 'processed');
  assert.ok(typesOf(await eventsOf(h.db, id)).includes('call.completed'));
  h.clock.set(T0);
});

test('a rolled-back completion leaves no event and can run again', async () => {
  const id = await insertCall(h.db, { orgId });
  await postTranscript(id);
  await settleJobs(h.deps);
  await h.db.query(`UPDATE calls SET recording_state = 'available', duration = 5 WHERE id = $1`, [id]);
  await assert.rejects(
    h.db.transaction(async (tx) => {
      assert.equal(await completeIfReady(tx, h.deps, id), true);
      throw new Error('crash after the domain write');
    }),
    /crash after the domain write/,
  );
  assert.deepEqual(await eventsOf(h.db, id), []);
  assert.equal(await h.db.transaction((tx) => completeIfReady(tx, h.deps, id)), true);
  assert.equal((await eventsOf(h.db, id)).length, 4);
});

test('the follow-up draft falls back to the account language when the call’s language is not detected', async () => {
  const de = await insertOrg(h.db, { country: 'DE' });
  await h.db.query(`UPDATE organizations SET language = 'de' WHERE id = $1`, [de.orgId]);
  const id = await insertCall(h.db, { orgId: de.orgId, recordingState: 'not_captured' });
  await postTranscript(id, { text: 'Agent: 42.\nCaller: Hauptstraße 12, München.' });
  await settleJobs(h.deps);
  const drafted = only(await eventsOf(h.db, id), 'call.followup_email.drafted').envelope.data;
  assert.equal(drafted.language, 'de');
  const tp = only(await eventsOf(h.db, id), 'call.completed').envelope.data.transcript_processed as object;
  assert.equal('detected_language' in tp, false);
});
