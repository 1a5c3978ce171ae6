import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { splitStereoMp3 } from '../../src/capture/providers/wav.ts';
import { talkMetrics } from '../../src/domain/talk-metrics.ts';
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

// Decode once: the transcription's split measures the activity as it decodes and hands it on
// (TranscriptionResult.channelActivity) — the very flags channelActivity's own decode measures.
const LIMITS = {
  maxWindowSeconds: 600,
  maxWindowBytes: 25 * 1024 * 1024,
  maxSeconds: 3600,
  memoryBytes: 1 << 20,
};

test("the split's activity is the one a decode of its own measures", async () => {
  const mp3 = stereoSpansMp3({ seconds: 7, left: [[0.5, 3]], right: [[2, 5.5]] });
  await store.put('split.mp3', Readable.from([mp3]));
  const own = await channelActivity(store, 'split.mp3');
  assert.ok(own);
  assert.ok(own.channels[0].includes(true) && own.channels[1].includes(true));
  const out = mkdtempSync(join(tmpdir(), 'talk-split-'));
  try {
    const split = await splitStereoMp3('test', store.read('split.mp3'), out, LIMITS);
    assert.deepEqual(split.activity, own);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
