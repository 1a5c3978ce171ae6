import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { seedDemoIfEmpty } from '../../src/seed/seed.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

/** The demo seed read back through the public REST API, as a new operator would (needs src/http/public/api-v1). */
let h: Harness;
let key: string;
before(async () => {
  h = await createHarness();
  const printed = (await seedDemoIfEmpty(h.deps)) ?? '';
  key = /API key .*: (cc_live_\S+)/.exec(printed)?.[1] ?? '';
});
after(async () => {
  await h.close();
});

const get = (url: string) =>
  h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

test('the printed demo key lists the five newest demo calls', async () => {
  const res = await get('/api/v1/calls?limit=5');
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.success, true);
  assert.equal(body.data.has_more, true);
  const calls = body.data.items;
  assert.equal(calls.length, 5);
  assert.equal(calls[0].caller_name, 'Marcus Lee');
  assert.equal(calls[0].customer_phone_e164, '+14155550178');
  assert.equal(calls[0].customer_phone_national, '(415) 555-0178');
  const sarah = calls.find((c: { caller_name: string }) => c.caller_name === 'Sarah Johnson');
  assert.deepEqual(Object.keys(sarah.transcript_processed).sort(), [
    'caller_name',
    'followup_email',
    'service_needed',
    'summary',
  ]);
  assert.equal(sarah.transcript_processed.followup_email.language, 'en');
});

test('every demo call answers recording-url with the status its recording state promises', async () => {
  const { rows } = await h.db.query<{
    id: string;
    recording_state: string;
    trashed_at: Date | null;
    pending_deletion_at: Date | null;
  }>('SELECT id, recording_state, trashed_at, pending_deletion_at FROM calls');
  const seen = new Set<string>();
  for (const r of rows) {
    const res = await get(`/api/v1/calls/${r.id}/recording-url`);
    const code = res.statusCode === 200 ? 'OK' : res.json().error.code;
    const expected =
      r.trashed_at || r.pending_deletion_at
        ? 'RECORDING_WITHHELD'
        : (
            {
              available: 'OK',
              pending: 'RECORDING_NOT_READY',
              refused: 'RECORDING_NOT_READY',
              not_captured: 'RECORDING_NOT_CAPTURED',
              deleted: 'RECORDING_DELETED',
            } as Record<string, string>
          )[r.recording_state];
    assert.equal(code, expected, `${r.recording_state} ${res.body}`);
    seen.add(code);
  }
  assert.deepEqual([...seen].sort(), [
    'OK',
    'RECORDING_DELETED',
    'RECORDING_NOT_CAPTURED',
    'RECORDING_NOT_READY',
    'RECORDING_WITHHELD',
  ]);
});

test('a demo recording link downloads the stored MP3', async () => {
  const { rows } = await h.db.query<{ id: string; recording_bytes: number }>(
    `SELECT id, recording_bytes FROM calls
      WHERE recording_state = 'available' AND trashed_at IS NULL AND pending_deletion_at IS NULL LIMIT 1`,
  );
  const link = await get(`/api/v1/calls/${rows[0].id}/recording-url`);
  assert.equal(link.statusCode, 200, link.body);
  const url = new URL(link.json().data.url);
  const file = await h.app.inject({ method: 'GET', url: url.pathname + url.search });
  assert.equal(file.statusCode, 200);
  assert.equal(file.headers['content-type'], 'audio/mpeg');
  assert.equal(file.rawPayload.length, rows[0].recording_bytes);
});
