/**
 * The audio thread's outputs, byte for byte, as they were before its CPU work (issue 16,
 * docs/benchmarks.md "audiocpu"): splitStereoMp3's every field and WAV byte on recordings at 8, 16,
 * 22.05 and 44.1 kHz (resampled), in chunks of several sizes, windows cut mid-recording, and the
 * labelled clips of test/fixtures/vad/ (key tones, hum, hiss, speech) through the whole split; the
 * voice detector's numbers per window on each clip at 8 and 16 kHz, and on two clips side by side.
 * test/fixtures/split-golden.json holds the values commit 10000de gave (scripts/split-golden.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { detectorDigests, pairDigests, splitDigests } from '../../helpers/split-digest.ts';

const golden = JSON.parse(
  readFileSync(new URL('../../fixtures/split-golden.json', import.meta.url), 'utf8'),
) as {
  splits: Record<string, unknown>;
  detector: Record<string, unknown>;
  pairs: Record<string, unknown>;
};
const SRC = new URL('../../../src/', import.meta.url).href;

test('splitStereoMp3 gives the same result, every field and WAV byte, as before', async () => {
  assert.deepEqual(await splitDigests(SRC), golden.splits);
});

test('the voice detector gives the same numbers per window on every labelled clip, at 8 and 16 kHz', async () => {
  assert.deepEqual(await detectorDigests(SRC), golden.detector);
});

test('two detectors fed side by side (the split two channels) give what each gave alone', async () => {
  assert.deepEqual(await pairDigests(SRC), golden.pairs);
});
