import { availableParallelism } from 'node:os';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { ProviderError, type ProviderErrorKind } from '../../domain/capture-providers.ts';
import type { SplitResult } from './wav.ts';

/**
 * splitStereoMp3 (wav.ts) in a worker thread: the MP3 decode, resampling, PCM and WAV writing, the
 * voice detector and the talk metrics' levels — ~6 ms of CPU per one-minute call — run beside the
 * service's main thread instead of on it. The main thread answers PostgreSQL: while it decodes,
 * connections it holds inside transactions wait for it (docs/benchmarks.md, issue 16). The recording
 * is still read here as it streams (the store is the main thread's), its chunks copied to the thread
 * in batches of BATCH_BYTES (one message and one acknowledgement each, not one per 64 KiB read); at
 * most IN_FLIGHT_CHUNKS batches wait there, so memory holds a few batches, never the recording.
 * Windows kept in memory come back moved, not copied; a window written to disk is written by the
 * thread into the folder the caller makes (asked for only when needed, as splitStereoMp3 does).
 *
 * The result and errors are splitStereoMp3's: a ProviderError comes back as one (provider, kind,
 * message), any other error of the thread as an Error with its message and code; an error reading
 * the recording is the stream's own, as it was. SPLIT_THREADS threads, made when first needed, kept
 * while the process lives (unreferenced while idle, so they never hold it open).
 */

/** Batches of the recording waiting in the thread before reading pauses. */
const IN_FLIGHT_CHUNKS = 2;
/** The recording goes to the thread in messages of at least this many bytes (its last one shorter). */
export const BATCH_BYTES = 256 * 1024;
/** one thread per core beyond the main thread's, at least one, at most two */
const SPLIT_THREADS = Math.max(1, Math.min(2, availableParallelism() - 1));

/** splitStereoMp3's limits */
interface Limits {
  maxWindowSeconds: number;
  maxWindowBytes: number;
  maxSeconds: number;
  memoryBytes?: number;
}

interface Pending {
  resolve(r: SplitResult): void;
  reject(e: Error): void;
  onAck(): void;
  onNeedDir(): void;
}

interface Thread {
  worker: Worker;
  jobs: Map<number, Pending>;
}

const threads: Thread[] = [];
let nextId = 1;

