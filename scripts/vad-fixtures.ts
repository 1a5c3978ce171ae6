/**
 * Writes the labelled voice-activity set, test/fixtures/vad/ (clips and labels.json), used by
 * test/capture/providers/vad.test.ts and `npm run bench:vad`. The clips are committed: this script is
 * only run to change them, and needs espeak-ng for the speech clips (`apt-get install espeak-ng`);
 * CI never runs it. Every clip is 8 kHz mono 16-bit PCM WAV. The noise is seeded: a run writes the
 * same noise clips; espeak-ng's speech depends on its version (1.51 wrote the committed ones).
 *
 *   node scripts/vad-fixtures.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wavHeader } from '../src/capture/providers/wav.ts';

const RATE = 8000;
const DIR = new URL('../test/fixtures/vad/', import.meta.url).pathname;

export interface VadClip {
  file: string;
  /** what the gate must answer: upload it (speech) or not (noise) */
  label: 'speech' | 'noise';
  /** the row of the bench's table */
  class: string;
  description: string;
}

const db = (d: number) => 10 ** (d / 20);
let seed = 19;
/** Uniform in [-1, 1), seeded (a 31-bit linear congruential generator). */
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return (seed / 0x7fffffff) * 2 - 1;
};
/** Gaussian-ish white noise of RMS 1 (sum of four uniforms). */
const gauss = () => ((rnd() + rnd() + rnd() + rnd()) / 2) * Math.sqrt(3);

const signal = (seconds: number, f: (t: number, i: number) => number) =>
  Float64Array.from({ length: Math.round(seconds * RATE) }, (_, i) => f(i / RATE, i));

const sine = (hz: number, t: number) => Math.sin(2 * Math.PI * hz * t);

/** Mains hum: the fundamental and its odd harmonics (a transformer's buzz), at `level` dBFS RMS. */
function hum(hz: number, level: number, seconds: number) {
  const weights = [1, 0.6, 0.4, 0.25, 0.15];
  const rms = Math.sqrt(weights.reduce((a, w) => a + (w * w) / 2, 0));
  return signal(
    seconds,
    (t) => (db(level) / rms) * weights.reduce((a, w, k) => a + w * sine(hz * (2 * k + 1), t), 0),
  );
}

function white(level: number, seconds: number) {
  return signal(seconds, () => db(level) * gauss());
}

/** Line hiss: white noise band-limited to about 300-3400 Hz (two one-pole filters), at `level` dBFS RMS. */
function lineHiss(level: number, seconds: number) {
  const x = white(0, seconds);
  const lo = Math.exp((-2 * Math.PI * 300) / RATE);
  const hi = Math.exp((-2 * Math.PI * 3400) / RATE);
  let a = 0;
  let b = 0;
  const y = x.map((v) => {
    a = lo * a + (1 - lo) * v; // below 300 Hz
    b = hi * b + (1 - hi) * v; // below 3400 Hz
    return b - a;
  });
  return scaleRms(y, level);
}

/** Clicks and crackle: a few sharp impulses a second over a faint hiss. */
function clicks(seconds: number) {
  const out = white(-65, seconds);
  for (let at = 0.11; at < seconds; at += 0.17 + 0.2 * Math.abs(rnd())) {
    const i = Math.round(at * RATE);
    const sign = rnd() < 0 ? -1 : 1;
    for (let k = 0; k < 12 && i + k < out.length; k++)
      out[i + k]! += sign * db(-6) * Math.exp(-k / 2) * (k % 2 ? -1 : 1);
  }
  return out;
}

/** Key tones: the digits' row and column tones, 100 ms each with 80 ms between (a caller dialling an extension). */
function dtmf(digits: string, seconds: number) {
  const rows = [697, 770, 852, 941];
  const cols = [1209, 1336, 1477];
  const keys = '123456789*0#';
  return signal(seconds, (t) => {
    const k = Math.floor((t - 0.2) / 0.18);
    if (t < 0.2 || k >= digits.length || (t - 0.2) % 0.18 > 0.1) return 0;
    const at = keys.indexOf(digits[k]!);
    return db(-10) * 0.5 * (sine(rows[Math.floor(at / 3)]!, t) + sine(cols[at % 3]!, t));
  });
}

