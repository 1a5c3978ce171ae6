import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newId } from '../../src/ids.ts';
import {
  type CallRow,
  insertApiKey,
  insertCall,
  insertCallWithAudio,
  insertOrg,
} from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer, errorOf, pathOf } from '../helpers/http.ts';
import { mp3Frames } from '../helpers/mp3.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';

const GONE = 'The recording is no longer available and will not become available; stop retrying.';
let h: Harness;
let orgId: string;
let key: string;
let callsOnlyKey: string;
let otherKey: string;
const audio = mp3Frames(20);

before(async () => {
  h = await createHarness();
  const org = await insertOrg(h.db);
  orgId = org.orgId;
  ({ key } = await insertApiKey(h.db, {
    orgId,
    userId: org.ownerId,
    scopes: ['read.calls', 'read.recordings'],
  }));
  ({ key: callsOnlyKey } = await insertApiKey(h.db, { orgId, userId: org.ownerId, scopes: ['read.calls'] }));
  const other = await insertOrg(h.db, { name: 'Other Org' });
  ({ key: otherKey } = await insertApiKey(h.db, { orgId: other.orgId, userId: other.ownerId }));
});
after(() => h.close());

/** Every answer is also checked against the OpenAPI document. */
async function recordingUrl(callId: string, k = key) {
  const res = await h.app.inject({
    method: 'GET',
    url: `/api/v1/calls/${callId}/recording-url`,
    headers: bearer(k),
  });
  assertMatchesOpenApi('GET', '/calls/{id}/recording-url', res);
  return res;
}

test('a call with stored audio answers 200 with a fresh 15-minute link and Cache-Control no-store', async () => {
  h.clock.set('2026-06-15T10:00:00.000Z');
  const { callId } = await insertCallWithAudio(h.deps, orgId, audio);
  const res = await recordingUrl(callId);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['cache-control'], 'no-store');
  const body = JSON.parse(res.body);
  assert.deepEqual(Object.keys(body), ['success', 'data', 'meta']);
  assert.equal(body.success, true);
  assert.deepEqual(Object.keys(body.data), ['url', 'expires_at']);
  assert.equal(body.data.expires_at, '2026-06-15T10:15:00.000Z');
  assert.match(
    body.data.url,
    new RegExp(
      `^https://calls\\.example\\.test/api/v1/calls/${callId}/recording\\.mp3\\?token=[A-Za-z0-9_-]{43}&exp=1781518500$`,
    ),
  );
  assert.deepEqual(body.meta, { timestamp: '2026-06-15T10:00:00.000Z' });
  const download = await h.app.inject({ method: 'GET', url: pathOf(body.data.url) });
  assert.equal(download.statusCode, 200);
  assert.deepEqual(download.rawPayload, audio);
});

// Every row of the spec's availability table, through the real route.
const rows: [string, Partial<CallRow>, number, string][] = [
  ['audio not yet arrived', { recordingState: 'pending' }, 409, 'RECORDING_NOT_READY'],
  [
    'call in trash',
    { recordingState: 'available', trashedAt: new Date('2026-06-10T00:00:00Z') },
    409,
    'RECORDING_WITHHELD',
  ],
  [
    'call scheduled for deletion',
    { recordingState: 'available', pendingDeletionAt: new Date('2026-07-01T00:00:00Z') },
    409,
    'RECORDING_WITHHELD',
  ],
  ['recording removed by the retention sweep', { recordingState: 'deleted' }, 410, 'RECORDING_DELETED'],
  [
    'outbound call refused by the capture gate',
    { direction: 'outbound', outboundLifecycle: 'completed', recordingState: 'not_captured' },
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound call in no_recording mode',
    { direction: 'outbound', outboundLifecycle: 'completed', recordingMode: 'no_recording' },
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'inbound call in no_recording mode (decision: audio is never stored for it)',
    { direction: 'inbound', recordingMode: 'no_recording', recordingState: 'not_captured' },
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound call the customer did not answer',
    { direction: 'outbound', outboundLifecycle: 'customer_no_answer' },
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound call the agent did not answer',
    { direction: 'outbound', outboundLifecycle: 'agent_no_answer' },
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound call that failed to initiate',
    { direction: 'outbound', outboundLifecycle: 'failed_to_initiate' },
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound agent_only call (still repairable)',
    { direction: 'outbound', outboundLifecycle: 'agent_only' },
    409,
    'RECORDING_NOT_READY',
  ],
  [
    'inbound call whose recording was refused',
    { direction: 'inbound', recordingState: 'refused' },
    409,
    'RECORDING_NOT_READY',
  ],
];

for (const [situation, row, status, code] of rows) {
  test(`recording-url: ${situation} answers ${status} ${code}`, async () => {
    const callId = await insertCall(h.db, { orgId, ...row });
    const res = await recordingUrl(callId);
    assert.equal(res.statusCode, status);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.equal(body.success, false);
    assert.equal(body.error.code, code);
    if (status === 410) assert.equal(body.error.message, GONE);
  });
}

test('an erased call answers 404 NOT_FOUND', async () => {
  const { callId } = await insertCallWithAudio(h.deps, orgId, audio, {
    erasedAt: new Date('2026-06-12T00:00:00Z'),
  });
  const res = await recordingUrl(callId);
  assert.equal(res.statusCode, 404);
  assert.equal(errorOf(res).code, 'NOT_FOUND');
  assert.equal(res.headers['cache-control'], 'no-store');
});

test('another organization’s call answers 404, never 403', async () => {
  const { callId } = await insertCallWithAudio(h.deps, orgId, audio);
  const res = await recordingUrl(callId, otherKey);
  assert.equal(res.statusCode, 404);
  assert.equal(errorOf(res).code, 'NOT_FOUND');
});

test('an unknown call id and a malformed id answer 404', async () => {
  for (const id of [newId(), 'not-a-uuid', '12345']) {
    const res = await recordingUrl(id);
    assert.equal(res.statusCode, 404, id);
    assert.equal(errorOf(res).code, 'NOT_FOUND', id);
  }
});

test('a key without read.recordings answers 403 FORBIDDEN even for an available recording', async () => {
  const { callId } = await insertCallWithAudio(h.deps, orgId, audio);
  const res = await recordingUrl(callId, callsOnlyKey);
  assert.equal(res.statusCode, 403);
  assert.equal(errorOf(res).code, 'FORBIDDEN');
  assert.equal(res.headers['cache-control'], 'no-store');
});

test('no Bearer key answers 401 UNAUTHORIZED with Cache-Control no-store', async () => {
  const { callId } = await insertCallWithAudio(h.deps, orgId, audio);
  const res = await h.app.inject({ method: 'GET', url: `/api/v1/calls/${callId}/recording-url` });
  assertMatchesOpenApi('GET', '/calls/{id}/recording-url', res);
  assert.equal(res.statusCode, 401);
  assert.equal(errorOf(res).code, 'UNAUTHORIZED');
  assert.equal(res.headers['cache-control'], 'no-store');
});

test('each call to recording-url signs a fresh link', async () => {
  h.clock.set('2026-06-15T10:00:00.000Z');
  const { callId } = await insertCallWithAudio(h.deps, orgId, audio);
  const first = JSON.parse((await recordingUrl(callId)).body).data;
  h.clock.set('2026-06-15T10:05:00.000Z');
  const second = JSON.parse((await recordingUrl(callId)).body).data;
  assert.equal(second.expires_at, '2026-06-15T10:20:00.000Z');
  assert.notEqual(first.url, second.url);
});
