/**
 * The Twilio recording download has one retry mechanism, the durable download job (issue 15,
 * item 5), run through the real wiring — the public listener runs the job right after the recording
 * callback, the worker role (fake clock) runs its retries:
 * - a file that cannot become a recording by being fetched again (not an MP3; larger than the
 *   limit) is fetched exactly once and the stage fails at once, its reason shown by
 *   GET /admin/v1/calls/{id}/processing;
 * - a transient failure (Twilio answering 500) is retried by the job after its backoff on the
 *   clock, and the call's recording then arrives.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { HOUR, MINUTE } from '../../src/clock.ts';
import { MAX_RECORDING_BYTES } from '../../src/recordings/measure.ts';
import { admin } from '../helpers/http.ts';
import { settleDownloads } from '../helpers/jobs.ts';
import { mp3 } from '../helpers/mp3.ts';
import {
  callIdOf,
  callState,
  connectOrg,
  deliveredEvents,
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

interface DownloadJob {
  state: string;
  attempts: number;
  last_error_kind: string | null;
  leased: boolean;
}

async function downloadJob(id: string): Promise<DownloadJob | undefined> {
  const { rows } = await t.h.db.query<DownloadJob>(
    `SELECT state, attempts, last_error_kind, lease_owner IS NOT NULL AS leased
       FROM processing_jobs WHERE call_id = $1 AND stage = 'download'`,
    [id],
  );
  return rows[0];
}

/** GET /admin/v1/calls/{id}/processing: the call's status and its download stage. */
async function processing(id: string) {
  const res = await admin(t.h, 'GET', `/calls/${id}/processing`);
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { status: string; stages: Record<string, unknown>[] };
  return { status: body.status, download: body.stages.find((s) => s.stage === 'download')! };
}

const fetches = (recordingSid: string) =>
  t.fake.restRequests.filter((r) => r.method === 'GET' && r.path.endsWith(`/Recordings/${recordingSid}.mp3`))
    .length;

/** Files left under the call's recordings folder (partial or stored). */
/** The call's blobs in the store (keys `recordings/<org>/<call>/…` under the store's own `recordings/` folder). */
async function filesOf(org: TelephonyOrg, id: string): Promise<string[]> {
  return readdir(join(t.h.dataDir, 'recordings', 'recordings', org.orgId, id)).catch(() => []);
}

/**
 * A dialled call whose recording callback names `rec` (a recording added to the fake by the test);
 * answers the call id once the download job reached a final state.
 */
async function callWithRecording(org: TelephonyOrg, from: string, rec: { url: string }) {
  const call = await t.fake.inboundCall({ from, to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const dial = await call.answerDial({ recordingUrl: rec.url });
  assert.equal(dial.recordingReply?.status, 204);
  return { call, id };
}

const finalState = async (id: string) => {
  const job = await downloadJob(id);
  return job !== undefined && job.state !== 'pending';
};

test('a recording that is not an MP3 is fetched once: the download stage fails at once with its reason', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550970' });
  const rec = t.fake.addRecording({
    accountSid: org.account.accountSid,
    callSid: 'CA-not-yet-known',
    audio: Buffer.from('<html><body><h1>503 Service Unavailable</h1></body></html>'),
    contentType: 'text/html',
  });
  await withWorkers(t, async () => {
    const { id } = await callWithRecording(org, '+14155550191', rec);
    await waitFor(() => finalState(id), 'the download stage to finish', 10_000);
    const p = await processing(id);
    assert.equal(p.status, 'failed');
    assert.equal(p.download.state, 'failed');
    assert.equal(p.download.attempts, 1);
    assert.equal(p.download.last_error_kind, 'fatal');
    assert.equal(
      p.download.last_error,
      'twilio: the recording Twilio served is not an MP3 file (no MPEG audio frames); not stored and not fetched again',
    );
    assert.equal(p.download.next_attempt_at, null);
    // Nothing is due again, however long the workers run.
    t.h.clock.advance(6 * HOUR);
    await settleDownloads(t.h.deps);
    assert.equal(fetches(rec.sid), 1, 'fetched exactly once');
    assert.equal((await downloadJob(id))?.attempts, 1);
    const s = await callState(t, id);
    assert.equal(s.recording_state, 'pending');
    assert.equal(s.has_blob, false);
    assert.deepEqual(await filesOf(org, id), [], 'the fetched bytes are not kept');
    assert.equal((await restRecordingUrl(t, org, id)).status, 409);
  });
  assert.deepEqual(await deliveredEvents(t, org), []);
});

test('a recording over the size limit is refused from its Content-Length: fetched once, never read whole, the stage fails at once', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550971' });
  const size = MAX_RECORDING_BYTES + 1;
  let produced = 0;
  const chunk = Buffer.alloc(64 * 1024);
  const rec = t.fake.addRecording({
    accountSid: org.account.accountSid,
    callSid: 'CA-not-yet-known',
    contentLength: size,
    // produced only as the service reads it
    audio: () =>
      Readable.from(
        (function* () {
          while (produced < size) {
            const n = Math.min(chunk.length, size - produced);
            produced += n;
            yield n === chunk.length ? chunk : chunk.subarray(0, n);
          }
        })(),
      ),
  });
  await withWorkers(t, async () => {
    const { id } = await callWithRecording(org, '+14155550192', rec);
    await waitFor(() => finalState(id), 'the download stage to finish', 10_000);
    const p = await processing(id);
    assert.equal(p.status, 'failed');
    assert.equal(p.download.state, 'failed');
    assert.equal(p.download.attempts, 1);
    assert.equal(p.download.last_error_kind, 'too_large');
    assert.equal(
      p.download.last_error,
      `twilio: the recording is ${size} bytes (Content-Length), over the limit of ${MAX_RECORDING_BYTES} bytes; not stored and not fetched again`,
    );
    t.h.clock.advance(6 * HOUR);
    await settleDownloads(t.h.deps);
    assert.equal(fetches(rec.sid), 1, 'fetched exactly once');
    console.log(`[download-failures] bytes the fake produced before the service hung up: ${produced}`);
    assert.ok(produced < size / 2, `the body is not read (${produced} of ${size} bytes produced)`);
    const s = await callState(t, id);
    assert.equal(s.recording_state, 'pending');
    assert.equal(s.has_blob, false);
    assert.deepEqual(await filesOf(org, id), []);
  });
});

