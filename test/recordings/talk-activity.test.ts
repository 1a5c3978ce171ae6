import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { splitStereoMp3 } from '../../src/capture/providers/wav.ts';
import { talkMetrics } from '../../src/domain/talk-metrics.ts';
import { takeActivity } from '../../src/recordings/decoded-activity.ts';
import { fileBlobStore } from '../../src/recordings/store.ts';
import { channelActivity, FRAME_SECONDS } from '../../src/recordings/talk-activity.ts';
import { stereoSpansMp3 } from '../helpers/stereo-mp3.ts';

const dir = mkdtempSync(join(tmpdir(), 'talk-'));
const store = fileBlobStore(dir);
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The documented resolution (docs/capture.md "Talk metrics"): each span edge lands within one
 * 20 ms frame, plus the MP3 codec's delay of about one frame; so a duration is exact within two frames.
 */
const TOLERANCE = 2 * FRAME_SECONDS + 1e-9;
const near = (actual: number, expected: number, what: string) =>
  assert.ok(
    Math.abs(actual - expected) <= TOLERANCE,
    `${what}: ${actual} s, expected ${expected} s ± 2 frames`,
  );

test('a synthetic inbound call with known talk spans gives the talk metrics within two frames', async () => {
  // inbound: the customer on channel 0, the agent on channel 1 (domain/recording-channels.ts).
  // customer 1–4 s and 4.2–6 s (a 0.2 s pause between words: bridged), agent 6.5–8 s and 10–11 s.
  const mp3 = stereoSpansMp3({
    seconds: 12,
    left: [
      [1, 4],
      [4.2, 6],
    ],
    right: [
      [6.5, 8],
      [10, 11],
    ],
  });
  await store.put('inbound.mp3', Readable.from([mp3]));
  const a = await channelActivity(store, 'inbound.mp3');
  assert.ok(a);
  assert.equal(a.frameSeconds, 0.02);
  const m = talkMetrics(a.channels[1], a.channels[0], a.frameSeconds);
  near(m.customer_seconds, 5, 'customer talk');
  near(m.agent_seconds, 2.5, 'agent talk');
  assert.equal(m.overlap_seconds, 0);
  near(m.silence_seconds, 4.5, 'silence');
  // the encoder pads the end to a whole MP3 frame (1152 samples at 16 kHz): heard as silence, not talk
  assert.ok(
    m.duration_seconds >= 12 && m.duration_seconds <= 12 + 1152 / 16000 + FRAME_SECONDS,
    `${m.duration_seconds}`,
  );
  assert.equal(m.longest_monologue?.speaker, 'customer');
  near(m.longest_monologue?.seconds ?? 0, 5, 'longest monologue');
  near(m.longest_monologue?.start ?? 0, 1, 'longest monologue start');
});

test('overlapping talk is counted for both sides and as overlap', async () => {
  const mp3 = stereoSpansMp3({ seconds: 6, left: [[0.5, 3]], right: [[2, 5]] });
  await store.put('overlap.mp3', Readable.from([mp3]));
  const a = await channelActivity(store, 'overlap.mp3');
  assert.ok(a);
  const m = talkMetrics(a.channels[0], a.channels[1], a.frameSeconds);
  near(m.agent_seconds, 2.5, 'channel 0 talk');
  near(m.customer_seconds, 3, 'channel 1 talk');
  near(m.overlap_seconds, 1, 'overlap');
});

// Decode once (src/recordings/decoded-activity.ts): the transcription's split measures the activity
// as it decodes; channelActivity then takes it instead of decoding again — the very same flags.
const LIMITS = {
  maxWindowSeconds: 600,
  maxWindowBytes: 25 * 1024 * 1024,
  maxSeconds: 3600,
  memoryBytes: 1 << 20,
};

test("the split's activity is the one a decode of its own measures, and channelActivity takes it once", async () => {
  const mp3 = stereoSpansMp3({ seconds: 7, left: [[0.5, 3]], right: [[2, 5.5]] });
  await store.put('split.mp3', Readable.from([mp3]));
  // another store over the same files: nothing the split measured through `store` is seen by it
  const fresh = await channelActivity(fileBlobStore(dir), 'split.mp3');
  assert.ok(fresh);
  const out = mkdtempSync(join(tmpdir(), 'talk-split-'));
  try {
    await splitStereoMp3('test', store.read('split.mp3'), out, LIMITS);
    const measured = await takeActivity(store, 'split.mp3');
    assert.deepEqual(measured, fresh);
    assert.equal(await takeActivity(store, 'split.mp3'), null, 'taken once');
    // through channelActivity: the same flags
    await splitStereoMp3('test', store.read('split.mp3'), out, LIMITS);
    assert.deepEqual(await channelActivity(store, 'split.mp3'), fresh);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('a recording written again after the split (silenced) is measured anew', async () => {
  const mp3 = stereoSpansMp3({ seconds: 4, left: [[0.5, 3]], right: [[1, 2]] });
  await store.put('rewritten.mp3', Readable.from([mp3]));
  const out = mkdtempSync(join(tmpdir(), 'talk-split-'));
  try {
    await splitStereoMp3('test', store.read('rewritten.mp3'), out, LIMITS);
    await store.put('rewritten.mp3', Readable.from([mp3]));
    assert.equal(await takeActivity(store, 'rewritten.mp3'), null, 'forgotten on put');
    await splitStereoMp3('test', store.read('rewritten.mp3'), out, LIMITS);
    await store.delete('rewritten.mp3');
    assert.equal(await takeActivity(store, 'rewritten.mp3'), null, 'forgotten on delete');
    // written behind the store's back (another process): its size no longer matches
    await store.put('rewritten.mp3', Readable.from([mp3]));
    await splitStereoMp3('test', store.read('rewritten.mp3'), out, LIMITS);
    appendFileSync(join(dir, 'rewritten.mp3'), Buffer.alloc(10));
    assert.equal(await takeActivity(store, 'rewritten.mp3'), null, 'another size');
    // a ranged read is not the whole blob: nothing is remembered
    await store.put('rewritten.mp3', Readable.from([mp3]));
    await splitStereoMp3('test', store.read('rewritten.mp3', { start: 0, end: mp3.length - 1 }), out, LIMITS);
    assert.equal(await takeActivity(store, 'rewritten.mp3'), null, 'ranged read');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
