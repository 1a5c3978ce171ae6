/**
 * splitStereoMp3 (src/capture/providers/wav.ts: MP3 decode, resampling, 16-bit PCM and WAV, voice
 * activity, talk-metric levels — the audio thread's work per call) of the bench:capture recording
 * (a 5-second stereo MP3, stereoMp3({ seconds: 5, ...INBOUND_TONES })), this checkout's code beside
 * a base commit's, alternating in one process: CPU ms per split, of this thread and of the process
 * (the process's includes V8's GC helper threads). Both sides must give the same result, byte for
 * byte (checked on every recording of RECORDINGS before timing).
 *
 *   ./node_modules/.bin/node bench/split.ts [--base=<commit>, default: merge-base HEAD main] [--rounds=6] [--splits=200]
 *
 * The base's src/ is extracted (git archive) into .tmp/ and imported from there: its own decoder
 * pool and WebAssembly instances, warmed the same way.
 *
 * --side=base|new: 50 + --splits splits of that side only, nothing printed (for perf stat).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import type { splitStereoMp3 as Split, SplitResult } from '../src/capture/providers/wav.ts';
import { splitStereoMp3 } from '../src/capture/providers/wav.ts';
import { INBOUND_TONES, OUTBOUND_TONES, stereoMp3 } from '../test/helpers/stereo-mp3.ts';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '6' },
    splits: { type: 'string', default: '200' },
    side: { type: 'string' },
  },
});
const ROUNDS = Number(args.rounds);
const SPLITS = Number(args.splits);
const root = new URL('..', import.meta.url).pathname;
const git = (...a: string[]) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
// default: where this branch left main
const baseCommit = git('rev-parse', '--short', args.base ?? git('merge-base', 'HEAD', 'main'));
const baseDir = join(root, '.tmp', `split-base-${process.pid}`);
mkdirSync(baseDir, { recursive: true });
execFileSync('sh', ['-c', `git archive ${baseCommit} src package.json | tar -x -C ${baseDir}`], {
  cwd: root,
});
const base = (
  (await import(pathToFileURL(join(baseDir, 'src/capture/providers/wav.ts')).href)) as {
    splitStereoMp3: typeof Split;
  }
).splitStereoMp3;

/** The openai provider's limits (openai-transcription.ts): 600 s windows, kept in memory up to 1 MB. */
const LIMITS = {
  maxWindowSeconds: 600,
  maxWindowBytes: 25 * 1024 * 1024,
  maxSeconds: 4 * 3600,
  memoryBytes: 1024 * 1024,
};
const noDir = () => Promise.reject(new Error('the bench keeps every window in memory'));
const run = (split: typeof Split, mp3: Buffer, chunk = 64 * 1024, limits = LIMITS): Promise<SplitResult> => {
  const parts: Buffer[] = [];
  for (let i = 0; i < mp3.length; i += chunk) parts.push(mp3.subarray(i, i + chunk));
  return split('bench', Readable.from(parts), noDir, limits);
};

const mp3 = stereoMp3({ seconds: 5, ...INBOUND_TONES });
if (args.side) {
  // one side only, for a count of instructions: perf stat -e instructions:u, at --splits=0 and at
  // --splits=N (the difference over N is one split's; the recordings' encoding and the warm-up cancel out)
  const split = args.side === 'base' ? base : splitStereoMp3;
  for (let i = 0; i < 50; i++) await run(split, mp3);
  for (let i = 0; i < SPLITS; i++) await run(split, mp3);
  rmSync(baseDir, { recursive: true, force: true });
  process.exit(0);
}
// the same results, every field and every WAV byte
const RECORDINGS: [string, Buffer, number?, typeof LIMITS?][] = [
  ['bench:capture (5 s, 16 kHz)', mp3],
  ['outbound 7 s, 4 kB chunks', stereoMp3({ seconds: 7, ...OUTBOUND_TONES }), 4096],
  ['one side silent, 3 s', stereoMp3({ seconds: 3, left: 1000, right: null })],
  ['8 kHz, 6 s', stereoMp3({ seconds: 6, sampleRate: 8000, kbps: 32, ...INBOUND_TONES })],
  [
    '22.05 kHz (resampled, VAD at 8 kHz), 4 s',
    stereoMp3({ seconds: 4, sampleRate: 22050, kbps: 64, ...INBOUND_TONES }),
  ],
  [
    '44.1 kHz (resampled), 4 s, 2 s windows',
    stereoMp3({ seconds: 4, sampleRate: 44100, kbps: 128, ...INBOUND_TONES }),
    1000,
    { ...LIMITS, maxWindowSeconds: 2 },
  ],
];
for (const [name, mp3, chunk, limits] of RECORDINGS) {
  const a = await run(base, mp3, chunk, limits);
  const b = await run(splitStereoMp3, mp3, chunk, limits);
  if (!isDeepStrictEqual(a, b)) throw new Error(`${name}: the results differ`);
}
console.log(`same results on ${RECORDINGS.length} recordings\n`);

const cpu = async (split: typeof Split) => {
  const t = process.threadCpuUsage();
  const p = process.cpuUsage();
  for (let i = 0; i < SPLITS; i++) await run(split, mp3);
  const dt = process.threadCpuUsage(t);
  const dp = process.cpuUsage(p);
  return { thread: (dt.user + dt.system) / 1000 / SPLITS, process: (dp.user + dp.system) / 1000 / SPLITS };
};
// warm both (JIT, WebAssembly tiers, decoder pools)
await cpu(base);
await cpu(splitStereoMp3);
const rows: string[] = [];
const ratios: number[] = [];
const pratios: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const first = r % 2 === 0;
  const x = first ? await cpu(base) : await cpu(splitStereoMp3);
  const y = first ? await cpu(splitStereoMp3) : await cpu(base);
  const [b, n] = first ? [x, y] : [y, x];
  ratios.push(n.thread / b.thread);
  pratios.push(n.process / b.process);
  rows.push(
    `| ${r + 1} | ${first ? 'base' : 'new'} | ${b.thread.toFixed(3)} | ${n.thread.toFixed(3)} | ${(n.thread / b.thread).toFixed(3)} | ${b.process.toFixed(3)} | ${n.process.toFixed(3)} | ${(n.process / b.process).toFixed(3)} |`,
  );
}
console.log(
  `CPU ms per split of the bench:capture recording, ${SPLITS} splits per side per round, base ${baseCommit}\n`,
);
console.log(
  '| round | first | base thread | new thread | new/base | base process | new process | new/base |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
const sorted = ratios.slice().sort((a, b) => a - b);
const psorted = pratios.slice().sort((a, b) => a - b);
console.log(
  `\nnew/base medians over the rounds: thread ${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)}, process ${psorted[Math.floor(psorted.length / 2)]!.toFixed(3)}`,
);
console.log(
  `Node ${process.version}, ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
rmSync(baseDir, { recursive: true, force: true });
