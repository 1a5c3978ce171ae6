/**
 * The speech-to-text upload gate, old and new side by side (docs/benchmarks.md "Voice activity"):
 * the peak gate it replaced (a window is speech when any sample reaches -60 dBFS) and the voice
 * activity detector (src/capture/providers/vad.ts), on the labelled set in test/fixtures/vad/.
 * Prints, per class, how many clips each gate answers right (noise passed as speech, speech
 * dropped), then the CPU each costs per minute of one channel's audio at 8 and 16 kHz, and what a
 * whole split of a one-minute stereo MP3 (decode, resample, WAV, gate) costs with the new gate.
 *
 *   npm run bench:vad
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { VoiceDetector } from '../src/capture/providers/vad.ts';
import { splitStereoMp3 } from '../src/capture/providers/wav.ts';
import { INBOUND_TONES, stereoMp3 } from '../test/helpers/stereo-mp3.ts';

const DIR = new URL('../test/fixtures/vad/', import.meta.url);
interface Clip {
  file: string;
  label: 'speech' | 'noise';
  class: string;
}
const clips = (JSON.parse(readFileSync(new URL('labels.json', DIR), 'utf8')) as Clip[]).map((c) => {
  const wav = readFileSync(new URL(c.file, DIR));
  const pcm = new Int16Array(wav.length / 2 - 22);
  for (let i = 0; i < pcm.length; i++) pcm[i] = wav.readInt16LE(44 + i * 2);
  return { ...c, pcm };
});

/** The gate this replaced (wav.ts before): speech when the peak reaches 0.001 of full scale (-60 dBFS). */
function peakGate(pcm: Int16Array): boolean {
  let peak = 0;
  for (let i = 0; i < pcm.length; i++) {
    const v = pcm[i]!;
    const a = v < 0 ? -v : v;
    if (a > peak) peak = a;
  }
  return peak / 32767 >= 0.001;
}

async function vadGate(pcm: Int16Array, rate: number): Promise<boolean> {
  const d = await VoiceDetector.create(rate);
  try {
    d.push(pcm);
    return d.endWindow().speech;
  } finally {
    d.close();
  }
}

const doubled = (x: Int16Array) => Int16Array.from({ length: x.length * 2 }, (_, i) => x[i >> 1]!);

