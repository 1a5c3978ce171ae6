import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBuffer } from 'music-metadata';
import { decideRange } from '../../src/http/public/api-v1/range.ts';
import { durationOf, FRAME_SECONDS, mp3, mp3Frames } from '../helpers/mp3.ts';

test('the generated MP3 frame header is MPEG-1 Layer III, 128 kbps, 44.1 kHz', () => {
  const [b0, b1, b2] = mp3Frames(1);
  assert.equal(b0, 0xff);
  assert.equal(b1 >> 5, 0b111, 'sync');
  assert.equal((b1 >> 3) & 0b11, 0b11, 'MPEG-1');
  assert.equal((b1 >> 1) & 0b11, 0b01, 'Layer III');
  assert.equal(b2 >> 4, 0b1001, '128 kbps');
  assert.equal((b2 >> 2) & 0b11, 0b00, '44100 Hz');
});

test('music-metadata reads the generated MP3 back with its exact duration', async () => {
  const { bytes, frames, duration } = mp3(10);
  assert.equal(frames, 383);
  assert.equal(bytes.length, 383 * 417);
  const meta = await parseBuffer(bytes, { mimeType: 'audio/mpeg' }, { duration: true });
  assert.equal(meta.format.container, 'MPEG');
  assert.equal(meta.format.codec, 'MPEG 1 Layer 3');
  assert.equal(meta.format.bitrate, 128_000);
  assert.equal(meta.format.sampleRate, 44_100);
  assert.ok(Math.abs((meta.format.duration as number) - duration) < FRAME_SECONDS);
  assert.ok(Math.abs(durationOf(383) - 10.005) < 0.001);
});

// The Range rule on its own (the download tests run it through the route).
const ranges: [string | undefined, number, ReturnType<typeof decideRange>][] = [
  [undefined, 100, { kind: 'full' }],
  ['bytes=0-9', 100, { kind: 'partial', start: 0, end: 9 }],
  ['bytes=90-', 100, { kind: 'partial', start: 90, end: 99 }],
  ['bytes=-10', 100, { kind: 'partial', start: 90, end: 99 }],
  ['bytes=-1000', 100, { kind: 'partial', start: 0, end: 99 }],
  ['bytes=50-5000', 100, { kind: 'partial', start: 50, end: 99 }],
  ['bytes=100-', 100, { kind: 'unsatisfiable' }],
  ['bytes=100-200', 100, { kind: 'unsatisfiable' }],
  ['bytes=-0', 100, { kind: 'unsatisfiable' }],
  ['bytes=0-0', 0, { kind: 'unsatisfiable' }],
  ['bytes=0-1,5-6', 100, { kind: 'full' }],
  ['bytes=9-3', 100, { kind: 'full' }],
  ['bytes=x-y', 100, { kind: 'full' }],
  ['items=0-1', 100, { kind: 'full' }],
  ['BYTES=1-2', 100, { kind: 'partial', start: 1, end: 2 }],
];
for (const [header, size, expected] of ranges) {
  test(`Range ${header ?? '(none)'} on ${size} bytes → ${expected.kind}`, () => {
    assert.deepEqual(decideRange(header, size), expected);
  });
}
