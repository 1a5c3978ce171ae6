import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { Mp3Encoder } from '@breezystack/lamejs';
import { MPEGDecoder } from 'mpg123-decoder';
import {
  AreaResampler,
  PcmScratch,
  renewDecoder,
  splitStereoMp3,
} from '../../../src/capture/providers/wav.ts';
import { INBOUND_TONES, stereoMp3 } from '../../helpers/stereo-mp3.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callcap-wav-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const limits = { maxWindowSeconds: 600, maxWindowBytes: 25 * 1024 * 1024, maxSeconds: 3600 };

/** The two WAV files of a one-window split, read back. */
async function split(mp3: Buffer, name: string, chunk = 4096) {
  const out = join(dir, name);
  await mkdir(out);
  const parts = [];
  for (let i = 0; i < mp3.length; i += chunk) parts.push(mp3.subarray(i, i + chunk));
  const r = await splitStereoMp3('test', Readable.from(parts), out, limits);
  assert.equal(r.windows.length, 1);
  return { ...r, wavs: await Promise.all(r.windows[0]!.files.map((f) => readFile(f))) };
}

test('a decoder reused after another recording decodes exactly as a fresh one', async () => {
  const a = stereoMp3({ seconds: 2, left: 440, right: 1000 });
  // a different stream in between: another rate, other tones, cut short mid-frame
  const b = stereoMp3({ seconds: 1, sampleRate: 22050, kbps: 64, left: 300, right: 700 });
  const first = await split(a, 'first');
  await split(b.subarray(0, b.length - 100), 'between');
  const again = await split(a, 'again');
  assert.equal(again.sampleRate, 16000);
  assert.deepEqual(again.wavs[0], first.wavs[0]);
  assert.deepEqual(again.wavs[1], first.wavs[1]);
  // and as a decoder made for it alone
  const own = new MPEGDecoder();
  await own.ready;
  const decoded = own.decode(a);
  own.free();
  const pcm = first.wavs[0]!.subarray(44);
  assert.equal(pcm.length / 2, decoded.samplesDecoded);
  const x = decoded.channelData[0]![1000]!;
  assert.equal(pcm.readInt16LE(2000), Math.round(x * 32767));
});

test('renewing a decoder gives it a fresh mpg123 state (the internals it relies on are there)', async () => {
  const d = new MPEGDecoder();
  await d.ready;
  try {
    const mp3 = stereoMp3({ seconds: 1, ...INBOUND_TONES });
    const once = d.decode(mp3);
    assert.equal(renewDecoder(d), true);
    const twice = d.decode(mp3);
    assert.equal(twice.samplesDecoded, once.samplesDecoded);
    assert.deepEqual(twice.channelData[1], once.channelData[1]);
  } finally {
    d.free();
  }
});

test('a 48 kHz recording is written at 16 kHz: one sample per three, the tones kept', async () => {
  const mp3 = stereoMp3({ seconds: 1, sampleRate: 48000, kbps: 128, left: 440, right: null });
  const r = await split(mp3, 'rate48');
  assert.equal(r.sampleRate, 16000);
  const [agent, customer] = r.wavs as [Buffer, Buffer];
  assert.equal(agent.readUInt32LE(24), 16000);
  assert.equal(agent.length, customer.length);
  assert.ok(Math.abs((agent.length - 44) / 2 / 16000 - 1) < 0.05, `${agent.length} bytes`);
  // a 440 Hz voiced tone peaking near half scale: its rising zero crossings in the middle half
  // second, and its peak, survive the averaging
  let rising = 0;
  let peak = 0;
  for (let i = 4000; i < 12000; i++) {
    const v = agent.readInt16LE(44 + i * 2);
    if (agent.readInt16LE(44 + (i - 1) * 2) < 0 && v >= 0) rising++;
    peak = Math.max(peak, Math.abs(v));
  }
  assert.ok(Math.abs(rising * 2 - 440) <= 4, `${rising * 2} Hz`);
  assert.ok(peak > 0.45 * 32767 && peak < 0.52 * 32767, `peak ${peak}`);
  assert.deepEqual(r.windows[0]!.speech, [true, false]);
});

