/**
 * The download a Twilio recording callback queues is inserted already leased to the public
 * listener's runner (JobRunner.offer, as the chain leases a run's next stage), and the route's
 * soon() runs it without a claim. A process that dies before running it leaves it to lease expiry
 * (30 s); a runner that is stopping offers no lease (the job is queued for any runner, as before).
 * Real wiring: the fake Twilio, the public listener on a socket, a fake clock.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { createJobRunner, LEASE_MS } from '../../src/capture/jobs/runner.ts';
import { findAccountBySid } from '../../src/capture/telephony/accounts.ts';
import { carrierDownloadStage } from '../../src/capture/telephony/download-stage.ts';
import { recordingStatusCallback } from '../../src/capture/telephony/twilio/recording.ts';
import type { Deps } from '../../src/deps.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { STALLED } from '../helpers/jobs.ts';
import { mp3 } from '../helpers/mp3.ts';
import { statementLog } from '../helpers/statement-log.ts';
import {
  callIdOf,
  callState,
  connectOrg,
  startTelephony,
  type TelephonyEnv,
  type TelephonyOrg,
} from '../helpers/telephony.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TelephonyEnv;
before(async () => {
  t = await startTelephony();
});
after(async () => {
  await t.close();
});

interface DownloadJob {
  state: string;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  next_attempt_at: Date;
}
async function downloadJob(id: string): Promise<DownloadJob | undefined> {
  const { rows } = await t.h.db.query<DownloadJob>(
    `SELECT state, attempts, lease_owner, lease_expires_at, next_attempt_at
       FROM processing_jobs WHERE call_id = $1 AND stage = 'download'`,
    [id],
  );
  return rows[0];
}

const fetches = (recordingSid: string) =>
  t.fake.restRequests.filter((r) => r.method === 'GET' && r.path.endsWith(`/Recordings/${recordingSid}.mp3`))
    .length;

/** An inbound call rung through to its <Dial>; its recording (on the fake) not yet announced. */
async function dialledCall(org: TelephonyOrg, from: string) {
  const call = await t.fake.inboundCall({ from, to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const rec = t.fake.addRecording({
    accountSid: org.account.accountSid,
    callSid: call.callSid,
    audio: mp3(3).bytes,
  });
  const params = {
    AccountSid: org.account.accountSid,
    CallSid: call.callSid,
    RecordingSid: rec.sid,
    RecordingUrl: rec.url,
    RecordingStatus: 'completed',
    RecordingDuration: '3',
    RecordingChannels: '2',
    RecordingSource: 'DialVerb',
  };
  return { call, id, rec, params };
}

/** A worker's runner of downloads alone (what a stored recording queues next is left as it is). */
const downloadsOnly = () =>
  createJobRunner(t.h.deps, { handlers: { download: carrierDownloadStage }, random: () => 0.5 });

test('the recording callback queues its download leased to the listener, which runs it without a claim', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550981' });
  const { call, id, rec, params } = await dialledCall(org, '+14155550281');
  // a second public listener on the same database, every statement of its own recorded
  const { db, take } = statementLog(t.h.db, 60);
  const app = await buildPublicApp({ ...t.h.deps, db });
  const origin = t.fake.serviceOrigin;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    t.fake.serviceOrigin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const reply = await call.recordingCallback(
      `${t.h.config.PUBLIC_BASE_URL}/telephony/twilio/calls/${id}/recording`,
      params,
    );
    assert.equal(reply.status, 204);
    await waitFor(
      async () => (await downloadJob(id))?.state === 'succeeded',
      'the download to succeed',
      10_000,
    );
  } finally {
    t.fake.serviceOrigin = origin;
    await app.close();
  }
  const job = (await downloadJob(id))!;
  assert.deepEqual([job.state, job.attempts, job.lease_owner], ['succeeded', 1, null]);
  assert.equal((await callState(t, id)).recording_state, 'available');
  assert.equal(fetches(rec.sid), 1);
  // The callback's transaction (the call locked and the callback claimed in one statement, the
  // download inserted leased: no claim after it), the download's
  // read of the call, then the run's one transaction: the call locked, the lease checked and the
  // job ended in one statement, the recording stored and its event; after the commit the carrier's
  // copy (redaction on, no transcription configured: this file is the final copy).
  assert.deepEqual(take(), [
    'SELECT organization_id, provider, auth_token_ciphertext FROM',
    'BEGIN',
    'twilio_lock_claim_id_v1',
    'capture_enqueue_leased_v1_recording_callback_v1',
    'twilio_download_call_v3',
    'BEGIN',
    'capture_lock_end_run_v3',
    'capture_recording_stored_v2',
    'outbox_emit_event_v2',
    'carrier_copy_delete_due_claim_v1',
    'UPDATE calls SET provider_recording_deleted_at = $3, provide',
  ]);
});