// accuracy
const classes = [...new Set(clips.map((c) => c.class))];
const rows: string[][] = [];
const wrong = { old: [] as string[], vad: [] as string[] };
for (const k of classes) {
  const of = clips.filter((c) => c.class === k);
  let old = 0;
  let vad = 0;
  for (const c of of) {
    const want = c.label === 'speech';
    if (peakGate(c.pcm) === want) old++;
    else wrong.old.push(c.file);
    if ((await vadGate(c.pcm, 8000)) === want) vad++;
    else wrong.vad.push(c.file);
  }
  rows.push([k, of[0]!.label, String(of.length), `${old}/${of.length}`, `${vad}/${of.length}`]);
}
const noise = clips.filter((c) => c.label === 'noise');
const speech = clips.filter((c) => c.label === 'speech');
const passed = async (gate: (p: Int16Array) => boolean | Promise<boolean>, set: typeof clips) => {
  let n = 0;
  for (const c of set) if (await gate(c.pcm)) n++;
  return n;
};
const table = (head: string[], body: string[][]) => {
  const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((x, i) => x.padEnd(w[i]!)).join(' | ')} |`;
  return [line(head), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...body.map(line)].join('\n');
};
console.log(`labelled set: ${clips.length} clips (${noise.length} noise, ${speech.length} speech), 8 kHz\n`);
console.log(table(['class', 'label', 'clips', 'peak gate right', 'VAD right'], rows));
const v8 = (p: Int16Array) => vadGate(p, 8000);
const v16 = (p: Int16Array) => vadGate(doubled(p), 16000);
console.log(
  `\nnoise passed as speech: peak gate ${await passed(peakGate, noise)}/${noise.length}, VAD ${await passed(v8, noise)}/${noise.length} (at 16 kHz: ${await passed(v16, noise)}/${noise.length})`,
);
const quiet = speech.filter((c) => c.class === 'quiet speech');
console.log(
  `speech dropped: peak gate ${speech.length - (await passed(peakGate, speech))}/${speech.length}, VAD ${speech.length - (await passed(v8, speech))}/${speech.length} (at 16 kHz: ${speech.length - (await passed(v16, speech))}/${speech.length}); quiet speech dropped: peak gate ${quiet.length - (await passed(peakGate, quiet))}/${quiet.length}, VAD ${quiet.length - (await passed(v8, quiet))}/${quiet.length}`,
);
console.log(`wrong: peak gate ${wrong.old.join(', ') || 'none'}; VAD ${wrong.vad.join(', ') || 'none'}`);

// CPU per minute of audio (one channel), the whole set run until about 20 s of CPU... or less
const cpuMs = (f: () => unknown) => {
  const a = process.cpuUsage();
  f();
  const d = process.cpuUsage(a);
  return (d.user + d.system) / 1000;
};
const audioSeconds = clips.reduce((a, c) => a + c.pcm.length / 8000, 0);
const detectors = new Map<number, VoiceDetector>();
for (const rate of [8000, 16000]) detectors.set(rate, await VoiceDetector.create(rate));
const sets = new Map<number, Int16Array[]>([
  [8000, clips.map((c) => c.pcm)],
  [16000, clips.map((c) => doubled(c.pcm))],
]);
const REPEATS = 20;
const perMinute = (ms: number) => (ms / (REPEATS * audioSeconds)) * 60;
const cpuRows: string[][] = [];
for (const rate of [8000, 16000]) {
  const set = sets.get(rate)!;
  const d = detectors.get(rate)!;
  // warm both up
  for (const p of set) peakGate(p);
  for (const p of set) d.push(p);
  d.endWindow();
  const samples = (gate: () => void) => {
    const runs: number[] = [];
    for (let r = 0; r < 5; r++) runs.push(cpuMs(gate));
    return runs.sort((a, b) => a - b)[2]!; // the median of 5
  };
  const old = samples(() => {
    for (let r = 0; r < REPEATS; r++) for (const p of set) peakGate(p);
  });
  const vad = samples(() => {
    for (let r = 0; r < REPEATS; r++)
      for (const p of set) {
        d.push(p);
        d.endWindow();
      }
  });
  cpuRows.push([
    `${rate / 1000} kHz`,
    perMinute(old).toFixed(2),
    perMinute(vad).toFixed(2),
    `${(vad / old).toFixed(0)}x`,
  ]);
}
for (const d of detectors.values()) d.close();
console.log(
  `\nCPU per minute of one channel's audio (median of 5 runs, each ${REPEATS} x ${audioSeconds.toFixed(0)} s of clips):\n`,
);
console.log(table(['rate', 'peak gate ms', 'VAD ms', 'VAD / peak'], cpuRows));

// the whole split of a one-minute stereo call, as the openai provider does it
const dir = mkdtempSync(join(tmpdir(), 'vad-bench-'));
try {
  const splitRows: string[][] = [];
  for (const [rate, kbps] of [
    [8000, 32],
    [16000, 64],
  ] as const) {
    const mp3 = stereoMp3({ seconds: 60, sampleRate: rate, kbps, ...INBOUND_TONES });
    const runs: number[] = [];
    for (let r = 0; r < 5; r++) {
      const a = process.cpuUsage();
      const s = await splitStereoMp3('bench', Readable.from([mp3]), dir, {
        maxWindowSeconds: 600,
        maxWindowBytes: 25 * 1024 * 1024,
        maxSeconds: 3600,
        memoryBytes: 4 * 1024 * 1024,
      });
      const d = process.cpuUsage(a);
      if (!s.windows[0]!.speech.every(Boolean)) throw new Error('the voiced tones should pass');
      runs.push((d.user + d.system) / 1000);
    }
    splitRows.push([`${rate / 1000} kHz`, runs.sort((a, b) => a - b)[2]!.toFixed(0)]);
  }
  console.log(
    '\nsplitStereoMp3 of a one-minute two-channel MP3 (decode, resample, WAV, VAD on both channels):\n',
  );
  console.log(table(['rate', 'CPU ms (median of 5)'], splitRows));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `\nNode ${process.version}, ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