test('the resampler streams: chunks give the same samples as one piece; each is the mean it covers', () => {
  const input = Float32Array.from({ length: 1000 }, (_, i) => Math.sin(i / 7));
  const whole = new Float32Array(400);
  const r1 = new AreaResampler(44100 / 16000);
  const n1 = r1.push(input, whole);
  const chunked: number[] = [];
  const r2 = new AreaResampler(44100 / 16000);
  const out = new Float32Array(400);
  for (let i = 0; i < input.length; i += 37) {
    const n = r2.push(input.subarray(i, i + 37), out);
    chunked.push(...out.subarray(0, n));
  }
  assert.equal(chunked.length, n1);
  assert.equal(n1, Math.floor(1000 / (44100 / 16000)));
  for (let i = 0; i < n1; i++) assert.ok(Math.abs(chunked[i]! - whole[i]!) < 1e-6);
  // ratio 3: plain means of three
  const three = new AreaResampler(3);
  const o = new Float32Array(4);
  assert.equal(three.push(Float32Array.from([1, 2, 3, 4, 5, 6, 7]), o), 2);
  assert.deepEqual([...o.subarray(0, 2)], [2, 5]);
  // the rest (7 alone: a third of an output sample) is under half a sample: dropped at the end
  assert.equal(three.flush(o), 0);
});

test('renewing a decoder releases the old mpg123 handle once: its destroy frees it, nothing frees it again', async () => {
  const d = new MPEGDecoder();
  await d.ready;
  // The package's WebAssembly exports, spied on, keep a ledger of what JavaScript allocated and
  // released. mpeg_frame_decoder_destroy is mpg123_delete, then free of the handle: freeing the
  // handle after it as well is a double free, which corrupts the instance's heap — a decoder renewed
  // after that can read a clobbered handle, mpg123 answering MPG123_BAD_HANDLE on every read.
  const internals = d as unknown as {
    _decoder: number;
    _common: {
      wasm: {
        malloc(n: number): number;
        free(p: number): void;
        mpeg_frame_decoder_destroy(p: number): void;
      };
    };
  };
  const wasm = internals._common.wasm;
  const { malloc, free, mpeg_frame_decoder_destroy: destroy } = wasm;
  const live = new Set<number>();
  const misuse: string[] = [];
  wasm.malloc = (n) => {
    const p = malloc(n);
    live.add(p);
    return p;
  };
  wasm.free = (p) => {
    if (!live.delete(p)) misuse.push(`free(${p}) of memory not allocated`);
    free(p);
  };
  wasm.mpeg_frame_decoder_destroy = (p) => {
    if (!live.delete(p)) misuse.push(`destroy(${p}) of a handle not live`);
    destroy(p);
  };
  const errors: unknown[] = [];
  const consoleError = console.error;
  console.error = (...args: unknown[]) => errors.push(args.join(' '));
  try {
    const mp3 = stereoMp3({ seconds: 1, ...INBOUND_TONES });
    const once = d.decode(mp3);
    for (let i = 0; i < 20; i++) {
      live.add(internals._decoder); // the handle in use (made inside the module, not by our malloc)
      assert.equal(renewDecoder(d), true);
      assert.deepEqual(misuse, [], `renewal ${i + 1}`);
      assert.equal(live.has(internals._decoder), false, 'the new handle is not something we allocated');
      const again = d.decode(mp3);
      assert.equal(again.samplesDecoded, once.samplesDecoded);
      assert.deepEqual(again.channelData[0], once.channelData[0]);
    }
    assert.deepEqual(errors, [], 'mpg123 said nothing');
  } finally {
    console.error = consoleError;
    Object.assign(wasm, { malloc, free, mpeg_frame_decoder_destroy: destroy });
    d.free();
  }
});

/** An 8 kHz clip of the labelled voice-activity set (test/fixtures/vad/), as samples. */
function clip(file: string): Int16Array {
  const wav = readFileSync(new URL(`../../fixtures/vad/${file}`, import.meta.url));
  const pcm = new Int16Array(wav.length / 2 - 22);
  for (let i = 0; i < pcm.length; i++) pcm[i] = wav.readInt16LE(44 + i * 2);
  return pcm;
}

