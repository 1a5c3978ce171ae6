/**
 * One long-lived test process of `npm test` (scripts/run-tests.ts starts TEST_CONCURRENCY of them):
 * it runs the test files the runner sends it over IPC, one after another, so the service's modules
 * (Fastify, the AWS SDK, pg, zod, ~250 TypeScript files stripped at load) are imported once per
 * process instead of once per file.
 *
 * Each file runs as one top-level suite named by its path (`describe(file, () => import(file))`), so
 * its top-level `before`/`after` hooks and tests belong to that suite exactly as they belong to the
 * file when it runs alone, and its results are reported under its name (test-worker-reporter.ts
 * marks the end of each file for the runner).
 *
 * Between files the process is put back as the file found it:
 * - `process.env` is restored (a file that sets a variable does not leak it into the next one);
 * - listeners the file added to `process` are removed;
 * - the file is not done until what it opened is closed again: the resources that keep the event
 *   loop alive (`process.getActiveResourcesInfo()`: servers, sockets, timers, child processes,
 *   database handles…) are back to what they were before it started. A file that leaves one open
 *   hangs here, as it would hang its own process, and the runner kills it at its bound and names it
 *   with what was still open.
 *
 * A helper may keep one thing for the whole process instead of one per file (the browser tests'
 * Chromium, test/helpers/browser.ts): it unrefs that thing's handles, so they neither keep the
 * process alive nor count among a file's open resources, and pushes a closer onto
 * `globalThis[Symbol.for(WORKER_AT_EXIT)]`, which exists only in this process; the worker awaits
 * every closer before it exits, so what the helper kept is closed and reaped here.
 */
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';

type Msg = { run: string } | { exit: true };

/** The registry of closers of what helpers keep for the process (see above); browser.ts names the same key. */
const WORKER_AT_EXIT = 'callcap.test-worker.at-exit';
const atExit: (() => Promise<void>)[] = [];
(globalThis as Record<symbol, unknown>)[Symbol.for(WORKER_AT_EXIT)] = atExit;

const send = (msg: unknown) => new Promise<void>((resolve) => process.send?.(msg, () => resolve()));

/**
 * Listed by getActiveResourcesInfo() but not keeping a process alive: the reader of a file Blob
 * (`fs.openAsBlob`) whose stream was cancelled (fetch uploads the transcription providers' audio
 * that way; a provider that answers before reading it all cancels it) stays listed for good.
 */
const NOT_HOLDING = new Set(['FileHandleReadWrap']);

/** Resource kinds → how many are open; what keeps the event loop alive right now. */
function openResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (!NOT_HOLDING.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

/** What is open now beyond `base`, e.g. ["TCPServerWrap", "Timeout ×2"]; empty when nothing is. */
function leftOpen(base: Map<string, number>): string[] {
  const extra: string[] = [];
  for (const [kind, n] of openResources()) {
    const more = n - (base.get(kind) ?? 0);
    if (more > 0) extra.push(more > 1 ? `${kind} ×${more}` : kind);
  }
  return extra;
}

/** `process` as the plain emitter it is, for listing and removing listeners of any event. */
const emitter = process as unknown as NodeJS.EventEmitter;
const PROCESS_EVENTS = [
  'beforeExit',
  'exit',
  'uncaughtException',
  'unhandledRejection',
  'warning',
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
] as const;

async function runFile(file: string): Promise<void> {
  const env = { ...process.env };
  const listeners = new Map(PROCESS_EVENTS.map((e) => [e, new Set(emitter.listeners(e))]));
  const base = openResources();
  const started = performance.now();
  // The runner's IPC 'open' report tells it what is still open while the file hangs.
  const watch = setInterval(() => {
    void send({ open: leftOpen(base) });
  }, 1_000).unref();
  try {
    await describe(file, async () => {
      await import(pathToFileURL(file).href);
    });
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
    Object.assign(process.env, env);
    for (const [event, before] of listeners) {
      for (const l of emitter.listeners(event)) {
        if (!before.has(l)) emitter.removeListener(event, l as (...args: unknown[]) => void);
      }
    }
  }
  // Closed things finish closing on the next turns of the loop; wait for them, without a deadline of
  // our own (the runner's per-file bound is the deadline), polling cheaply.
  const closing = performance.now();
  let waitedFor: string[] = [];
  for (let open = leftOpen(base); open.length > 0; open = leftOpen(base)) {
    waitedFor = open;
    await new Promise((r) => setTimeout(r, 10).unref());
  }
  clearInterval(watch);
  const waitMs = performance.now() - closing;
  await send({ done: file, testsMs: closing - started, waitMs, waitedFor, rss: process.memoryUsage.rss() });
}

process.on('message', (msg: Msg) => {
  if ('exit' in msg) {
    void Promise.allSettled(atExit.map((close) => close())).then(() => process.disconnect());
    return;
  }
  void runFile(msg.run);
});
void send({ ready: true });
