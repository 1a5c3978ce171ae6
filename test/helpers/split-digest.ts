/**
 * What the audio thread answers for a set of recordings, as one digest per recording: every field of
 * splitStereoMp3's result (sample rate, duration, windows with their speech flags, the talk
 * metrics' frames) with each window's WAV bytes as a SHA-256, and the voice detector's per-window
 * numbers (speech and voiced ms) on the labelled clips of test/fixtures/vad/, fed one channel at a
 * time and two side by side. test/capture/providers/split-golden.test.ts holds these to the values
 * the code gave before the audio thread's CPU work (docs/benchmarks.md "audiocpu"): byte for byte.
 *
 * `src` is the folder of the code to digest (the test's own; a base commit's, extracted, to write
 * the expected values anew: see the test).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { Mp3Encoder } from '@breezystack/lamejs';
import { INBOUND_TONES, OUTBOUND_TONES, stereoMp3 } from './stereo-mp3.ts';

interface Window {
  offset: number;
  files: string[];
  wavs?: Buffer[];
  speech: boolean[];
}
interface Split {
  sampleRate: number;
  duration: number;
  windows: Window[];
  activity: { frameSeconds: number; channels: boolean[][] } | null;
}
interface Detector {
  push(samples: Int16Array, from?: number, n?: number): void;
  endWindow(): { speech: boolean; speechMs: number; voicedMs: number; ms: number };
  close(): void;
}
interface DetectorClass {
  create(rate: number): Promise<Detector>;
  pushBoth?(a: Detector, b: Detector, sa: Int16Array, sb: Int16Array, from: number, n: number): void;
}

const FIXTURES = new URL('../fixtures/vad/', import.meta.url);
const clipNames = (
  JSON.parse(readFileSync(new URL('labels.json', FIXTURES), 'utf8')) as { file: string }[]
).map((c) => c.file);
function clip(file: string): Int16Array {
  const wav = readFileSync(new URL(file, FIXTURES));
  const pcm = new Int16Array(wav.length / 2 - 22);
  for (let i = 0; i < pcm.length; i++) pcm[i] = wav.readInt16LE(44 + i * 2);
  return pcm;
}
const doubled = (x: Int16Array) => Int16Array.from({ length: x.length * 2 }, (_, i) => x[i >> 1]!);

/** The labelled clips one after another, at 16 kHz, as a stereo MP3: clip order on the left, reversed on the right. */
function clipsMp3(): Buffer {
  const all = clipNames.map((f) => doubled(clip(f)));
  const join = (xs: Int16Array[]) => {
    const out = new Int16Array(xs.reduce((a, x) => a + x.length, 0));
    let at = 0;
    for (const x of xs) {
      out.set(x, at);
      at += x.length;
    }
    return out;
  };
  const left = join(all);
  const right = join(all.slice().reverse());
  const enc = new Mp3Encoder(2, 16000, 64);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < left.length; i += 1152 * 8)
    parts.push(enc.encodeBuffer(left.subarray(i, i + 1152 * 8), right.subarray(i, i + 1152 * 8)));
  parts.push(enc.flush());
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

const LIMITS = {
  maxWindowSeconds: 600,
  maxWindowBytes: 25 * 1024 * 1024,
  maxSeconds: 4 * 3600,
  memoryBytes: 1024 * 1024,
};

/** [name, mp3, chunk bytes, limits] */
export function recordings(): [string, Buffer, number, typeof LIMITS][] {
  return [
    ['bench:capture: 5 s, 16 kHz, inbound', stereoMp3({ seconds: 5, ...INBOUND_TONES }), 64 * 1024, LIMITS],
    ['7 s outbound, 4 kB chunks', stereoMp3({ seconds: 7, ...OUTBOUND_TONES }), 4096, LIMITS],
    ['3 s, right channel silent', stereoMp3({ seconds: 3, left: 1000, right: null }), 64 * 1024, LIMITS],
    [
      '6 s at 8 kHz',
      stereoMp3({ seconds: 6, sampleRate: 8000, kbps: 32, ...INBOUND_TONES }),
      64 * 1024,
      LIMITS,
    ],
    [
      '4 s at 22.05 kHz (resampled; the detector at 8 kHz)',
      stereoMp3({ seconds: 4, sampleRate: 22050, kbps: 64, ...INBOUND_TONES }),
      64 * 1024,
      LIMITS,
    ],
    [
      '4 s at 44.1 kHz, 1 kB chunks, 1.5 s windows',
      stereoMp3({ seconds: 4, sampleRate: 44100, kbps: 128, ...INBOUND_TONES }),
      1000,
      { ...LIMITS, maxWindowSeconds: 1.5 },
    ],
    [
      'the labelled clips (DTMF, hum, hiss, speech), 2 s windows',
      clipsMp3(),
      8192,
      { ...LIMITS, maxWindowSeconds: 2 },
    ],
  ];
}