/** A two-channel 8 kHz MP3 of the given samples (the shorter channel padded with silence). */
function mp3Of(left: Int16Array, right: Int16Array): Buffer {
  const n = Math.max(left.length, right.length);
  const l = new Int16Array(n);
  const r = new Int16Array(n);
  l.set(left);
  r.set(right);
  const enc = new Mp3Encoder(2, 8000, 32);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < n; i += 1152 * 8)
    parts.push(enc.encodeBuffer(l.subarray(i, i + 1152 * 8), r.subarray(i, i + 1152 * 8)));
  parts.push(enc.flush());
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

test('the gate is voice activity: speech on one channel is marked, mains hum and key tones on the other are not', async () => {
  const hum = await split(mp3Of(clip('speech-en.wav'), clip('hum-60-loud.wav')), 'vad-hum');
  assert.equal(hum.sampleRate, 8000);
  assert.deepEqual(hum.windows[0]!.speech, [true, false]);
  const keys = await split(mp3Of(clip('dtmf.wav'), clip('quiet-speech-42.wav')), 'vad-dtmf');
  assert.deepEqual(keys.windows[0]!.speech, [false, true]);
});

test('each window is judged on its own: silence, then speech, in 2-second windows', async () => {
  const left = new Int16Array(16000 + clip('speech-es.wav').length);
  left.set(clip('speech-es.wav'), 16000);
  const out = join(dir, 'vad-windows');
  await mkdir(out);
  const r = await splitStereoMp3('test', Readable.from([mp3Of(left, clip('hiss-line.wav'))]), out, {
    ...limits,
    maxWindowSeconds: 2,
  });
  assert.deepEqual(
    r.windows.map((w) => w.speech),
    [
      [false, false],
      [true, false],
      [true, false],
      [false, false], // 0.3 s of the encoder's padding and the clip's silence
    ],
  );
});

test('windows kept in memory are the bytes of the files, and a folder made on demand is made only for a window on disk', async () => {
  const mp3 = stereoMp3({ seconds: 3, ...INBOUND_TONES });
  const onDisk = await split(mp3, 'on-disk');
  let made = 0;
  const folder = async () => {
    made++;
    const d = join(dir, `lazy-${made}`);
    await mkdir(d);
    return d;
  };
  const inMemory = await splitStereoMp3('test', Readable.from([mp3]), folder, {
    ...limits,
    memoryBytes: 1 << 20,
  });
  assert.equal(made, 0);
  assert.deepEqual(inMemory.windows[0]!.wavs, onDisk.wavs);
  // past memoryBytes: moved to the folder, made then, the same bytes
  const moved = await splitStereoMp3('test', Readable.from([mp3]), folder, {
    ...limits,
    memoryBytes: 50_000,
  });
  assert.equal(made, 1);
  const files = moved.windows[0]!.files;
  assert.ok(files[0].startsWith(join(dir, 'lazy-1')));
  assert.deepEqual(await Promise.all(files.map((f) => readFile(f))), onDisk.wavs);
});

test('16-bit PCM: every float32 sample converts as Math.round(clamped × 32767) would', () => {
  // float32 bit patterns across [-1.5, 1.5] with a prime stride (~2.4 million values, every exponent),
  // plus the edges: ±0, ±1, beyond ±1, the smallest steps and the halves around them
  const bits = new Uint32Array(1);
  const f = new Float32Array(bits.buffer);
  const values: number[] = [0, -0, 1, -1, 1.5, -1.5, 0.5 / 32767, -0.5 / 32767, 1.5 / 32767, -1.5 / 32767];
  for (const sign of [0, 0x80000000]) {
    for (let b = 0; b <= 0x3fc00000; b += 367) {
      bits[0] = (sign | b) >>> 0;
      values.push(f[0]!);
    }
  }
  const input = Float32Array.from(values);
  const scratch = new PcmScratch();
  const n = scratch.fill(input);
  assert.equal(n, input.length);
  const out = scratch.int16();
  let mismatches = 0;
  for (let i = 0; i < n; i++) {
    const x = input[i]!;
    const want = Math.round((x > 1 ? 1 : x < -1 ? -1 : x) * 32767);
    if (out[i] !== (want === 0 ? 0 : want)) mismatches++;
  }
  assert.equal(mismatches, 0);
  assert.ok(n > 2_000_000, `${n} values`);
});