function scaleRms(x: Float64Array, level: number) {
  const rms = Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length) || 1;
  return x.map((v) => (v * db(level)) / rms);
}

/**
 * Speech from espeak-ng at its 22.05 kHz, brought to 8 kHz (area averaging) and scaled so its active
 * level — the RMS of the 30 ms frames within 30 dB of the loudest — is `level` dBFS, padded with
 * digital silence to `seconds` (0.3 s before).
 */
function speech(voice: string, text: string, level: number, seconds: number) {
  const tmp = mkdtempSync(join(tmpdir(), 'vad-'));
  try {
    const file = join(tmp, 'say.wav');
    execFileSync('espeak-ng', ['-v', voice, '-s', '150', '-w', file, text]);
    const wav = readFileSync(file);
    const rate = wav.readUInt32LE(24);
    const data = wav.subarray(44);
    const src = Float64Array.from({ length: data.length / 2 }, (_, i) => data.readInt16LE(i * 2) / 32768);
    const ratio = rate / RATE;
    const n = Math.floor(src.length / ratio);
    const down = Float64Array.from({ length: n }, (_, j) => {
      let s = 0;
      const a = j * ratio;
      const b = a + ratio;
      for (let i = Math.floor(a); i < Math.ceil(b) && i < src.length; i++)
        s += src[i]! * (Math.min(b, i + 1) - Math.max(a, i));
      return s / ratio;
    });
    const frame = 240;
    const energies: number[] = [];
    for (let i = 0; i + frame <= down.length; i += frame)
      energies.push(down.subarray(i, i + frame).reduce((a, v) => a + v * v, 0) / frame);
    const top = Math.max(...energies);
    const active = energies.filter((e) => e >= top / 1000);
    const rms = Math.sqrt(active.reduce((a, e) => a + e, 0) / active.length);
    const out = new Float64Array(Math.max(Math.round(seconds * RATE), n + Math.round(0.5 * RATE)));
    const gain = db(level) / rms;
    out.set(
      down.map((v) => v * gain),
      Math.round(0.3 * RATE),
    );
    return out;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const mix = (a: Float64Array, b: Float64Array) => a.map((v, i) => v + (b[i] ?? 0));

function writeClip(file: string, x: Float64Array) {
  const pcm = Buffer.alloc(x.length * 2);
  for (let i = 0; i < x.length; i++)
    pcm.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(x[i]! * 32768))), i * 2);
  writeFileSync(join(DIR, file), Buffer.concat([wavHeader(RATE, x.length), pcm]));
}