test('a process that dies before running the download it leased leaves it to lease expiry; then any runner runs it', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550982' });
  const { id, rec, params } = await dialledCall(org, '+14155550282');
  const account = (await findAccountBySid(t.h.deps, org.account.accountSid))!;
  // the listener's runner: it leases the download to itself, and its process dies before soon() runs it
  const listener = createJobRunner(t.h.deps, {
    handlers: { download: carrierDownloadStage },
    claimStages: ['download'],
    owner: 'dead-listener',
  });
  const offer = listener.offer(id);
  assert.deepEqual(await recordingStatusCallback(t.h.deps, account, id, params, { chain: offer.chain }), {
    download: true,
  });
  const leased = offer.job();
  assert.ok(leased, 'the enqueue leased the download to the listener');
  assert.deepEqual([leased.stage, leased.callId, leased.attempts], ['download', id, 1]);
  const now = t.h.clock.now().getTime();
  const job = (await downloadJob(id))!;
  assert.deepEqual(
    [
      job.state,
      job.attempts,
      job.lease_owner,
      new Date(job.lease_expires_at!).getTime() - now,
      new Date(job.next_attempt_at).getTime() - now,
    ],
    ['pending', 1, 'dead-listener', LEASE_MS, LEASE_MS],
    'the row a claim leaves: due again when the lease expires',
  );
  const worker = downloadsOnly();
  assert.equal(await worker.drain(), 0, 'held under its lease');
  assert.equal(fetches(rec.sid), 0);
  t.h.clock.advance(LEASE_MS - 1);
  assert.equal(await worker.drain(), 0);
  t.h.clock.advance(1);
  assert.equal(await worker.drain(), 1, 'claimed once the lease expired');
  const done = (await downloadJob(id))!;
  assert.deepEqual([done.state, done.attempts], ['succeeded', 2]);
  assert.equal((await callState(t, id)).recording_state, 'available');
  assert.equal(fetches(rec.sid), 1);
});

test('a stopping runner takes no lease: the download is queued for any runner, due at once, as before', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550983' });
  const { id, rec, params } = await dialledCall(org, '+14155550283');
  const account = (await findAccountBySid(t.h.deps, org.account.accountSid))!;
  const listener = createJobRunner(t.h.deps, {
    handlers: { download: carrierDownloadStage },
    claimStages: ['download'],
  });
  await listener.stop();
  const offer = listener.offer(id);
  assert.deepEqual(await recordingStatusCallback(t.h.deps, account, id, params, { chain: offer.chain }), {
    download: true,
  });
  assert.equal(offer.job(), undefined);
  listener.soon(id, offer.job());
  const job = (await downloadJob(id))!;
  assert.deepEqual(
    [job.state, job.attempts, job.lease_owner, new Date(job.next_attempt_at).getTime()],
    ['pending', 0, null, t.h.clock.now().getTime()],
  );
  assert.equal(await downloadsOnly().drain(), 1);
  assert.equal((await callState(t, id)).recording_state, 'available');
  assert.equal(fetches(rec.sid), 1);
});

/**
 * A call whose recording the fake serves in two halves, the first time held between them until
 * `release()` (`held` resolves once the first half is out); later fetches are served whole.
 */
