import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, test } from 'node:test';
import { newId } from '../../src/ids.ts';
import { capped, MAX_RECORDING_BYTES } from '../../src/recordings/measure.ts';
import { eventIdFor } from '../../src/webhooks/outbox/outbox.ts';
import {
  type CallRow,
  insertApiKey,
  insertCall,
  insertCallWithAudio,
  insertOrg,
} from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders, bearer, errorOf, pathOf } from '../helpers/http.ts';
import { durationOf, mp3Frames } from '../helpers/mp3.ts';

let h: Harness;
let orgId: string;
let key: string;
const audio = mp3Frames(383);

before(async () => {
  h = await createHarness();
  const org = await insertOrg(h.db);
  orgId = org.orgId;
  ({ key } = await insertApiKey(h.db, {
    orgId,
    userId: org.ownerId,
    scopes: ['read.calls', 'read.recordings'],
  }));
});
after(() => h.close());

const put = (
  callId: string,
  payload: Buffer | string,
  headers: Record<string, string> = { 'content-type': 'audio/mpeg' },
) =>
  h.operator.inject({
    method: 'PUT',
    url: `/admin/v1/calls/${callId}/recording`,
    headers: { ...adminHeaders, ...headers },
    payload,
  });
const post = (path: string, payload?: unknown) =>
  h.operator.inject({
    method: 'POST',
    url: `/admin/v1${path}`,
    headers: adminHeaders,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
const callRow = async (id: string) =>
  (await h.db.query<Record<string, unknown>>('SELECT * FROM calls WHERE id = $1', [id])).rows[0];
const eventsOf = async (callId: string, type: string) =>
  (
    await h.db.query<{ id: string; resource_id: string; body: string }>(
      'SELECT id, resource_id, body FROM events WHERE call_id = $1 AND event_type = $2',
      [callId, type],
    )
  ).rows;
const blobsOf = async (callId: string) =>
  readdir(join(h.dataDir, 'recordings', 'recordings', orgId, callId)).catch(() => [] as string[]);
const recordingUrl = (callId: string) =>
  h.app.inject({ method: 'GET', url: `/api/v1/calls/${callId}/recording-url`, headers: bearer(key) });
const newCall = (row: Partial<CallRow> = {}) => insertCall(h.db, { orgId, ...row });

test('PUT recording stores the audio, measures its duration and answers 204', async () => {
  h.clock.set('2026-06-15T11:00:00.000Z');
  const callId = await newCall();
  const res = await put(callId, audio);
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  const row = await callRow(callId);
  assert.equal(row.recording_state, 'available');
  assert.equal(row.recording_bytes, audio.length);
  assert.equal(row.duration, 10.005);
  assert.ok(Math.abs((row.duration as number) - durationOf(383)) < 0.001);
  assert.match(
    row.recording_key as string,
    new RegExp(`^recordings/${orgId}/${callId}/[0-9a-f-]{36}\\.mp3$`),
  );
  assert.equal(row.processing_state, 'none');
  assert.deepEqual((await blobsOf(callId)).length, 1);
});

test('after PUT recording, GET /calls/{id} shows the measured duration', async () => {
  const callId = await newCall();
  assert.equal((await put(callId, mp3Frames(100))).statusCode, 204);
  const res = await h.app.inject({ method: 'GET', url: `/api/v1/calls/${callId}`, headers: bearer(key) });
  assert.equal(res.statusCode, 200);
  assert.equal(JSON.parse(res.body).data.duration, 2.612);
});

test('PUT recording emits call.recording.ready with exactly call_id, recording_url and duration', async () => {
  h.clock.set('2026-06-15T11:00:00.000Z');
  const callId = await newCall();
  assert.equal((await put(callId, audio)).statusCode, 204);
  const events = await eventsOf(callId, 'call.recording.ready');
  assert.equal(events.length, 1);
  const [event] = events;
  assert.equal(event.id, eventIdFor('call.recording.ready', callId));
  assert.equal(event.resource_id, callId);
  const body = JSON.parse(event.body);
  assert.deepEqual(Object.keys(body), [
    'api_version',
    'event_id',
    'event_type',
    'resource_id',
    'created_at',
    'data',
  ]);
  assert.equal(body.created_at, '2026-06-15T11:00:00.000Z');
  assert.deepEqual(Object.keys(body.data), ['call_id', 'recording_url', 'duration']);
  assert.equal(body.data.call_id, callId);
  assert.equal(body.data.duration, 10.005);
  const url = new URL(body.data.recording_url);
  assert.equal(url.pathname, `/api/v1/calls/${callId}/recording.mp3`);
  assert.equal(Number(url.searchParams.get('exp')), Date.parse('2026-06-22T11:00:00.000Z') / 1000);

  h.clock.set('2026-06-22T10:59:59.000Z');
  const ok = await h.app.inject({ method: 'GET', url: pathOf(body.data.recording_url) });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.rawPayload, audio);
  h.clock.set('2026-06-22T11:00:01.000Z');
  assert.equal((await h.app.inject({ method: 'GET', url: pathOf(body.data.recording_url) })).statusCode, 401);
});

test('a re-upload replaces the audio and its blob, and the ready event is not repeated', async () => {
  const callId = await newCall();
  assert.equal((await put(callId, audio)).statusCode, 204);
  const firstKey = (await callRow(callId)).recording_key;
  assert.equal((await put(callId, mp3Frames(50))).statusCode, 204);
  const row = await callRow(callId);
  assert.notEqual(row.recording_key, firstKey);
  assert.equal(row.duration, 1.306);
  assert.deepEqual(await blobsOf(callId), [(row.recording_key as string).split('/').pop()]);
  assert.equal((await eventsOf(callId, 'call.recording.ready')).length, 1);
});

test('a body that is not MP3 answers 400 and leaves no blob and no change', async () => {
  for (const payload of ['hello, this is text', Buffer.alloc(0), Buffer.from('RIFF\0\0\0\0WAVEfmt ')]) {
    const callId = await newCall();
    const res = await put(callId, payload);
    assert.equal(res.statusCode, 400);
    const body = res.json();
    assert.equal(body.error.code, 'BAD_REQUEST');
    assert.match(body.error.message, /^body is not an MP3 file/);
    assert.equal((await callRow(callId)).recording_state, 'pending');
    assert.deepEqual(await blobsOf(callId), []);
    assert.equal((await eventsOf(callId, 'call.recording.ready')).length, 0);
  }
});

test('a bad re-upload keeps the good recording', async () => {
  const callId = await newCall();
  assert.equal((await put(callId, audio)).statusCode, 204);
  const before = await callRow(callId);
  assert.equal((await put(callId, 'garbage')).statusCode, 400);
  assert.deepEqual(await callRow(callId), before);
  assert.equal((await blobsOf(callId)).length, 1);
});

test('a wrong or missing Content-Type answers 415 UNSUPPORTED_MEDIA_TYPE', async () => {
  const callId = await newCall();
  const variants: Record<string, string>[] = [
    { 'content-type': 'application/octet-stream' },
    { 'content-type': 'audio/wav' },
    {},
  ];
  for (const headers of variants) {
    const res = await put(callId, audio, headers);
    assert.equal(res.statusCode, 415);
    assert.deepEqual(errorOf(res), {
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: 'Send the recording as raw MP3 bytes with Content-Type: audio/mpeg.',
    });
  }
  assert.equal((await callRow(callId)).recording_state, 'pending');
});

test('a declared body over the cap answers 413 PAYLOAD_TOO_LARGE before anything is stored', async () => {
  const callId = await newCall();
  const res = await put(callId, audio, {
    'content-type': 'audio/mpeg',
    'content-length': String(MAX_RECORDING_BYTES + 1),
  });
  assert.equal(res.statusCode, 413);
  assert.equal(errorOf(res).code, 'PAYLOAD_TOO_LARGE');
  assert.deepEqual(await blobsOf(callId), []);
});

test('PUT recording for an unknown, malformed or erased call answers 404', async () => {
  const erased = await newCall({ erasedAt: new Date('2026-06-10T00:00:00Z') });
  for (const id of [newId(), 'nope', erased]) {
    const res = await put(id, audio);
    assert.equal(res.statusCode, 404, id);
    assert.equal(errorOf(res).code, 'NOT_FOUND');
  }
  assert.equal((await callRow(erased)).recording_state, 'pending');
});

test('PUT recording where recording-url already answers 410, or in no_recording mode, answers 409 CONFLICT', async () => {
  const calls = [
    await newCall({ recordingState: 'deleted' }),
    await newCall({ direction: 'outbound', outboundLifecycle: 'completed', recordingState: 'not_captured' }),
    await newCall({ direction: 'outbound', outboundLifecycle: 'customer_no_answer' }),
    await newCall({ recordingMode: 'no_recording' }),
  ];
  for (const callId of calls) {
    const res = await put(callId, audio);
    assert.equal(res.statusCode, 409, callId);
    assert.equal(errorOf(res).code, 'CONFLICT');
    assert.deepEqual(await blobsOf(callId), []);
  }
});

test('PUT recording without the operator token answers 401', async () => {
  const callId = await newCall();
  const res = await h.operator.inject({
    method: 'PUT',
    url: `/admin/v1/calls/${callId}/recording`,
    headers: { 'content-type': 'audio/mpeg' },
    payload: audio,
  });
  assert.equal(res.statusCode, 401);
});

test('refusing an inbound recording keeps recording-url at 409 RECORDING_NOT_READY, and audio may still follow', async () => {
  const callId = await newCall({ direction: 'inbound' });
  assert.equal((await post(`/calls/${callId}/recording-refused`)).statusCode, 204);
  assert.equal((await callRow(callId)).recording_state, 'refused');
  const res = await recordingUrl(callId);
  assert.equal(res.statusCode, 409);
  assert.equal(errorOf(res).code, 'RECORDING_NOT_READY');
  assert.equal((await put(callId, audio)).statusCode, 204);
  assert.equal((await recordingUrl(callId)).statusCode, 200);
});

test('refusing an outbound recording makes recording-url answer 410 RECORDING_NOT_CAPTURED', async () => {
  const callId = await newCall({ direction: 'outbound', outboundLifecycle: 'in_progress' });
  assert.equal((await post(`/calls/${callId}/recording-refused`)).statusCode, 204);
  assert.equal((await callRow(callId)).recording_state, 'not_captured');
  const res = await recordingUrl(callId);
  assert.equal(res.statusCode, 410);
  assert.equal(errorOf(res).code, 'RECORDING_NOT_CAPTURED');
  assert.equal((await post(`/calls/${callId}/recording-refused`)).statusCode, 204);
});

test('refusing a recording that is already stored answers 409 CONFLICT; an unknown call 404', async () => {
  const { callId } = await insertCallWithAudio(h.deps, orgId, audio);
  const res = await post(`/calls/${callId}/recording-refused`);
  assert.equal(res.statusCode, 409);
  assert.equal(errorOf(res).code, 'CONFLICT');
  assert.equal((await callRow(callId)).recording_state, 'available');
  assert.equal((await post(`/calls/${newId()}/recording-refused`)).statusCode, 404);
});

test('deleting a recording removes the blob, answers 410 RECORDING_DELETED and emits call.recording.deleted', async () => {
  h.clock.set('2026-06-16T08:30:00.000Z');
  const callId = await newCall();
  assert.equal((await put(callId, audio)).statusCode, 204);
  await h.db.query(`UPDATE calls SET recording_sid = 'RE123' WHERE id = $1`, [callId]);
  const res = await post(`/calls/${callId}/recording/delete`, {
    deletion_kind: 'hard_deleted',
    reason: 'retention_expired',
  });
  assert.equal(res.statusCode, 204);
  const row = await callRow(callId);
  assert.equal(row.recording_state, 'deleted');
  assert.equal((row.recording_deleted_at as Date).toISOString(), '2026-06-16T08:30:00.000Z');
  assert.equal(row.recording_key, null);
  assert.deepEqual(await blobsOf(callId), []);

  const url = await recordingUrl(callId);
  assert.equal(url.statusCode, 410);
  assert.deepEqual(errorOf(url), {
    code: 'RECORDING_DELETED',
    message: 'The recording is no longer available and will not become available; stop retrying.',
  });

  const events = await eventsOf(callId, 'call.recording.deleted');
  assert.equal(events.length, 1);
  assert.equal(events[0].resource_id, callId);
  assert.deepEqual(JSON.parse(events[0].body).data, {
    call_id: callId,
    reason: 'retention_expired',
    recording_sid: 'RE123',
    deletion_kind: 'hard_deleted',
    deleted_at: '2026-06-16T08:30:00.000Z',
  });
  assert.deepEqual(Object.keys(JSON.parse(events[0].body).data), [
    'call_id',
    'reason',
    'recording_sid',
    'deletion_kind',
    'deleted_at',
  ]);

  h.clock.set('2026-06-17T08:30:00.000Z');
  assert.equal(
    (await post(`/calls/${callId}/recording/delete`, { deletion_kind: 'hard_deleted' })).statusCode,
    204,
  );
  assert.equal((await eventsOf(callId, 'call.recording.deleted')).length, 1);
  assert.equal(
    ((await callRow(callId)).recording_deleted_at as Date).toISOString(),
    '2026-06-16T08:30:00.000Z',
  );
});

test('a provider_404 deletion without reason carries reason null and recording_sid null', async () => {
  h.clock.set('2026-06-16T09:00:00.000Z');
  const callId = await newCall();
  assert.equal(
    (await post(`/calls/${callId}/recording/delete`, { deletion_kind: 'provider_404' })).statusCode,
    204,
  );
  const [event] = await eventsOf(callId, 'call.recording.deleted');
  assert.deepEqual(JSON.parse(event.body).data, {
    call_id: callId,
    reason: null,
    recording_sid: null,
    deletion_kind: 'provider_404',
    deleted_at: '2026-06-16T09:00:00.000Z',
  });
  assert.equal((await recordingUrl(callId)).statusCode, 410);
});

test('a bad deletion body answers 400 naming the field and changes nothing', async () => {
  const { callId } = await insertCallWithAudio(h.deps, orgId, audio);
  const cases: [unknown, RegExp][] = [
    [{}, /deletion_kind/],
    [{ deletion_kind: 'soft' }, /deletion_kind/],
    [{ deletion_kind: 'hard_deleted', reason: 42 }, /reason/],
    [[], /body must be a JSON object/],
    [undefined, /JSON object/],
  ];
  for (const [payload, message] of cases) {
    const res = await post(`/calls/${callId}/recording/delete`, payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    const body = res.json();
    assert.equal(body.error.code, 'BAD_REQUEST');
    assert.match(body.error.message, message);
  }
  assert.equal((await callRow(callId)).recording_state, 'available');
  assert.equal((await eventsOf(callId, 'call.recording.deleted')).length, 0);
});

test('deleting the recording of an unknown or erased call answers 404', async () => {
  const erased = await newCall({ erasedAt: new Date('2026-06-10T00:00:00Z') });
  for (const id of [newId(), erased, 'x']) {
    const res = await post(`/calls/${id}/recording/delete`, { deletion_kind: 'hard_deleted' });
    assert.equal(res.statusCode, 404, id);
    assert.equal(errorOf(res).code, 'NOT_FOUND');
  }
});

test('a processed call waiting for its audio completes when the recording arrives', async () => {
  h.clock.set('2026-06-15T12:00:00.000Z');
  const callId = await newCall();
  await h.db.query(`UPDATE calls SET processing_state = 'processed' WHERE id = $1`, [callId]);
  await h.db.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, analysis, created_at, updated_at)
     VALUES ($1, $2, 'Hello, my sink is leaking.', '{"summary": "Leaking sink."}', $3, $3)`,
    [callId, orgId, h.clock.now()],
  );
  assert.equal((await eventsOf(callId, 'call.completed')).length, 0);
  assert.equal((await put(callId, audio)).statusCode, 204);
  const [completed] = await eventsOf(callId, 'call.completed');
  assert.ok(completed, 'call.completed emitted with the recording');
  const data = JSON.parse(completed.body).data;
  assert.equal(data.duration, 10.005);
  assert.equal(new URL(data.recording_url).pathname, `/api/v1/calls/${callId}/recording.mp3`);
});

test('a processed call waiting for its audio completes without it when the recording is refused', async () => {
  const callId = await newCall();
  await h.db.query(`UPDATE calls SET processing_state = 'processed' WHERE id = $1`, [callId]);
  await h.db.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, analysis, created_at, updated_at)
     VALUES ($1, $2, 'Hello.', '{}', $3, $3)`,
    [callId, orgId, h.clock.now()],
  );
  assert.equal((await post(`/calls/${callId}/recording-refused`)).statusCode, 204);
  const [completed] = await eventsOf(callId, 'call.completed');
  assert.ok(completed, 'call.completed emitted');
  assert.equal(JSON.parse(completed.body).data.recording_url, null);
});

test('an undeclared body is cut off with 413 PAYLOAD_TOO_LARGE as soon as it passes the cap', async () => {
  let received = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      received += chunk.length;
      cb();
    },
  });
  const source = Readable.from([Buffer.alloc(600), Buffer.alloc(600), Buffer.alloc(600)]);
  await assert.rejects(
    pipeline(capped(source, 1000), sink),
    (err: Error & { code?: string; status?: number }) => {
      assert.equal(err.code, 'PAYLOAD_TOO_LARGE');
      assert.equal(err.status, 413);
      return true;
    },
  );
  assert.equal(received, 600);
});