const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');
const bits = (xs: boolean[]) => sha(Buffer.from(xs.map((x) => (x ? 49 : 48))));

export async function splitDigests(src: string): Promise<Record<string, unknown>> {
  const { splitStereoMp3 } = (await import(new URL('capture/providers/wav.ts', src).href)) as {
    splitStereoMp3(
      p: string,
      mp3: Readable,
      dir: () => Promise<string>,
      limits: typeof LIMITS,
    ): Promise<Split>;
  };
  const out: Record<string, unknown> = {};
  for (const [name, mp3, chunk, limits] of recordings()) {
    const parts: Buffer[] = [];
    for (let i = 0; i < mp3.length; i += chunk) parts.push(mp3.subarray(i, i + chunk));
    const r = await splitStereoMp3(
      'golden',
      Readable.from(parts),
      () => Promise.reject(new Error('in memory')),
      limits,
    );
    out[name] = {
      sampleRate: r.sampleRate,
      duration: r.duration,
      windows: r.windows.map((w) => ({
        offset: w.offset,
        files: w.files,
        speech: w.speech,
        wavs: (w.wavs ?? []).map(sha),
      })),
      activity: r.activity && {
        frameSeconds: r.activity.frameSeconds,
        frames: r.activity.channels.map((c) => c.length),
        channels: r.activity.channels.map(bits),
      },
    };
  }
  return out;
}

/** Each clip's per-window numbers (windows of 1 s, pushed in 1000-sample pieces) at 8 and 16 kHz. */
export async function detectorDigests(src: string): Promise<Record<string, unknown>> {
  const { VoiceDetector } = (await import(new URL('capture/providers/vad.ts', src).href)) as {
    VoiceDetector: DetectorClass;
  };
  const windows = (d: Detector, pcm: Int16Array, rate: number) => {
    const r: string[] = [];
    for (let at = 0; at < pcm.length; ) {
      const end = Math.min(pcm.length, at + rate);
      for (; at < end; at += Math.min(1000, end - at)) d.push(pcm, at, Math.min(1000, end - at));
      const w = d.endWindow();
      r.push(`${w.speech ? 'S' : '-'}${w.speechMs}/${w.voicedMs}/${w.ms}`);
    }
    return r.join(' ');
  };
  const out: Record<string, unknown> = {};
  for (const file of clipNames) {
    const at8 = clip(file);
    for (const [rate, pcm] of [
      [8000, at8],
      [16000, doubled(at8)],
    ] as const) {
      const d = await VoiceDetector.create(rate);
      try {
        out[`${file} ${rate}`] = windows(d, pcm, rate);
      } finally {
        d.close();
      }
    }
  }
  return out;
}

/**
 * Two clips side by side (the split's way, pushBoth where the code has it): each detector's
 * windows, as detectorDigests gives them for the clip alone at 16 kHz (cut to the shorter clip).
 */
export async function pairDigests(src: string): Promise<Record<string, unknown>> {
  const { VoiceDetector } = (await import(new URL('capture/providers/vad.ts', src).href)) as {
    VoiceDetector: DetectorClass;
  };
  const out: Record<string, unknown> = {};
  for (let i = 0; i < clipNames.length; i++) {
    const fa = clipNames[i]!;
    const fb = clipNames[(i + 9) % clipNames.length]!;
    const a = doubled(clip(fa));
    const b = doubled(clip(fb));
    const n = Math.min(a.length, b.length);
    const da = await VoiceDetector.create(16000);
    const db = await VoiceDetector.create(16000);
    const ra: string[] = [];
    const rb: string[] = [];
    try {
      for (let at = 0; at < n; ) {
        const end = Math.min(n, at + 16000);
        for (; at < end; at += Math.min(777, end - at)) {
          const k = Math.min(777, end - at);
          if (VoiceDetector.pushBoth) VoiceDetector.pushBoth(da, db, a, b, at, k);
          else {
            da.push(a, at, k);
            db.push(b, at, k);
          }
        }
        for (const [d, r] of [
          [da, ra],
          [db, rb],
        ] as const) {
          const w = d.endWindow();
          r.push(`${w.speech ? 'S' : '-'}${w.speechMs}/${w.voicedMs}/${w.ms}`);
        }
      }
    } finally {
      da.close();
      db.close();
    }
    out[`${fa} + ${fb}`] = [ra.join(' '), rb.join(' ')];
  }
  return out;
}