test('Twilio answering 500 is retried by the durable job after its backoff, and the recording then arrives', async () => {
  const org = await connectOrg(t, { ringTo: '+14155550972' });
  const audio = mp3(3);
  const rec = t.fake.addRecording({
    accountSid: org.account.accountSid,
    callSid: 'CA-not-yet-known',
    audio: audio.bytes,
  });
  const sid = rec.sid;
  await withWorkers(t, async () => {
    t.fake.failRecordingDownloads = 500;
    let id = '';
    try {
      ({ id } = await callWithRecording(org, '+14155550193', rec));
      await waitFor(
        async () => {
          const job = await downloadJob(id);
          return job !== undefined && job.attempts === 1 && !job.leased;
        },
        'the first download attempt to fail',
        10_000,
      );
    } finally {
      t.fake.failRecordingDownloads = null;
    }
    const p = await processing(id);
    assert.equal(p.status, 'processing');
    assert.equal(p.download.state, 'pending');
    assert.equal(p.download.attempts, 1);
    assert.equal(p.download.last_error_kind, 'retryable');
    assert.equal(p.download.last_error, 'Twilio answered 500: Internal Server Error');
    const due = Date.parse(p.download.next_attempt_at as string) - t.h.clock.now().getTime();
    console.log(`[download-failures] the retry is due in ${due} ms`);
    assert.ok(due >= 7_500 && due <= 15_000, `the first retry waits half to all of 15 s (${due} ms)`);
    // Only the durable job retries: nothing is fetched again before its backoff has passed.
    await settleDownloads(t.h.deps);
    assert.equal(fetches(sid), 1);

    t.h.clock.advance(MINUTE);
    // the job's outcome is written after the recording's own transaction: wait for the job
    await waitFor(async () => (await downloadJob(id))?.state === 'succeeded', 'the retry to succeed', 10_000);
    assert.equal((await callState(t, id)).recording_state, 'available');
    assert.equal(fetches(sid), 2, 'one failed fetch, one that succeeded');
    // the one fetch that succeeded left one blob (and filesOf looks where blobs are: its [] above can fail)
    assert.equal((await filesOf(org, id)).length, 1);
    const done = await processing(id);
    assert.equal(done.download.state, 'succeeded');
    assert.equal(done.download.attempts, 2);
    assert.equal(done.download.last_error, null);
    assert.equal((await restRecordingUrl(t, org, id)).status, 200);
  });
  const events = await deliveredEvents(t, org);
  assert.deepEqual(
    events.map((e) => e.event_type),
    ['call.recording.ready'],
  );
});
