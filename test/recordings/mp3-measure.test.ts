import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { recordingChannels } from '../../src/recordings/channels.ts';
import {
  capped,
  MAX_RECORDING_BYTES,
  Mp3Sniffer,
  measureMp3,
  sniffChannels,
} from '../../src/recordings/measure.ts';
import { type BlobStore, fileBlobStore } from '../../src/recordings/store.ts';
import { mp3Frames } from '../helpers/mp3.ts';
import { monoMp3, stereoMp3 } from '../helpers/stereo-mp3.ts';

/**
 * The download measures a recording from the frame headers it saw go by (Mp3Sniffer) instead of
 * opening the stored file with music-metadata: for every file here both ways must give the same
 * duration, and the sniffer must answer by itself for the plain constant-bitrate files a carrier
 * serves (and leave everything else to music-metadata).
 */
let dir: string;
let store: BlobStore;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callcap-mp3-'));
  store = fileBlobStore(dir);
});
after(() => rm(dir, { recursive: true, force: true }));

/** Stores `bytes` in chunks of `chunk` bytes through capped() as the ingest does; both measurements. */
async function measureBoth(name: string, bytes: Buffer, chunk = 16384) {
  const sniffer = new Mp3Sniffer();
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) parts.push(bytes.subarray(i, i + chunk));
  const key = `t/${name}.mp3`;
  const { bytes: size } = await store.put(key, capped(Readable.from(parts), MAX_RECORDING_BYTES, sniffer));
  assert.equal(size, bytes.length);
  const { parseFile } = await import('music-metadata');
  const meta = await parseFile(join(dir, key), { duration: false, skipCovers: true }).catch(() => null);
  return {
    channels: await recordingChannels(store, key, size),
    sniffedChannels: sniffChannels(
      Buffer.concat([bytes.subarray(0, 8192), Buffer.alloc(8192)]).subarray(0, 8192),
    ),
    musicMetadataChannels: meta?.format.numberOfChannels === 2 ? 2 : 1,
    fast: sniffer.duration(size),
    sniffed: await measureMp3(store, key, size, sniffer),
    musicMetadata: await measureMp3(store, key, size),
  };
}

const constantBitrate: [string, () => Buffer][] = [
  ['MPEG-1 128 kbps, 383 frames', () => mp3Frames(383)],
  ['MPEG-1 128 kbps, 40 frames', () => mp3Frames(40)],
  ['MPEG-1 128 kbps, 5000 frames', () => mp3Frames(5000)],
  ['lame stereo 16 kHz 64 kbps 5 s', () => stereoMp3({ seconds: 5, left: 1000, right: 440 })],
  ['lame stereo 16 kHz 64 kbps 20 s', () => stereoMp3({ seconds: 20, left: 1000, right: null })],
  [
    'lame stereo 8 kHz 32 kbps 7 s',
    () => stereoMp3({ seconds: 7, sampleRate: 8000, kbps: 32, left: 440, right: 700 }),
  ],
  [
    'lame stereo 22.05 kHz 48 kbps 9 s',
    () => stereoMp3({ seconds: 9, sampleRate: 22050, kbps: 48, left: 440, right: 1000 }),
  ],
  [
    'lame stereo 44.1 kHz 128 kbps 12 s (padded frames)',
    () => stereoMp3({ seconds: 12, sampleRate: 44100, kbps: 128, left: 440, right: 1000 }),
  ],
  ['lame mono 16 kHz 32 kbps 4 s', () => monoMp3({ seconds: 4 })],
  ['lame mono 11.025 kHz 24 kbps 6 s', () => monoMp3({ seconds: 6, sampleRate: 11025, kbps: 24 })],
  ['the README sample call', () => readFileSync(new URL('../../examples/sample-call.mp3', import.meta.url))],
];

for (const [name, make] of constantBitrate) {
  test(`${name}: the sniffed duration is music-metadata's, without reading the file`, async () => {
    const bytes = make();
    for (const chunk of [16384, 1000, 77]) {
      const r = await measureBoth(`${name.replace(/\W+/g, '-')}-${chunk}`, bytes, chunk);
      assert.notEqual(r.musicMetadata, null);
      assert.equal(r.fast, r.musicMetadata, `chunks of ${chunk}`);
      assert.equal(r.sniffed, r.musicMetadata);
      assert.equal(r.channels, r.musicMetadataChannels);
      assert.equal(r.sniffedChannels, r.musicMetadataChannels, 'the channel count read from the head');
    }
  });
}

const id3v1 = Buffer.concat([Buffer.from('TAG'), Buffer.alloc(125, 0x20)]);
const id3v2 = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 10]), Buffer.alloc(10)]);
const others: [string, () => Buffer][] = [
  // lame (32 kHz here) writes its name where music-metadata looks for a Xing header
  [
    'a LAME tag in the first frames (lame stereo 48 kHz 96 kbps)',
    () => stereoMp3({ seconds: 3, sampleRate: 48000, kbps: 96, left: 440, right: 1000 }),
  ],
  ['an ID3v1 tag at the end', () => Buffer.concat([mp3Frames(200), id3v1])],
  ['an ID3v2 tag in front', () => Buffer.concat([id3v2, mp3Frames(200)])],
  ['junk before the first frame', () => Buffer.concat([Buffer.from('junk!'), mp3Frames(200)])],
  ['a file shorter than the sniffed head', () => mp3Frames(10)],
  ['not audio at all', () => Buffer.from('x'.repeat(20000))],
  ['a WAV file', () => Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(20000)])],
  [
    'a bitrate that changes (VBR)',
    () => {
      const b = mp3Frames(300);
      // frame 2 at 64 kbps (MPEG-1 Layer III, 44.1 kHz): 208 bytes; the rest follows it
      const vbr = Buffer.concat([
        b.subarray(0, 417),
        Buffer.from([0xff, 0xfb, 0x50, 0x64]),
        Buffer.alloc(204),
        b.subarray(417),
      ]);
      return vbr;
    },
  ],
  [
    'a Xing header in the first frame',
    () => {
      const b = mp3Frames(300);
      b.write('Xing', 4 + 32, 'latin1');
      return b;
    },
  ],
];

for (const [name, make] of others) {
  test(`${name}: left to music-metadata, same answer as before`, async () => {
    const r = await measureBoth(name.replace(/\W+/g, '-'), make());
    assert.equal(r.fast, undefined);
    assert.equal(r.sniffed, r.musicMetadata);
    assert.equal(r.channels, r.musicMetadataChannels);
  });
}
