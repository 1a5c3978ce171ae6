/**
 * The carrier's copy of a recording is deleted once ours is stored (issue 19, docs/capture.md
 * "Connecting Twilio" section 4): with redaction on, right after the transcribe stage stored the
 * final (silenced where needed) copy; a DELETE Twilio fails is retried by the retention sweep until
 * Twilio confirms. An organization that turned redaction off keeps the carrier's copy as before.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runRetentionSweep } from '../../src/capture/retention.ts';
import {
  DELETE_CLAIM_LEASE_MS,
  deleteCarrierCopy,
  deleteRecordingAtProvider,
} from '../../src/capture/telephony/provider-recordings.ts';
import { downloadStage } from '../../src/capture/telephony/twilio/download.ts';
import { API_TIMEOUT_MS } from '../../src/capture/telephony/twilio/rest.ts';
import { type FakeProviders, startFakeProviders } from '../helpers/fake-providers.ts';
import { admin } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { AGENT_TONE_HZ, CUSTOMER_TONE_HZ } from '../helpers/stereo-mp3.ts';
import {
  callIdOf,
  connectOrg,
  restCall,
  startTelephony,
  type TelephonyEnv,
  type TelephonyOrg,
} from '../helpers/telephony.ts';

let t: TelephonyEnv;
let fake: FakeProviders;
before(async () => {
  fake = await startFakeProviders();
  t = await startTelephony({
    TRANSCRIPTION_PROVIDER: 'openai',
    TRANSCRIPTION_BASE_URL: fake.openaiBaseUrl,
    TRANSCRIPTION_API_KEY: 'sk-test-transcription-key-0123456789',
  });
});
after(async () => {
  await t?.close();
  await fake?.close();
});

async function recordedCall(org: TelephonyOrg, from: string) {
  const call = await t.fake.inboundCall({ from, to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const dial = await call.answerDial({
    voices: { caller: CUSTOMER_TONE_HZ, answerer: AGENT_TONE_HZ },
    duration: 9,
  });
  assert.equal(dial.recordingReply?.status, 204);
  await call.hangup(9);
  return { id, sid: dial.recordingSid! };
}

const deletes = (sid: string) =>
  t.fake.restRequests.filter((r) => r.method === 'DELETE' && r.path.includes(sid)).length;

async function carrierColumns(id: string) {
  const { rows } = await t.h.db.query<{ due: boolean; deleted: boolean; processing_state: string }>(
    `SELECT provider_recording_delete_due AS due, provider_recording_deleted_at IS NOT NULL AS deleted,
            processing_state
       FROM calls WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** A call processed while Twilio failed the DELETE of its copy: ours stored, theirs still due. */
async function dueCall(ringTo: string, from: string) {
  const org = await connectOrg(t, { ringTo });
  t.fake.failRecordingDeletes = 503;
  try {
    const { id, sid } = await recordedCall(org, from);
    await settleJobs(t.h.deps, { handlers: { download: downloadStage } });
    assert.equal(deletes(sid), 1, 'Twilio was asked once the transcribe stage stored our copy');
    assert.equal(t.fake.recordings.get(sid)!.deleted, false);
    assert.deepEqual(await carrierColumns(id), { due: true, deleted: false, processing_state: 'processed' });
    return { org, id, sid };
  } finally {
    t.fake.failRecordingDeletes = null;
  }
}