async function heldDownload(org: TelephonyOrg, from: string) {
  const call = await t.fake.inboundCall({ from, to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const bytes = mp3(3).bytes;
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let onHeld!: () => void;
  const held = new Promise<void>((r) => {
    onHeld = r;
  });
  let served = 0;
  const rec = t.fake.addRecording({
    accountSid: org.account.accountSid,
    callSid: call.callSid,
    audio: () =>
      Readable.from(
        served++ > 0
          ? [bytes]
          : (async function* () {
              yield bytes.subarray(0, bytes.length / 2);
              onHeld();
              await gate;
              yield bytes.subarray(bytes.length / 2);
            })(),
      ),
  });
  const params = {
    AccountSid: org.account.accountSid,
    CallSid: call.callSid,
    RecordingSid: rec.sid,
    RecordingUrl: rec.url,
    RecordingStatus: 'completed',
    RecordingDuration: '3',
    RecordingChannels: '2',
    RecordingSource: 'DialVerb',
  };
  const account = (await findAccountBySid(t.h.deps, org.account.accountSid))!;
  return { id, rec, params, account, held, release };
}

/** The files under a call's recordings folder (stored or partial): the file store's root is DATA_DIR/recordings. */
const filesOf = (orgId: string, id: string) =>
  readdir(join(t.h.dataDir, 'recordings', 'recordings', orgId, id)).catch(() => [] as string[]);

/** A listener's runner whose blob deletions are announced (`deleted`): the end of a run that wrote nothing. */
function listenerRunner(owner: string, tickMs?: number) {
  const deleted: string[] = [];
  let onDelete: () => void = () => {};
  const store: Deps['store'] = Object.create(t.h.deps.store);
  store.delete = async (key) => {
    await t.h.deps.store.delete(key);
    deleted.push(key);
    onDelete();
  };
  const runner = createJobRunner(
    { ...t.h.deps, store },
    { handlers: { download: carrierDownloadStage }, claimStages: ['download'], owner, tickMs },
  );
  const nextDelete = () =>
    new Promise<void>((r) => {
      onDelete = r;
    });
  return { runner, deleted, nextDelete };
}

test('a leased download whose lease was lost while it fetched stores nothing: its blob is deleted, the other run stands', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550984' });
  const { id, rec, params, account, held, release } = await heldDownload(org, '+14155550284');
  // the listener's heartbeat stalled (a process cut off for longer than the lease)
  const stalled = listenerRunner('stalled-listener', STALLED);
  const offer = stalled.runner.offer(id);
  await recordingStatusCallback(t.h.deps, account, id, params, { chain: offer.chain });
  assert.ok(offer.job());
  const deletion = stalled.nextDelete();
  stalled.runner.soon(id, offer.job());
  await held;
  // its lease runs out; a worker takes the job and stores the recording
  t.h.clock.advance(LEASE_MS);
  assert.equal(await downloadsOnly().drain(), 1);
  const stored = await t.h.db.query<{ recording_key: string; recording_state: string }>(
    'SELECT recording_key, recording_state FROM calls WHERE id = $1',
    [id],
  );
  const { recording_key: key } = stored.rows[0]!;
  assert.equal(stored.rows[0]!.recording_state, 'available');
  const done = (await downloadJob(id))!;
  assert.deepEqual([done.state, done.attempts], ['succeeded', 2]);
  // the stalled run ends its fetch: its write finds the lease gone and writes nothing
  release();
  await deletion;
  await stalled.runner.stop();
  assert.equal(stalled.deleted.length, 1);
  assert.notEqual(stalled.deleted[0], key, 'its own blob, not the stored one');
  const after = await t.h.db.query<{ recording_key: string }>(
    'SELECT recording_key FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(after.rows[0]!.recording_key, key, 'the recording the worker stored stands');
  assert.deepEqual(await filesOf(org.orgId, id), [key.split('/').pop()]);
  const again = (await downloadJob(id))!;
  assert.deepEqual([again.state, again.attempts], ['succeeded', 2]);
  const events = await t.h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events WHERE call_id = $1 AND event_type = 'call.recording.ready'`,
    [id],
  );
  assert.equal(events.rows[0]!.n, 1);
  assert.equal(fetches(rec.sid), 2);
});

test('a call that stopped accepting audio while its download was fetched: the run is cancelled with the reason, nothing stored, its blob deleted', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550985' });
  const { id, params, account, held, release } = await heldDownload(org, '+14155550285');
  const listener = listenerRunner('listener');
  const offer = listener.runner.offer(id);
  await recordingStatusCallback(t.h.deps, account, id, params, { chain: offer.chain });
  const deletion = listener.nextDelete();
  listener.runner.soon(id, offer.job());
  await held;
  await t.h.db.query(`UPDATE calls SET recording_mode = 'no_recording' WHERE id = $1`, [id]);
  release();
  await deletion;
  await listener.runner.stop();
  const job = await t.h.db.query<{ state: string; attempts: number; last_error: string | null }>(
    `SELECT state, attempts, last_error FROM processing_jobs WHERE call_id = $1 AND stage = 'download'`,
    [id],
  );
  assert.deepEqual(job.rows[0], {
    state: 'cancelled',
    attempts: 1,
    last_error: 'not stored: The call runs in no_recording mode; its audio must not be stored.',
  });
  const s = await callState(t, id);
  assert.deepEqual([s.recording_state, s.has_blob], ['pending', false]);
  assert.deepEqual(await filesOf(org.orgId, id), []);
  const events = await t.h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events WHERE call_id = $1 AND event_type = 'call.recording.ready'`,
    [id],
  );
  assert.equal(events.rows[0]!.n, 0);
});
