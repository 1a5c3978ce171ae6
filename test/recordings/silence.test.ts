/**
 * Silencing spans of a stored recording (src/recordings/silence.ts): the copy is re-encoded, and a
 * re-encoding must not move the audio in time — the transcript's word times, the silenced spans
 * and the evidence times all place words on the original's timeline.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { Mp3Encoder } from '@breezystack/lamejs';
import { MPEGDecoder } from 'mpg123-decoder';
import { silenceRecording } from '../../src/recordings/silence.ts';
import { fileBlobStore } from '../../src/recordings/store.ts';

/** Mono MP3: silence, then a 1 kHz tone from `onset` seconds to the end. */
function onsetMp3(rate: number, seconds: number, onset: number): Buffer {
  const pcm = new Int16Array(rate * seconds);
  for (let i = Math.round(onset * rate); i < pcm.length; i++)
    pcm[i] = Math.round(Math.sin((2 * Math.PI * 1000 * i) / rate) * 16000);
  const enc = new Mp3Encoder(1, rate, 32);
  return Buffer.concat([enc.encodeBuffer(pcm), enc.flush()].map((p) => Buffer.from(p)));
}

async function firstLoud(bytes: Buffer): Promise<{ at: number; rate: number }> {
  const d = new MPEGDecoder();
  await d.ready;
  try {
    const r = d.decode(new Uint8Array(bytes));
    const c = r.channelData[0];
    for (let i = 0; i < r.samplesDecoded; i++)
      if (Math.abs(c[i]) > 0.05) return { at: i, rate: r.sampleRate };
    return { at: -1, rate: r.sampleRate };
  } finally {
    d.free();
  }
}

for (const rate of [8000, 16000]) {
  test(`at ${rate} Hz the silenced copy keeps every sound where it was (within 2 ms)`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'callcap-silence-'));
    try {
      const store = fileBlobStore(dir);
      const original = onsetMp3(rate, 3, 1);
      await store.put('r.mp3', Readable.from([original]));
      const before = await firstLoud(original);
      // a span in the silence before the tone: the tone itself is untouched
      const r = await silenceRecording(store, 'r.mp3', [{ channel: 0, start: 0.2, end: 0.5 }]);
      assert.equal(r.silencedSeconds, 0.3);
      const chunks: Buffer[] = [];
      for await (const c of store.read('r.mp3')) chunks.push(c as Buffer);
      const after = await firstLoud(Buffer.concat(chunks));
      assert.equal(after.rate, rate);
      assert.ok(
        Math.abs(after.at - before.at) <= rate * 0.002,
        `the tone starts at sample ${before.at} in the original and ${after.at} in the copy`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
