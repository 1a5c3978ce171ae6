import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { BATCH_BYTES, splitStereoMp3InThread } from '../../../src/capture/providers/split-thread.ts';
import { splitStereoMp3 } from '../../../src/capture/providers/wav.ts';
import { ProviderError } from '../../../src/domain/capture-providers.ts';
import { INBOUND_TONES, stereoMp3 } from '../../helpers/stereo-mp3.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callcap-split-thread-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const limits = { maxWindowSeconds: 600, maxWindowBytes: 25 * 1024 * 1024, maxSeconds: 3600 };

/** The MP3 as a stream of `chunk`-byte parts (many chunks: the thread's flow control is crossed). */
function streamOf(mp3: Buffer, chunk = 4096): Readable {
  const parts = [];
  for (let i = 0; i < mp3.length; i += chunk) parts.push(mp3.subarray(i, i + chunk));
  return Readable.from(parts);
}

test('in the thread, a split is the one made on the main thread: windows kept in memory, speech, levels', async () => {
  const mp3 = stereoMp3({ seconds: 3, ...INBOUND_TONES });
  const opts = { ...limits, maxWindowSeconds: 1, memoryBytes: 1 << 20 };
  const here = await splitStereoMp3('test', streamOf(mp3), join(dir, 'unused'), opts);
  const there = await splitStereoMp3InThread('test', streamOf(mp3), join(dir, 'unused'), opts);
  assert.ok(there.windows.length >= 3);
  assert.ok(Buffer.isBuffer(there.windows[0]!.wavs![0]));
  assert.deepEqual(there, here);
});

test('a recording longer than a batch goes to the thread in batches of BATCH_BYTES (one message each), split as on the main thread', async () => {
  const mp3 = stereoMp3({ seconds: 70, ...INBOUND_TONES });
  assert.ok(mp3.length > 2 * BATCH_BYTES, `${mp3.length} bytes`);
  const sizes: number[] = [];
  const postMessage = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (this: Worker, m: unknown, transfer?: readonly ArrayBuffer[]) {
    const msg = m as { t?: string; data?: Uint8Array };
    if (msg.t === 'chunk') sizes.push(msg.data!.byteLength);
    return postMessage.call(this, m, transfer as ArrayBuffer[]);
  };
  let there: Awaited<ReturnType<typeof splitStereoMp3InThread>>;
  try {
    there = await splitStereoMp3InThread('test', streamOf(mp3), join(dir, 'unused'), {
      ...limits,
      memoryBytes: 8 << 20,
    });
  } finally {
    Worker.prototype.postMessage = postMessage;
  }
  assert.equal(
    sizes.reduce((a, b) => a + b, 0),
    mp3.length,
  );
  assert.equal(sizes.length, Math.ceil(mp3.length / BATCH_BYTES));
  for (const n of sizes.slice(0, -1)) assert.equal(n, BATCH_BYTES); // 4 KiB reads add up to it exactly
  const here = await splitStereoMp3('test', streamOf(mp3), join(dir, 'unused'), {
    ...limits,
    memoryBytes: 8 << 20,
  });
  assert.deepEqual(there, here);
});

test('a window past memoryBytes goes to a folder made on demand by the caller, once, with the same bytes', async () => {
  const mp3 = stereoMp3({ seconds: 3, ...INBOUND_TONES });
  let made = 0;
  const folder = async () => {
    made++;
    const d = join(dir, `lazy-${made}`);
    await mkdir(d);
    return d;
  };
  const opts = { ...limits, memoryBytes: 50_000 };
  const there = await splitStereoMp3InThread('test', streamOf(mp3), folder, opts);
  assert.equal(made, 1);
  const files = there.windows[0]!.files;
  assert.deepEqual(files, [join(dir, 'lazy-1', 'agent-0.wav'), join(dir, 'lazy-1', 'customer-0.wav')]);
  await mkdir(join(dir, 'here'));
  const here = await splitStereoMp3('test', streamOf(mp3), join(dir, 'here'), opts);
  assert.deepEqual(
    await Promise.all(files.map((f) => readFile(f))),
    await Promise.all(here.windows[0]!.files.map((f) => readFile(f))),
  );
  assert.deepEqual(there.activity, here.activity);
});

test("the splitter's errors come back as they are: a ProviderError with its kind, too long and not MP3", async () => {
  const mp3 = stereoMp3({ seconds: 3, ...INBOUND_TONES });
  await assert.rejects(
    splitStereoMp3InThread('test', streamOf(mp3), join(dir, 'unused'), {
      ...limits,
      maxSeconds: 1,
      memoryBytes: 1 << 20,
    }),
    (err: unknown) =>
      err instanceof ProviderError &&
      err.provider === 'test' &&
      err.kind === 'too_large' &&
      err.message === 'the recording is longer than 1 seconds, the longest this service transcribes',
  );
  await assert.rejects(
    splitStereoMp3InThread('test', Readable.from([Buffer.alloc(5000, 7)]), join(dir, 'unused'), {
      ...limits,
      memoryBytes: 1 << 20,
    }),
    (err: unknown) =>
      err instanceof ProviderError &&
      err.kind === 'fatal' &&
      err.message === 'the recording holds no MP3 audio that could be decoded',
  );
});

test('an error reading the recording is the stream’s own error, after the thread has let the split go', async () => {
  const mp3 = stereoMp3({ seconds: 3, ...INBOUND_TONES });
  const failure = new Error('the disk went away');
  async function* broken() {
    yield mp3.subarray(0, 8192);
    yield mp3.subarray(8192, 16384);
    throw failure;
  }
  await assert.rejects(
    splitStereoMp3InThread('test', Readable.from(broken()), join(dir, 'unused'), {
      ...limits,
      memoryBytes: 1 << 20,
    }),
    (err: unknown) => err === failure,
  );
  // the thread goes on splitting the next recording
  const r = await splitStereoMp3InThread('test', streamOf(mp3), join(dir, 'unused'), {
    ...limits,
    memoryBytes: 1 << 20,
  });
  assert.equal(r.windows.length, 1);
});

test('the thread started ahead (warmUp) never holds the process open', async () => {
  const { execFile } = await import('node:child_process');
  const { writeFile } = await import('node:fs/promises');
  const url = new URL('../../../src/capture/providers/split-thread.ts', import.meta.url).href;
  // a script file: the same import from \`node -e\` did not show the old bug (a thread kept referenced)
  const script = join(dir, 'warm.ts');
  await writeFile(
    script,
    `import { startSplitThread } from ${JSON.stringify(url)};\nstartSplitThread();\nconsole.log('started');\n`,
  );
  const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = execFile(process.execPath, [script], { timeout: 60_000 }, (_err, stdout) =>
      resolve({ code: child.exitCode, stdout }),
    );
  });
  assert.deepEqual(out, { code: 0, stdout: 'started\n' });
});
