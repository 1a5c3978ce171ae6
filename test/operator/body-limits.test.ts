import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders, errorBody, errorJson } from '../helpers/http.ts';
import { mp3Frames } from '../helpers/mp3.ts';

/** The operator listener takes 1 MiB JSON bodies; only the audio upload takes more (issue 11, item 4). */
let h: Harness;
let orgId: string;
before(async () => {
  h = await createHarness();
  ({ orgId } = await insertOrg(h.db));
});
after(async () => {
  await h.close();
});

const TOO_LARGE = errorBody(
  'PAYLOAD_TOO_LARGE',
  'The request body is too large: this operation accepts at most 1048576 bytes.',
);

test('a JSON body over 1 MiB answers 413 PAYLOAD_TOO_LARGE on operator JSON routes', async () => {
  const callId = await insertCall(h.db, { orgId });
  const big = 'a'.repeat(1024 * 1024);
  for (const [method, url, payload] of [
    ['POST', '/admin/v1/organizations', { name: big, owner_email: 'o@example.test', owner_password: 'x' }],
    ['POST', `/admin/v1/calls/${callId}/transcript`, { text: big }],
    ['POST', `/admin/v1/organizations/${orgId}/calls`, { direction: 'inbound', caller_phone: big }],
  ] as const) {
    const res = await h.operator.inject({ method, url, headers: adminHeaders, payload });
    assert.equal(res.statusCode, 413, `${method} ${url}: ${res.body.slice(0, 300)}`);
    assert.deepEqual(errorJson(res), TOO_LARGE);
  }
  const { rows } = await h.db.query<{ n: number }>(
    'SELECT (SELECT count(*)::int FROM call_analyses WHERE call_id = $1) + (SELECT count(*)::int FROM calls WHERE organization_id = $2) AS n',
    [callId, orgId],
  );
  assert.equal(rows[0].n, 1); // no analysis, no second call: nothing was read
});

test('a JSON body just under 1 MiB is read (400 for its content, not 413)', async () => {
  const res = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: adminHeaders,
    payload: { name: 'a'.repeat(1024 * 1024 - 100) },
  });
  assert.equal(res.statusCode, 400, res.body.slice(0, 300));
  assert.equal(JSON.parse(res.body).error.code, 'BAD_REQUEST');
});

test('the audio upload still takes a recording larger than 1 MiB (204)', async () => {
  const callId = await insertCall(h.db, { orgId });
  const audio = mp3Frames(5200); // about 2.1 MiB
  assert.ok(audio.length > 2 * 1024 * 1024);
  const res = await h.operator.inject({
    method: 'PUT',
    url: `/admin/v1/calls/${callId}/recording`,
    headers: { ...adminHeaders, 'content-type': 'audio/mpeg' },
    payload: audio,
  });
  assert.equal(res.statusCode, 204, res.body);
  const { rows } = await h.db.query<{ recording_bytes: number }>(
    'SELECT recording_bytes FROM calls WHERE id = $1',
    [callId],
  );
  assert.equal(rows[0].recording_bytes, audio.length);
});
