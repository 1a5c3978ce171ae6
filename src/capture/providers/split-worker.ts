import { Readable } from 'node:stream';
import { parentPort } from 'node:worker_threads';
import { giveBackDecoder, takeDecoder } from '../../recordings/decoders.ts';
import { ProviderError } from './types.ts';
import { VoiceDetector } from './vad.ts';
import { splitStereoMp3 } from './wav.ts';

/**
 * The worker thread of split-thread.ts: runs splitStereoMp3 (MP3 decode, resampling, PCM and WAV
 * writing, voice detection, talk-metric levels) off the service's main thread. Several splits run
 * in it at once, interleaved as splitStereoMp3's awaits allow. Messages: see split-thread.ts.
 */

interface Job {
  queue: Uint8Array[];
  ended: boolean;
  aborted: boolean;
  wake: (() => void) | null;
  dirWaiter: { resolve: (dir: string) => void; reject: (err: Error) => void } | null;
}

const port = parentPort;
if (!port) throw new Error('split-worker.ts runs in a worker thread');
const jobs = new Map<number, Job>();

async function* chunksOf(id: number, job: Job): AsyncGenerator<Uint8Array> {
  while (true) {
    if (job.aborted) throw new Error('the recording could not be read');
    const c = job.queue.shift();
    if (c) {
      port?.postMessage({ t: 'ack', id });
      yield c;
      continue;
    }
    if (job.ended) return;
    await new Promise<void>((resolve) => {
      job.wake = resolve;
    });
    job.wake = null;
  }
}

/** The job is over: a reader still waiting for a chunk ends (nothing more is read). */
function forget(id: number, job: Job): void {
  jobs.delete(id);
  job.aborted = true;
  job.wake?.();
}

port.on('message', (m: InMessage) => {
  if (m.t === 'warm') {
    // the WebAssembly of mpg123 and of the voice detector instantiated ahead of the first split
    takeDecoder().then(
      (d) => giveBackDecoder(d, true),
      () => {},
    );
    VoiceDetector.create(16_000).then(
      (v) => v.close(),
      () => {},
    );
    return;
  }
  if (m.t === 'start') {
    const job: Job = { queue: [], ended: false, aborted: false, wake: null, dirWaiter: null };
    jobs.set(m.id, job);
    const dir =
      m.dir ??
      (() =>
        new Promise<string>((resolve, reject) => {
          job.dirWaiter = { resolve, reject };
          port.postMessage({ t: 'needDir', id: m.id });
        }));
    splitStereoMp3(m.provider, Readable.from(chunksOf(m.id, job), { objectMode: false }), dir, m.limits).then(
      (result) => {
        forget(m.id, job);
        // the windows' WAV bytes moved, not copied (a buffer that cannot move, e.g. from Node's
        // small-buffer pool, is copied instead)
        const transfer: ArrayBuffer[] = [];
        for (const w of result.windows)
          for (const b of w.wavs ?? []) {
            const ab = b.buffer as ArrayBuffer;
            if (!transfer.includes(ab)) transfer.push(ab);
          }
        const done = { t: 'done', id: m.id, result };
        try {
          port.postMessage(done, transfer);
        } catch {
          port.postMessage(done);
        }
      },
      (err: unknown) => {
        forget(m.id, job);
        const e = err as Error & { code?: unknown };
        port.postMessage({
          t: 'error',
          id: m.id,
          error:
            err instanceof ProviderError
              ? { provider: err.provider, kind: err.kind, message: err.message }
              : {
                  message: String(e?.message ?? err),
                  code: typeof e?.code === 'string' ? e.code : undefined,
                },
        });
      },
    );
    return;
  }
  const job = jobs.get(m.id);
  if (!job) return;
  if (m.t === 'chunk') job.queue.push(m.data);
  else if (m.t === 'end') job.ended = true;
  else if (m.t === 'abort') job.aborted = true;
  else if (m.t === 'dir') {
    const w = job.dirWaiter;
    job.dirWaiter = null;
    if (m.dir !== null) w?.resolve(m.dir);
    else w?.reject(new Error(m.error ?? 'no folder for the windows'));
    return;
  }
  job.wake?.();
});

type InMessage =
  | { t: 'warm' }
  | {
      t: 'start';
      id: number;
      provider: string;
      dir: string | null;
      limits: { maxWindowSeconds: number; maxWindowBytes: number; maxSeconds: number; memoryBytes?: number };
    }
  | { t: 'chunk'; id: number; data: Uint8Array }
  | { t: 'end'; id: number }
  | { t: 'abort'; id: number }
  | { t: 'dir'; id: number; dir: string | null; error?: string };