const EN = 'Hi, I am calling about a leak under my kitchen sink.';
const clips: [VadClip, () => Float64Array][] = [
  [
    { file: 'silence.wav', label: 'noise', class: 'silence', description: 'digital silence, 2 s' },
    () => new Float64Array(2 * RATE),
  ],
  [
    {
      file: 'silence-dither.wav',
      label: 'noise',
      class: 'silence',
      description: 'white noise at -70 dBFS, 2 s',
    },
    () => white(-70, 2),
  ],
  [
    {
      file: 'hum-50.wav',
      label: 'noise',
      class: 'hum',
      description: '50 Hz hum with odd harmonics, -20 dBFS',
    },
    () => hum(50, -20, 2),
  ],
  [
    {
      file: 'hum-60-loud.wav',
      label: 'noise',
      class: 'hum',
      description: '60 Hz hum with odd harmonics, -10 dBFS',
    },
    () => hum(60, -10, 2),
  ],
  [
    {
      file: 'hum-60-quiet.wav',
      label: 'noise',
      class: 'hum',
      description: '60 Hz hum with odd harmonics, -40 dBFS',
    },
    () => hum(60, -40, 2),
  ],
  [
    { file: 'hiss-white.wav', label: 'noise', class: 'hiss', description: 'white noise, -30 dBFS' },
    () => white(-30, 2),
  ],
  [
    { file: 'hiss-white-loud.wav', label: 'noise', class: 'hiss', description: 'white noise, -15 dBFS' },
    () => white(-15, 2),
  ],
  [
    {
      file: 'hiss-line.wav',
      label: 'noise',
      class: 'hiss',
      description: 'line hiss, white noise band-limited to 300-3400 Hz, -25 dBFS',
    },
    () => lineHiss(-25, 2),
  ],
  [
    {
      file: 'clicks.wav',
      label: 'noise',
      class: 'clicks',
      description: 'sharp clicks (-6 dBFS peak) a few times a second over -65 dBFS hiss',
    },
    () => clicks(2),
  ],
  [
    {
      file: 'dtmf.wav',
      label: 'noise',
      class: 'dtmf',
      description: 'key tones 5551234, 100 ms each, -10 dBFS',
    },
    () => dtmf('5551234', 2),
  ],
  [
    {
      file: 'dial-tone.wav',
      label: 'noise',
      class: 'tone',
      description: 'dial tone, 350 + 440 Hz steady, -13 dBFS',
    },
    () => signal(2, (t) => db(-13) * 0.5 * (sine(350, t) + sine(440, t))),
  ],
  [
    {
      file: 'speech-en.wav',
      label: 'speech',
      class: 'speech',
      description: `English (espeak-ng en-us) at -20 dBFS: "${EN}"`,
    },
    () => speech('en-us', EN, -20, 3),
  ],
  [
    {
      file: 'speech-es.wav',
      label: 'speech',
      class: 'speech',
      description: 'Spanish (espeak-ng es) at -22 dBFS',
    },
    () => speech('es', 'Hola, necesito un fontanero para mañana por la mañana.', -22, 3),
  ],
  [
    {
      file: 'speech-de-female.wav',
      label: 'speech',
      class: 'speech',
      description: 'German, female voice (espeak-ng de+f3) at -18 dBFS',
    },
    () => speech('de+f3', 'Guten Tag, ich möchte einen Termin vereinbaren.', -18, 3),
  ],
  [
    {
      file: 'speech-yes.wav',
      label: 'speech',
      class: 'speech',
      description: 'a lone "Yes." (espeak-ng en-gb) at -25 dBFS in 2 s',
    },
    () => speech('en-gb', 'Yes.', -25, 2),
  ],
  [
    {
      file: 'quiet-speech-35.wav',
      label: 'speech',
      class: 'quiet speech',
      description: 'English at -35 dBFS',
    },
    () => speech('en-us', 'My address is twelve Main Street, apartment four.', -35, 3),
  ],
  [
    {
      file: 'quiet-speech-42.wav',
      label: 'speech',
      class: 'quiet speech',
      description: 'French, female voice (espeak-ng fr-fr+f2) at -42 dBFS',
    },
    () => speech('fr-fr+f2', 'Bonjour, je voudrais un rendez-vous demain.', -42, 3),
  ],
  [
    {
      file: 'quiet-speech-50.wav',
      label: 'speech',
      class: 'quiet speech',
      description: 'English at -50 dBFS',
    },
    () => speech('en-us', 'Can somebody call me back this afternoon?', -50, 3),
  ],
  [
    {
      file: 'speech-over-hum.wav',
      label: 'speech',
      class: 'speech in noise',
      description: 'English at -25 dBFS over 50 Hz hum at -25 dBFS',
    },
    () => {
      const s = speech('en-us', 'The water heater stopped working this morning.', -25, 3);
      return mix(s, hum(50, -25, s.length / RATE));
    },
  ],
  [
    {
      file: 'speech-over-hiss.wav',
      label: 'speech',
      class: 'speech in noise',
      description: 'Spanish at -30 dBFS over line hiss at -45 dBFS',
    },
    () => {
      const s = speech('es', 'Mi número de pedido es cuatro cinco seis.', -30, 3);
      return mix(s, lineHiss(-45, s.length / RATE));
    },
  ],
];

if (import.meta.main) {
  mkdirSync(DIR, { recursive: true });
  for (const [clip, make] of clips) writeClip(clip.file, make());
  writeFileSync(
    join(DIR, 'labels.json'),
    `${JSON.stringify(
      clips.map(([c]) => c),
      null,
      2,
    )}\n`,
  );
  console.log(`${clips.length} clips in ${DIR}`);
}
