/**
 * A caller who refuses the recording at the consent announcement is never recorded, whatever Twilio
 * reports afterwards (issue 15, item 4): a correctly signed `completed` recording callback for the
 * call (signed with the official `twilio` package, through the fake Twilio) is answered 204 and
 * refused — nothing fetched or stored, no download job, recording-url still 409, no
 * call.recording.ready and a call.completed without a recording — and the recording is deleted at
 * Twilio (retried by the retention sweep while Twilio fails). A download job queued before the
 * refusal was known refuses the call too. Run with the worker role started (the real wiring, fake
 * clock), so a queued download would be run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { enqueueStage } from '../../src/capture/jobs/enqueue.ts';
import { MINUTE } from '../../src/clock.ts';
import { admin } from '../helpers/http.ts';
import { settleDownloads, settleJobs } from '../helpers/jobs.ts';
import { mp3 } from '../helpers/mp3.ts';
import {
  callbacksOf,
  callIdOf,
  callState,
  connectOrg,
  deliveredEvents,
  PUBLIC_BASE_URL,
  restRecordingUrl,
  startTelephony,
  type TelephonyEnv,
  type TelephonyOrg,
  withWorkers,
} from '../helpers/telephony.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TelephonyEnv;
before(async () => {
  t = await startTelephony();
});
after(async () => {
  await t.close();
});

const CONSENT = { enabled: true, text: 'This call is recorded. Press any key to refuse.' };
const REFUSED_DETAIL = 'the caller refused the recording: not fetched, deleted at Twilio';
const NOT_READY = {
  status: 409,
  error: { code: 'RECORDING_NOT_READY', message: 'The recording has not arrived yet; retry later.' },
};

const requestsFor = (recordingSid: string, method: 'GET' | 'DELETE') =>
  t.fake.restRequests.filter((r) => r.method === method && r.path.includes(`/Recordings/${recordingSid}.`));

async function recordingUrl(org: TelephonyOrg, id: string) {
  const r = await restRecordingUrl(t, org, id);
  return { status: r.status, error: (r.body as { error?: unknown }).error };
}

async function refusedRow(id: string) {
  const { rows } = await t.h.db.query<{
    recording_state: string;
    recording_consent: string | null;
    recording_sid: string | null;
    recording_key: string | null;
    provider_recording_url: string | null;
    provider_deleted: boolean;
  }>(
    `SELECT recording_state, recording_consent, recording_sid, recording_key, provider_recording_url,
            provider_recording_deleted_at IS NOT NULL AS provider_deleted
       FROM calls WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

async function downloadJobs(id: string) {
  const { rows } = await t.h.db.query<{ state: string; attempts: number; last_error: string | null }>(
    `SELECT state, attempts, last_error FROM processing_jobs WHERE call_id = $1 AND stage = 'download'`,
    [id],
  );
  return rows;
}

/** An inbound call whose caller presses a key during the announcement; the <Dial> then records nothing. */
async function refusedCall(org: TelephonyOrg, from: string) {
  const call = await t.fake.inboundCall({ from, to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const refused = await call.pressDigits('1');
  assert.equal(refused.status, 200);
  assert.equal(call.verb('Dial').attrs.record, undefined, 'the <Dial> does not record');
  return { call, id };
}

/** A signed `completed` recording callback for the call, about a real MP3 that Twilio holds. */
async function completedRecording(
  call: Awaited<ReturnType<typeof refusedCall>>['call'],
  id: string,
  org: TelephonyOrg,
) {
  const rec = t.fake.addRecording({
    accountSid: org.account.accountSid,
    callSid: call.callSid,
    audio: mp3(4).bytes,
  });
  const reply = await call.recordingCallback(`${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording`, {
    RecordingSid: rec.sid,
    RecordingUrl: rec.url,
    RecordingStatus: 'completed',
    RecordingDuration: '4',
    RecordingChannels: '2',
    RecordingSource: 'DialVerb',
  });
  return { rec, reply };
}

test('a refused call: a signed completed recording callback is answered 204, nothing is fetched or stored, the recording is deleted at Twilio', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550980', consent: CONSENT });
  const { call, id } = await refusedCall(org, '+14155550181');
  await withWorkers(t, async () => {
    const { rec, reply } = await completedRecording(call, id, org);
    assert.equal(reply.status, 204);
    assert.equal(reply.body, '');
    // Deleted at Twilio before the answer, once — the retention sweep, ticking every 5 ms here, may
    // read the refused call after the callback's commit, but the deletion is claimed under the call's
    // row lock (deleteRecordingAtProvider): whoever comes second finds it deleted. Never fetched.
    assert.equal(requestsFor(rec.sid, 'DELETE').length, 1);
    assert.equal(t.fake.recordings.get(rec.sid)!.deleted, true);
    const recordingCallbacks = async () => (await callbacksOf(t, id)).filter((c) => c.kind === 'recording');
    assert.deepEqual(await recordingCallbacks(), [
      {
        dedupe_key: `recording:${rec.sid}:completed`,
        kind: 'recording',
        outcome: 'ignored',
        detail: REFUSED_DETAIL,
      },
    ]);

    // Twilio repeating the callback: the same answer, nothing more.
    const again = await call.recordingCallback(`${PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording`, {
      RecordingSid: rec.sid,
      RecordingUrl: rec.url,
      RecordingStatus: 'completed',
      RecordingChannels: '2',
    });
    assert.equal(again.status, 204);
    assert.equal(requestsFor(rec.sid, 'DELETE').length, 1, 'already deleted at Twilio: not asked again');
    assert.equal((await recordingCallbacks()).length, 1);

    // No download job, however long the workers run.
    t.h.clock.advance(30 * MINUTE);
    await settleDownloads(t.h.deps);
    assert.deepEqual(await downloadJobs(id), []);
    assert.equal(requestsFor(rec.sid, 'GET').length, 0, 'the recording is never fetched');
    assert.deepEqual(await refusedRow(id), {
      recording_state: 'refused',
      recording_consent: 'refused',
      recording_sid: rec.sid,
      recording_key: null,
      provider_recording_url: null,
      provider_deleted: true,
    });
    assert.deepEqual(await recordingUrl(org, id), NOT_READY);
  });

  // The call ends and is transcribed (the workers stopped): it completes without a recording.
  assert.equal((await call.hangup()).status, 204);
  const posted = await admin(t.h, 'POST', `/calls/${id}/transcript`, {
    text: 'Agent: Acme Plumbing.\nCaller: My boiler is leaking, please call me back.',
    language: 'en',
  });
  assert.equal(posted.statusCode, 202, posted.body);
  await settleJobs(t.h.deps);
  const events = await deliveredEvents(t, org);
  assert.deepEqual(
    events
      .map((e) => e.event_type)
      .filter((type) => type !== 'call.followup_email.drafted')
      .sort(),
    ['call.completed', 'call.transcribed'],
    'no call.recording.ready',
  );
  const completed = events.find((e) => e.event_type === 'call.completed')!.data as Record<string, unknown>;
  assert.equal(completed.recording_url, null);
  assert.equal(completed.duration, 0);

  // An operator upload for the call is refused too: the caller said no.
  const put = await t.h.operator.inject({
    method: 'PUT',
    url: `/admin/v1/calls/${id}/recording`,
    headers: { authorization: `Bearer ${t.h.deps.adminToken}`, 'content-type': 'audio/mpeg' },
    payload: mp3(2).bytes,
  });
  assert.equal(put.statusCode, 409, put.body);
  assert.deepEqual(put.json().error, {
    code: 'CONFLICT',
    message: 'The caller refused the recording at the consent announcement; its audio must not be stored.',
  });
  assert.equal((await callState(t, id)).has_blob, false);
  assert.deepEqual(await recordingUrl(org, id), NOT_READY);
});

test('a caller who hangs up during the announcement: a recording callback is refused the same way (voicemail number)', async () => {
  const org = await connectOrg(t, { consent: CONSENT });
  await withWorkers(t, async () => {
    const call = await t.fake.inboundCall({ from: '+14155550182', to: org.number, account: org.account });
    const id = await callIdOf(t, call.callSid);
    await call.hangup(2);
    const { rec, reply } = await completedRecording(call, id, org);
    assert.equal(reply.status, 204);
    assert.equal(requestsFor(rec.sid, 'DELETE').length, 1);
    t.h.clock.advance(30 * MINUTE);
    await settleDownloads(t.h.deps);
    assert.equal(requestsFor(rec.sid, 'GET').length, 0);
    assert.deepEqual(await downloadJobs(id), []);
    const row = await refusedRow(id);
    assert.equal(row.recording_state, 'refused');
    assert.equal(row.recording_consent, 'announced');
    assert.equal(row.recording_key, null);
    assert.deepEqual(await recordingUrl(org, id), NOT_READY);
    assert.deepEqual(await deliveredEvents(t, org), []);
  });
});

test('Twilio failing the deletion: the callback is still 204 and stores nothing; the retention sweep deletes the recording at Twilio within a minute', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550979', consent: CONSENT });
  await withWorkers(t, async () => {
    const { call, id } = await refusedCall(org, '+14155550183');
    t.fake.failRecordingDeletes = 500;
    let rec: Awaited<ReturnType<typeof completedRecording>>['rec'];
    try {
      const sent = await completedRecording(call, id, org);
      rec = sent.rec;
      assert.equal(sent.reply.status, 204);
      assert.equal(requestsFor(rec.sid, 'DELETE').length >= 1, true, 'Twilio was asked');
      assert.equal(t.fake.recordings.get(rec.sid)!.deleted, false);
      assert.equal((await refusedRow(id)).provider_deleted, false);
    } finally {
      t.fake.failRecordingDeletes = null;
    }
    t.h.clock.advance(MINUTE);
    await waitFor(
      async () => (await refusedRow(id)).provider_deleted,
      'the retention sweep to delete the refused recording at Twilio',
      10_000,
    );
    assert.equal(t.fake.recordings.get(rec.sid)!.deleted, true);
    assert.equal(requestsFor(rec.sid, 'GET').length, 0);
    assert.deepEqual(await downloadJobs(id), []);
    const row = await refusedRow(id);
    assert.equal(row.recording_state, 'refused');
    assert.equal(row.recording_key, null);
    assert.deepEqual(await recordingUrl(org, id), NOT_READY);
  });
});

