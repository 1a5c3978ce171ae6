/**
 * The download a Twilio recording callback queues is inserted already leased to the public
 * listener's runner (JobRunner.offer, as the chain leases a run's next stage), and the route's
 * soon() runs it without a claim. A process that dies before running it leaves it to lease expiry
 * (30 s); a runner that is stopping offers no lease (the job is queued for any runner, as before).
 * Real wiring: the fake Twilio, the public listener on a socket, a fake clock.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createJobRunner, LEASE_MS } from '../../src/capture/jobs/runner.ts';
import { findAccountBySid } from '../../src/capture/telephony/accounts.ts';
import { carrierDownloadStage } from '../../src/capture/telephony/download-stage.ts';
import { recordingStatusCallback } from '../../src/capture/telephony/twilio/recording.ts';
import type { Db, Queryable, QueryOptions } from '../../src/db/types.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { mp3 } from '../helpers/mp3.ts';
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

/** Every statement a Db is sent (its prepared name, else its first words), BEGIN for each transaction. */
function recording(db: Db): { db: Db; seen: string[] } {
  const seen: string[] = [];
  const label = (sql: string, options?: QueryOptions) =>
    options?.name ?? sql.replace(/\s+/g, ' ').trim().slice(0, 60);
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params, options) => {
      seen.push(label(sql, options));
      return q.query(sql, params, options);
    },
  });
  return {
    seen,
    db: {
      ...db,
      kind: db.kind,
      query: wrap(db).query,
      transaction: (fn) => {
        seen.push('BEGIN');
        return db.transaction((tx) => fn(wrap(tx)));
      },
      exec: (sql) => db.exec(sql),
      listen: (c, f, o) => db.listen(c, f, o),
      close: () => db.close(),
    },
  };
}

test('the recording callback queues its download leased to the listener, which runs it without a claim', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550981' });
  const { call, id, rec, params } = await dialledCall(org, '+14155550281');
  // a second public listener on the same database, every statement of its own recorded
  const { db, seen } = recording(t.h.db);
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
  assert.equal(
    seen.filter((s) => /processing_jobs j WHERE j\.state IN/.test(s) || s.startsWith('WITH due AS')).length,
    0,
    `no claim: ${seen.join(' | ')}`,
  );
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