test('Twilio failing the DELETE after ours is stored: the call stays due, and the retention sweep deletes it there', async () => {
  const { id, sid } = await dueCall('+14155550961', '+14155550162');
  const swept = await runRetentionSweep(t.h.deps);
  assert.equal(swept.providerRecordingsDeleted, 1);
  assert.equal(t.fake.recordings.get(sid)!.deleted, true);
  assert.deepEqual(await carrierColumns(id), { due: true, deleted: true, processing_state: 'processed' });
  // ours is still there, and nothing asks Twilio again
  const { rows } = await t.h.db.query<{ recording_state: string }>(
    'SELECT recording_state FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(rows[0].recording_state, 'available');
  assert.equal((await runRetentionSweep(t.h.deps)).providerRecordingsDeleted, 0);
  assert.equal(deletes(sid), 2);
});

test('the deletion at Twilio is claimed once: while one DELETE is in flight, the sweep and a second path do not send another', async () => {
  const { id, sid } = await dueCall('+14155550963', '+14155550164');

  // Twilio holds the next DELETE's answer; meanwhile the retention sweep and another deletion run.
  let answer!: () => void;
  t.fake.holdRecordingDeletes = new Promise<void>((r) => {
    answer = r;
  });
  const first = deleteCarrierCopy(t.h.deps, id);
  while (deletes(sid) < 2) await new Promise((r) => setTimeout(r, 5));
  const sweep = runRetentionSweep(t.h.deps);
  const second = deleteRecordingAtProvider(t.h.deps, id);
  // time enough for either to send a DELETE of its own, had it read the call as still to delete
  await new Promise((r) => setTimeout(r, 200));
  answer();
  await first;
  assert.equal(await second, 'none', 'the second path found it deleted');
  await sweep;
  assert.equal(deletes(sid), 2, 'one DELETE for the three paths');
  assert.equal(t.fake.recordings.get(sid)!.deleted, true);
  assert.deepEqual(await carrierColumns(id), { due: true, deleted: true, processing_state: 'processed' });
  assert.equal((await runRetentionSweep(t.h.deps)).providerRecordingsDeleted, 0);
  assert.equal(deletes(sid), 2);
});

test('a DELETE Twilio holds blocks no other database work: the call is read over HTTP and its row written while it is in flight', async () => {
  const { org, id, sid } = await dueCall('+14155550964', '+14155550165');
  let answer!: () => void;
  t.fake.holdRecordingDeletes = new Promise<void>((r) => {
    answer = r;
  });
  let settled = false;
  const first = deleteCarrierCopy(t.h.deps, id).finally(() => {
    settled = true;
  });
  try {
    while (deletes(sid) < 2) await new Promise((r) => setTimeout(r, 5));
    // Had the deletion held a transaction across the request (PGlite: the only connection; PostgreSQL:
    // the call's row lock), these would wait for Twilio's answer, here its client's 15 s timeout.
    const read = await restCall(t, org, id);
    assert.equal(read.status, 200);
    assert.equal(read.body.data.call_id, id);
    const written = await t.h.db.query('UPDATE calls SET updated_at = updated_at WHERE id = $1', [id]);
    assert.equal(written.rowCount, 1);
    assert.equal(settled, false, 'both answered while the DELETE was still in flight');
  } finally {
    answer();
    await first;
  }
  assert.equal(deletes(sid), 2);
  assert.equal(t.fake.recordings.get(sid)!.deleted, true);
  assert.deepEqual(await carrierColumns(id), { due: true, deleted: true, processing_state: 'processed' });
});

test('a claim whose claimant died is passed over by the sweep until its lease runs out, then retried', async () => {
  assert.ok(DELETE_CLAIM_LEASE_MS > API_TIMEOUT_MS, "the lease outlasts the Twilio client's timeout");
  const { id, sid } = await dueCall('+14155550965', '+14155550166');
  // a claimant that crashed between its claim and its answer: the claim stays until it runs out
  const until = new Date(t.h.clock.now().getTime() + DELETE_CLAIM_LEASE_MS);
  await t.h.db.query('UPDATE calls SET provider_recording_delete_claimed_until = $2 WHERE id = $1', [
    id,
    until,
  ]);
  assert.equal((await runRetentionSweep(t.h.deps)).providerRecordingsDeleted, 0);
  assert.equal(await deleteRecordingAtProvider(t.h.deps, id), 'none', 'another path asks nothing either');
  assert.equal(deletes(sid), 1);
  t.h.clock.set(until);
  assert.equal((await runRetentionSweep(t.h.deps)).providerRecordingsDeleted, 1);
  assert.equal(deletes(sid), 2);
  assert.equal(t.fake.recordings.get(sid)!.deleted, true);
  const { rows } = await t.h.db.query<{ claimed: Date | null }>(
    'SELECT provider_recording_delete_claimed_until AS claimed FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(rows[0]!.claimed, null);
  assert.deepEqual(await carrierColumns(id), { due: true, deleted: true, processing_state: 'processed' });
});

test('redaction off: the carrier keeps its copy', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550962' });
  const off = await admin(t.h, 'PATCH', `/organizations/${org.orgId}`, { redaction_enabled: false });
  assert.equal(off.statusCode, 200);
  const { id, sid } = await recordedCall(org, '+14155550163');
  await settleJobs(t.h.deps, { handlers: { download: downloadStage } });
  assert.equal(deletes(sid), 0);
  assert.equal(t.fake.recordings.get(sid)!.deleted, false);
  assert.deepEqual(await carrierColumns(id), { due: false, deleted: false, processing_state: 'processed' });
  assert.equal((await runRetentionSweep(t.h.deps)).providerRecordingsDeleted, 0);
});

test("Twilio deleting its copy at once: the transcribe stage's own transaction writes the answer (deleted, claim cleared)", async () => {
  const org = await connectOrg(t, { ringTo: '+14155550966' });
  const { id, sid } = await recordedCall(org, '+14155550167');
  await settleJobs(t.h.deps, { handlers: { download: downloadStage } });
  assert.equal(deletes(sid), 1);
  assert.equal(t.fake.recordings.get(sid)!.deleted, true);
  assert.deepEqual(await carrierColumns(id), { due: true, deleted: true, processing_state: 'processed' });
  const { rows } = await t.h.db.query<{ claimed: Date | null }>(
    'SELECT provider_recording_delete_claimed_until AS claimed FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(rows[0]!.claimed, null);
  assert.equal((await runRetentionSweep(t.h.deps)).providerRecordingsDeleted, 0);
  assert.equal(deletes(sid), 1);
});

test("marked due and claimed in one statement: another path's live claim is left as it is, and the call is still marked due", async () => {
  const { id, sid } = await dueCall('+14155550967', '+14155550168');
  const until = new Date(t.h.clock.now().getTime() + DELETE_CLAIM_LEASE_MS);
  await t.h.db.query(
    `UPDATE calls SET provider_recording_delete_due = false, provider_recording_delete_claimed_until = $2
      WHERE id = $1`,
    [id, until],
  );
  assert.equal(await deleteCarrierCopy(t.h.deps, id), null);
  assert.equal(deletes(sid), 1, 'nothing asked: the claim is live');
  const { rows } = await t.h.db.query<{ claimed: Date | null }>(
    'SELECT provider_recording_delete_claimed_until AS claimed FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(rows[0]!.claimed?.getTime(), until.getTime(), "the other path's claim stays");
  assert.deepEqual(await carrierColumns(id), { due: true, deleted: false, processing_state: 'processed' });
  // the claim runs out: the sweep (the call is due) deletes it there
  t.h.clock.set(until);
  assert.equal((await runRetentionSweep(t.h.deps)).providerRecordingsDeleted, 1);
  assert.equal(deletes(sid), 2);
  assert.deepEqual(await carrierColumns(id), { due: true, deleted: true, processing_state: 'processed' });
});