test('a download job queued before the refusal was known refuses the call: cancelled with its reason, nothing fetched, the recording deleted at Twilio', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550978', consent: CONSENT });
  const { call, id } = await refusedCall(org, '+14155550184');
  const rec = t.fake.addRecording({
    accountSid: org.account.accountSid,
    callSid: call.callSid,
    audio: mp3(4).bytes,
  });
  // As a recording callback applied by an earlier version of the service left it.
  await t.h.db.transaction(async (tx) => {
    await tx.query('UPDATE calls SET recording_sid = $2, provider_recording_url = $3 WHERE id = $1', [
      id,
      rec.sid,
      rec.url,
    ]);
    await enqueueStage(tx, {
      organizationId: org.orgId,
      callId: id,
      stage: 'download',
      now: t.h.clock.now(),
    });
  });
  await withWorkers(t, async () => {
    await waitFor(
      async () => (await downloadJobs(id))[0]?.state !== 'pending',
      'the worker to run the download job',
      10_000,
    );
  });
  assert.equal(requestsFor(rec.sid, 'GET').length, 0, 'the recording is never fetched');
  assert.equal(t.fake.recordings.get(rec.sid)!.deleted, true);
  const processing = await admin(t.h, 'GET', `/calls/${id}/processing`);
  assert.equal(processing.statusCode, 200);
  const stage = (processing.json() as { stages: Record<string, unknown>[] }).stages.find(
    (s) => s.stage === 'download',
  )!;
  assert.equal(stage.state, 'cancelled');
  assert.equal(stage.attempts, 1);
  assert.equal(
    stage.last_error,
    'the caller refused the recording at the consent announcement: not downloaded; the recording is deleted at Twilio',
  );
  const row = await refusedRow(id);
  assert.equal(row.recording_state, 'refused');
  assert.equal(row.recording_key, null);
  assert.equal(row.provider_deleted, true);
  assert.deepEqual(await recordingUrl(org, id), NOT_READY);
  assert.deepEqual(await deliveredEvents(t, org), []);
});