function startThread(): Thread {
  const worker = new Worker(new URL('./split-worker.ts', import.meta.url));
  const t: Thread = { worker, jobs: new Map() };
  worker.on('message', (m: OutMessage) => {
    const job = t.jobs.get(m.id);
    if (!job) return;
    if (m.t === 'ack') job.onAck();
    else if (m.t === 'needDir') job.onNeedDir();
    else {
      t.jobs.delete(m.id);
      if (t.jobs.size === 0) worker.unref();
      if (m.t === 'done') job.resolve(revive(m.result));
      else job.reject(errorOf(m.error));
    }
  });
  const fail = (err: Error) => {
    const i = threads.indexOf(t);
    if (i >= 0) threads.splice(i, 1);
    const jobs = [...t.jobs.values()];
    t.jobs.clear();
    for (const j of jobs) j.reject(new Error(`the audio thread stopped: ${err.message}`, { cause: err }));
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  // after the listeners: adding a 'message' listener references the worker's port again
  worker.unref();
  return t;
}

function pick(): Thread {
  if (threads.length < SPLIT_THREADS) {
    const idle = threads.find((t) => t.jobs.size === 0);
    if (idle) return idle;
    const t = startThread();
    threads.push(t);
    return t;
  }
  let best = threads[0]!;
  for (const t of threads) if (t.jobs.size < best.jobs.size) best = t;
  return best;
}

/**
 * Starts the first thread now if none runs (a worker's start: src/worker.ts), so that the first
 * transcription does not wait for it — a thread's start (its isolate, the modules, mpg123's and the
 * voice detector's WebAssembly) costs ~0.5 s of CPU once. Unreferenced: it never holds the process open.
 */
export function startSplitThread(): void {
  if (threads.length > 0) return;
  const t = startThread();
  threads.push(t);
  t.worker.postMessage({ t: 'warm' });
}

/** splitStereoMp3(provider, mp3, dir, limits), in a worker thread. */
export async function splitStereoMp3InThread(
  provider: string,
  mp3: Readable,
  dir: string | (() => Promise<string>),
  limits: Limits,
): Promise<SplitResult> {
  const t = pick();
  const id = nextId++;
  let inFlight = 0;
  let wake: (() => void) | null = null;
  let settled = false;
  const post = (m: unknown, transfer?: ArrayBuffer[]) => {
    if (!settled) t.worker.postMessage(m, transfer);
  };
  const result = new Promise<SplitResult>((resolve, reject) => {
    const end = () => {
      settled = true;
      wake?.();
    };
    t.jobs.set(id, {
      resolve: (r) => {
        end();
        resolve(r);
      },
      reject: (e) => {
        end();
        reject(e);
      },
      onAck: () => {
        inFlight--;
        wake?.();
      },
      onNeedDir: () => {
        if (typeof dir === 'string') return;
        dir().then(
          (d) => post({ t: 'dir', id, dir: d }),
          (err: unknown) => post({ t: 'dir', id, dir: null, error: (err as Error)?.message ?? String(err) }),
        );
      },
    });
  });
  result.catch(() => {}); // awaited below; a rejection while the recording is still read is not unhandled
  t.worker.ref();
  t.worker.postMessage({ t: 'start', id, provider, dir: typeof dir === 'string' ? dir : null, limits });
  let readFailed = false;
  let readError: unknown;
  try {
    // the recording's chunks (fresh buffers from the store's stream) go in batches: one copy, one
    // message and one ack per BATCH_BYTES instead of per 64 KiB read
    let batch: Uint8Array[] = [];
    let batched = 0;
    const send = async () => {
      const data = new Uint8Array(batched); // a copy, moved to the thread
      let at = 0;
      for (const c of batch) {
        data.set(c, at);
        at += c.byteLength;
      }
      batch = [];
      batched = 0;
      post({ t: 'chunk', id, data }, [data.buffer]);
      inFlight++;
      while (inFlight >= IN_FLIGHT_CHUNKS && !settled)
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      wake = null;
    };
    for await (const chunk of mp3) {
      if (settled) break; // the thread ended it (an error, too long): stop reading, as the decode loop did
      batch.push(chunk as Uint8Array);
      batched += (chunk as Uint8Array).byteLength;
      if (batched >= BATCH_BYTES) await send();
    }
    if (batched > 0 && !settled) await send();
    post({ t: 'end', id });
  } catch (err) {
    readFailed = true;
    readError = err;
    post({ t: 'abort', id });
  }
  // the thread is done with the job (and its files closed) before this answers, even after a read error
  try {
    const r = await result;
    if (readFailed) throw readError;
    return r;
  } catch (err) {
    throw readFailed ? readError : err;
  }
}

/** The windows' WAV bytes arrive as Uint8Arrays: Buffers again, over the same memory. */
function revive(r: SplitResult): SplitResult {
  for (const w of r.windows) {
    const wavs = w.wavs as [Uint8Array, Uint8Array] | undefined;
    if (wavs)
      w.wavs = [
        Buffer.from(wavs[0].buffer, wavs[0].byteOffset, wavs[0].byteLength),
        Buffer.from(wavs[1].buffer, wavs[1].byteOffset, wavs[1].byteLength),
      ];
  }
  return r;
}

function errorOf(e: ThreadError): Error {
  if (e.kind !== undefined && e.provider !== undefined)
    return new ProviderError(e.provider, e.kind, e.message);
  const err = new Error(e.message) as Error & { code?: string };
  if (e.code !== undefined) err.code = e.code;
  return err;
}

interface ThreadError {
  message: string;
  provider?: string;
  kind?: ProviderErrorKind;
  code?: string;
}

type OutMessage =
  | { t: 'ack'; id: number }
  | { t: 'needDir'; id: number }
  | { t: 'done'; id: number; result: SplitResult }
  | { t: 'error'; id: number; error: ThreadError };
