import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { downloadRecording } from '../../src/capture/telephony/twilio/download.ts';
import { until } from '../helpers/listen.ts';
import { durationOf, mp3Frames } from '../helpers/mp3.ts';
import {
  callIdOf,
  callState,
  connectOrg,
  deliveredEvents,
  startTelephony,
  type TelephonyEnv,
} from '../helpers/telephony.ts';

/** The recording download: streamed into storage (never held whole), idempotent. */
let t: TelephonyEnv;
before(async () => {
  t = await startTelephony();
});
after(async () => {
  await t.close();
});

async function partialFiles(dir: string): Promise<number[]> {
  const out: number[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.tmp')) out.push((await stat(p)).size);
    }
  };
  await walk(dir);
  return out;
}

test('the MP3 is streamed into storage: the first half is on disk while Twilio still holds the second', async () => {
  const org = await connectOrg(t);
  const frames = 4000; // 1.67 MB, 104.5 s
  const bytes = mp3Frames(frames);
  const half = bytes.length / 2;
  let sawPartial = false;
  const audio = () =>
    Readable.from(
      (async function* () {
        yield bytes.subarray(0, half);
        // The service must have written (most of) the first half before it gets the rest.
        await until(
          async () =>
            (await partialFiles(join(t.h.dataDir, 'recordings'))).some((n) => n >= half - 128 * 1024),
          'the first half of the recording in a partial file',
          10_000,
        );
        sawPartial = true;
        yield bytes.subarray(half);
      })(),
    );
  const call = await t.fake.inboundCall({ from: '+14155550170', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  await call.recordVoicemail({ recording: audio, duration: 105 });
  await deliveredEvents(t, org);
  assert.equal(sawPartial, true);
  const s = await callState(t, id);
  assert.equal(s.recording_state, 'available');
  assert.equal(s.duration, Math.round(durationOf(frames) * 1000) / 1000);
  const { rows } = await t.h.db.query<{ recording_bytes: number }>(
    'SELECT recording_bytes FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(rows[0]!.recording_bytes, bytes.length);
  // Run again (a job re-run): skipped, nothing fetched.
  const before = t.fake.restRequests.length;
  assert.equal(await downloadRecording(t.h.deps, id), 'skipped');
  assert.equal(t.fake.restRequests.length, before);
});
