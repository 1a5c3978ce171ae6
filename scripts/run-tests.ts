/**
 * npm test — runs every test file under a whole-file bound, so a hang is a red run that names the file.
 *
 * The files run in TEST_CONCURRENCY long-lived worker processes (default 2, scripts/test-worker.ts),
 * each running the files it is handed one after another, so the service's modules are imported once
 * per worker rather than once per file (1.1–1.3 s each). A file runs there as one suite named by its
 * path: its own before/after hooks, tests and output, reported under its name. Between files the
 * worker restores `process.env`, drops the `process` listeners the file added, and waits until
 * everything the file opened is closed again. A worker whose memory passed TEST_WORKER_MAX_RSS_MB
 * (default 1500) is replaced by a fresh one before its next file. TEST_ISOLATION=process runs each
 * file in its own `node --test` process instead (the fault suite does: it kills processes).
 *
 * Why not plain `node --test`: its --test-timeout bounds each test, but a file whose tests all
 * finished while something they started is still open (a server, worker, receiver or database
 * pool not closed in `finally` / `after`) keeps its process alive, and the run waits for it
 * forever. Here such a file is killed after TEST_FILE_TIMEOUT_MS (default 10 min) and reported with
 * what was still open; its worker is replaced and the run goes on.
 *
 * A worker that dies of a crash of the runtime itself (a signal such as V8's fatal-check SIGTRAP, not
 * a failed assertion, an exit code or the file timeout) loses the coverage of every file it ran: that
 * file and the worker's earlier files run once more in a fresh worker, the crash's output printed and
 * named again in the totals; a second crash on the same file fails it (CRASH_SIGNALS).
 *
 * Usage: node scripts/run-tests.ts <glob or file>… Prints one line per passing file, with its wall time
 * and its CPU (the worker's and that of every process the file started and closed: services, CLIs,
 * Chromium; Linux) and the sum of both at the end (and the lines
 * of its output that match TEST_ECHO, a regular expression), the whole output of a failing one, and
 * totals; exits 1 when any file failed or was killed.
 *
 * COVERAGE=1 also measures line, branch and function coverage of src/ and sdk/src/ over every process
 * the files start (V8's own coverage, NODE_V8_COVERAGE, reported by c8), prints the summary, and
 * exits 1 when a figure is below its floor in .c8rc.json (CI sets it; the floors only ever rise).
 *
 * Every process the run starts uses Node's compile cache (NODE_COMPILE_CACHE, .tmp/compile-cache
 * unless set), except under COVERAGE=1.
 *
 * Files run longest first (durations of the last run on this checkout, .tmp/test-times.json), so
 * the slowest file does not start last and leave one core idle at the end.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { globSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { END_MARK } from './test-worker-reporter.ts';

const PER_TEST_TIMEOUT_MS = 120_000;
/**
 * Signals of a crash of the runtime itself (V8's fatal checks raise SIGTRAP). A worker ended by one
 * takes with it the coverage of every file it ran, and the file it was running did not fail on its
 * own assertions: that file and the worker's earlier files run again, once, in a fresh worker (a
 * second crash of any of them fails it). SIGKILL (the OOM killer, or this runner's file timeout) and
 * a non-zero exit code are not crashes: they fail the file as they are.
 */
const CRASH_SIGNALS = new Set(['SIGTRAP', 'SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGABRT', 'SIGFPE']);
const fileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS) || 10 * 60_000;
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY) || 2);
const isolation = process.env.TEST_ISOLATION === 'process' ? 'process' : 'worker';
const maxWorkerRss = (Number(process.env.TEST_WORKER_MAX_RSS_MB) || 1500) * 1024 * 1024;
/** Lines of a passing file's output to print too (a regular expression): the fault suite's tallies. */
const echo = process.env.TEST_ECHO ? new RegExp(process.env.TEST_ECHO) : null;

const patterns = process.argv.slice(2);
const TIMES_FILE = '.tmp/test-times.json';
const lastTimes: Record<string, number> = (() => {
  try {
    return JSON.parse(readFileSync(TIMES_FILE, 'utf8'));
  } catch {
    return {};
  }
})();
// Longest first; a file never timed goes first too (it may be long), then by name.
const files = [...new Set(patterns.flatMap((p) => globSync(p)))]
  .sort()
  .sort((a, b) => (lastTimes[b] ?? Infinity) - (lastTimes[a] ?? Infinity) || 0);
if (files.length === 0) {
  console.error(`No test files match ${patterns.join(' ')}`);
  process.exit(1);
}
const coverageDir = process.env.COVERAGE === '1' ? '.tmp/coverage' : null;
if (coverageDir) {
  rmSync(coverageDir, { recursive: true, force: true });
  mkdirSync(`${coverageDir}/v8`, { recursive: true });
}
// Node's compile cache for every process the files start (the workers, and the services, CLIs and
// scripts the tests spawn): compiled code is reused across runs, keyed by the source's hash. Not
// under coverage, which must see every function compiled as it runs.
const childEnv = coverageDir
  ? { ...process.env, NODE_V8_COVERAGE: resolve(coverageDir, 'v8') }
  : { ...process.env, NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? resolve('.tmp/compile-cache') };

interface Outcome {
  file: string;
  ok: boolean;
  timedOut: boolean;
  /** Why a file without a failing test failed: its process died, or what it left open. */
  note?: string;
  /** How long the file's worker waited, after its tests, for what they opened to close. */
  closing?: { ms: number; open: string[] };
  ms: number;
  /** CPU (user + sys) of the file's process and every process it started and reaped, ms (Linux). */
  cpuMs?: number;
  counts: Record<string, number>;
  output: string;
}

/**
 * User + system CPU of a process and of its children it has waited for (the services, CLIs and
 * browsers a file starts and closes count towards it), ms; NaN off Linux.
 */
function cpuOf(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}
const TICKS_PER_SECOND = 100;

const running = new Set<ChildProcess>();
const killGroup = (child: ChildProcess) => {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of running) killGroup(child);
    process.exit(130);
  });
}

/** Its own process group, so a kill takes the processes its tests spawned too. */
function start(args: string[], ipc: boolean): ChildProcess {
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? (['ipc'] as const) : [])],
    detached: true,
    env: childEnv,
  });
  running.add(child);
  child.on('close', () => running.delete(child));
  return child;
}

/** TEST_ISOLATION=process: one `node --test` process per file. */
function runFileAlone(file: string): Promise<Outcome> {
  const started = performance.now();
  const child = start(
    ['--test', '--test-reporter=spec', `--test-timeout=${PER_TEST_TIMEOUT_MS}`, file],
    false,
  );
  let output = '';
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, fileTimeoutMs);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      const counts: Record<string, number> = {};
      for (const m of output.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm))
        counts[m[1]] = Number(m[2]);
      resolve({
        file,
        ok: code === 0 && !timedOut,
        timedOut,
        ms: performance.now() - started,
        counts,
        output,
      });
    });
  });
}

type WorkerMessage =
  | { ready: true }
  | { open: string[] }
  | { done: string; testsMs: number; waitMs: number; waitedFor: string[]; rss: number };

/**
 * A worker process (scripts/test-worker.ts) and the file it runs. Its stdout and stderr are one
 * stream (merged by the shell), so what a file's tests print stays in order with its spec lines.
 */
class Worker {
  readonly child: ChildProcess;
  private readonly ready: Promise<boolean>;
  private current: {
    file: string;
    started: number;
    cpuStart: number;
    output: string;
    end?: { ok: boolean; counts: Record<string, number> };
    done?: { rss: number; waitMs: number; waitedFor: string[] };
    open: string[];
    lateFailure?: string;
    settle: (o: Outcome) => void;
    timer: NodeJS.Timeout;
  } | null = null;
  private pending = '';
  private exited: { code: number | null; signal: string | null } | null = null;
  filesRun = 0;

  constructor() {
    const reporter = pathToFileURL(resolve(import.meta.dirname, 'test-worker-reporter.ts')).href;
    const worker = resolve(import.meta.dirname, 'test-worker.ts');
    this.child = spawn(
      '/bin/sh',
      [
        '-c',
        'exec "$0" "$@" 2>&1',
        process.execPath,
        `--test-reporter=${reporter}`,
        '--test-reporter-destination=stdout',
        `--test-timeout=${PER_TEST_TIMEOUT_MS}`,
        worker,
      ],
      { stdio: ['ignore', 'pipe', 'ignore', 'ipc'], detached: true, env: childEnv },
    );
    running.add(this.child);
    this.child.stdout?.on('data', (c: Buffer) => this.onOutput(c.toString()));
    this.ready = new Promise((resolve) => {
      this.child.on('message', (msg: WorkerMessage) => {
        if ('ready' in msg) resolve(true);
        else if ('open' in msg && this.current) this.current.open = msg.open;
        else if ('done' in msg && this.current) {
          this.current.done = { rss: msg.rss, waitMs: msg.waitMs, waitedFor: msg.waitedFor };
          this.settleIfComplete();
        }
      });
      this.child.on('close', (code, signal) => {
        running.delete(this.child);
        this.exited = { code, signal };
        resolve(false);
        const c = this.current;
        if (!c) return;
        this.finish(
          false,
          c.end?.counts ?? {},
          `the test process exited (${signal ?? `code ${code}`}) while running this file`,
        );
      });
    });
  }

  get rss(): number {
    return this.lastRss;
  }
  private lastRss = 0;

  /** Runs one file; resolves with its outcome (the worker may be dead after a failure: check alive). */
  async run(file: string): Promise<Outcome> {
    const started = performance.now();
    if (!(await this.ready) || this.exited) {
      return {
        file,
        ok: false,
        timedOut: false,
        ms: 0,
        counts: {},
        output: '',
        note: 'the test process did not start',
      };
    }
    this.filesRun++;
    return new Promise((settle) => {
      const timer = setTimeout(() => {
        const c = this.current;
        if (!c) return;
        const open = c.open.length ? ` Still open: ${c.open.join(', ')}.` : '';
        this.killed = true;
        this.finish(false, c.end?.counts ?? {}, `killed after ${fileTimeoutMs / 1000} s.${open}`, true);
        killGroup(this.child);
      }, fileTimeoutMs);
      const cpuStart = cpuOf(this.child.pid);
      this.current = { file, started, cpuStart, output: '', open: [], settle, timer };
      this.child.send({ run: file });
    });
  }

  private killed = false;
  get alive(): boolean {
    return !this.exited && !this.killed;
  }

  /** The signal of a runtime crash that ended this worker (V8's fatal checks raise SIGTRAP), or null. */
  get crash(): string | null {
    const s = this.exited?.signal;
    return s && !this.killed && CRASH_SIGNALS.has(s) ? s : null;
  }

  /** Ends the worker: it exits by itself (writing its coverage) once it has no file left. */
  async stop(): Promise<void> {
    if (this.exited) return;
    if (this.killed) {
      await new Promise((resolve) => this.child.once('close', resolve));
      return;
    }
    const closed = new Promise((resolve) => this.child.once('close', resolve));
    this.child.send({ exit: true });
    const killer = setTimeout(() => {
      console.log('✖ a test worker did not exit within 60 s of its last file and was killed');
      killGroup(this.child);
    }, 60_000);
    await closed;
    clearTimeout(killer);
  }

  private onOutput(text: string): void {
    this.pending += text;
    let i = this.pending.indexOf(END_MARK);
    while (i >= 0) {
      const nl = this.pending.indexOf('\n', i);
      if (nl < 0) break;
      this.append(this.pending.slice(0, i));
      const end = JSON.parse(this.pending.slice(i + END_MARK.length, nl));
      this.pending = this.pending.slice(nl + 1);
      if (this.current && end.file === this.current.file) {
        this.current.end = end;
        this.settleIfComplete();
      } else if (this.current) {
        // Something a finished file left running failed later (e.g. an error no test awaited): the
        // file it ran in now fails, with what was reported.
        this.current.lateFailure = `a failure was reported under ${end.file} after that file had ended`;
      }
      i = this.pending.indexOf(END_MARK);
    }
    // Keep a partial marker back until its line is complete.
    const keep = this.pending.lastIndexOf('\u0001');
    if (keep < 0) {
      this.append(this.pending);
      this.pending = '';
    } else {
      this.append(this.pending.slice(0, keep));
      this.pending = this.pending.slice(keep);
    }
  }

  private append(text: string): void {
    if (this.current) this.current.output += text;
  }

  private settleIfComplete(): void {
    const c = this.current;
    if (!c?.end || !c.done) return;
    this.lastRss = c.done.rss;
    const closing = { ms: c.done.waitMs, open: c.done.waitedFor };
    this.finish(c.end.ok && !c.lateFailure, c.end.counts, c.lateFailure, false, closing);
  }

  private finish(
    ok: boolean,
    counts: Record<string, number>,
    note?: string,
    timedOut = false,
    closing?: Outcome['closing'],
  ): void {
    const c = this.current;
    if (!c) return;
    this.current = null;
    clearTimeout(c.timer);
    c.settle({
      file: c.file,
      ok,
      timedOut,
      note,
      closing,
      ms: performance.now() - c.started,
      cpuMs: cpuOf(this.child.pid) - c.cpuStart,
      counts,
      output: c.output,
    });
  }
}

function report(o: Outcome): void {
  const cpu =
    o.cpuMs !== undefined && Number.isFinite(o.cpuMs) ? `, ${(o.cpuMs / 1000).toFixed(1)} s CPU` : '';
  const secs = `${(o.ms / 1000).toFixed(1)} s${cpu}`;
  if (o.ok) {
    const skipped = o.counts.skipped ? `, ${o.counts.skipped} skipped` : '';
    // A file that keeps something open after its tests makes the run wait: say so when it is long.
    const closing =
      o.closing && o.closing.ms >= 1000
        ? `; ${(o.closing.ms / 1000).toFixed(1)} s of it waiting for ${o.closing.open.join(', ')} to close`
        : '';
    console.log(`✔ ${o.file} (${o.counts.pass ?? 0} passed${skipped}, ${secs}${closing})`);
    if (echo) {
      for (const line of o.output.split('\n')) if (echo.test(line)) console.log(`    ${line.trim()}`);
    }
    return;
  }
  console.log(`\n✖ ${o.file} (${secs})\n${o.output.trimEnd()}`);
  if (o.timedOut) {
    console.log(
      `✖ ${o.file} did not finish within ${fileTimeoutMs / 1000} s and was killed. If its tests passed, ` +
        'something it started is still open: close every server, worker, receiver and database in `finally` / `after`.',
    );
  }
  if (o.note) console.log(`✖ ${o.file}: ${o.note}`);
  console.log('');
}

const started = performance.now();
/** the last outcome of each file (a file run again after a worker crash keeps its second one) */
const lastOutcome = new Map<string, Outcome>();
const queue = [...files];
const done = (o: Outcome) => {
  report(o);
  lastOutcome.set(o.file, o);
};
/** files a worker crashed on once: a second crash fails them */
const crashedOnce = new Set<string>();
await Promise.all(
  Array.from({ length: Math.min(concurrency, files.length) }, async () => {
    if (isolation === 'process') {
      for (let file = queue.shift(); file; file = queue.shift()) done(await runFileAlone(file));
      return;
    }
    let worker: Worker | null = null;
    /** the files the current worker ran: their coverage is written when it exits */
    let ranHere: string[] = [];
    for (let file = queue.shift(); file; file = queue.shift()) {
      if (ownProcess(file)) {
        done(await runFileAlone(file));
        continue;
      }
      if (worker && (!worker.alive || worker.rss > maxWorkerRss)) {
        await worker.stop();
        worker = null;
      }
      if (!worker) {
        worker = new Worker();
        ranHere = [];
      }
      const o = await worker.run(file);
      const crash = worker.crash;
      if (crash && !crashedOnce.has(file)) {
        crashedOnce.add(file);
        const again = [file, ...ranHere];
        console.log(
          `\n✖ ${file}: the test worker crashed (${crash}) while running it\n${o.output.trimEnd()}`,
        );
        console.log(
          `ℹ a crash of the runtime, not a failed assertion: ${file} and the ${again.length - 1} files that worker had ` +
            'run (their coverage was lost with it) run again in a fresh worker; a second crash on it fails it\n',
        );
        queue.unshift(...again);
        worker = null;
        ranHere = [];
        continue;
      }
      done(o);
      ranHere.push(file);
    }
    await worker?.stop();
  }),
);

/**
 * A file that says `// @test-isolation process` near its top runs in a process of its own even in
 * worker mode: one whose peak memory would otherwise be added to a long-lived worker's (the PII
 * end-to-end test decodes hours of audio), so that a worker killed by it does not take the other
 * files' coverage with it.
 */
function ownProcess(file: string): boolean {
  return readFileSync(file, 'utf8').slice(0, 4000).includes('// @test-isolation process');
}

const outcomes = [...lastOutcome.values()];
const sum = (k: string) => outcomes.reduce((n, o) => n + (o.counts[k] ?? 0), 0);
const failed = outcomes.filter((o) => !o.ok);
console.log(
  `ℹ files ${outcomes.length}, failed ${failed.length} · tests ${sum('tests')} · pass ${sum('pass')} · fail ${sum('fail')}` +
    ` · cancelled ${sum('cancelled')} · skipped ${sum('skipped')} · ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
for (const o of failed) console.log(`✖ ${o.file}${o.timedOut ? ' (killed: file timeout)' : ''}`);
if (crashedOnce.size > 0) {
  console.log(
    `ℹ a test worker crashed (the runtime, not an assertion) on ${[...crashedOnce].join(', ')}: ` +
      'those files and the ones that worker had run were run again (their results above are the second run)',
  );
}
mkdirSync('.tmp', { recursive: true });
const cpuTimes = outcomes.filter((o) => o.cpuMs !== undefined && Number.isFinite(o.cpuMs));
if (cpuTimes.length > 0) {
  const total = cpuTimes.reduce((n, o) => n + (o.cpuMs ?? 0), 0);
  console.log(
    `ℹ CPU of the files run in workers: ${(total / 1000).toFixed(1)} s (the worker processes and what they started)`,
  );
}
writeFileSync(
  TIMES_FILE,
  JSON.stringify({ ...lastTimes, ...Object.fromEntries(outcomes.map((o) => [o.file, Math.round(o.ms)])) }),
);
const coverageOk = coverageDir ? reportCoverage(coverageDir) : true;
// The plain closing line CI reads (a killed file counts as a failure even when its tests passed).
console.log(
  `tests: ${sum('pass')} passed, ${sum('fail') + failed.filter((o) => !o.counts.fail).length} failed, ${sum('skipped')} skipped`,
);
process.exit(failed.length > 0 || !coverageOk ? 1 : 0);

/** c8's summary of what the files ran, then its check against the floors in .c8rc.json. */
function reportCoverage(dir: string): boolean {
  const c8 = (args: string[]) =>
    spawnSync(process.execPath, ['node_modules/c8/bin/c8.js', ...args, '--temp-directory', `${dir}/v8`], {
      stdio: 'inherit',
    }).status === 0;
  console.log('\nCoverage of src/ and sdk/src/ (every process the test files started):');
  c8(['report', '--reporter=text-summary', '--reporter=json-summary', '--report-dir', dir]);
  const ok = c8(['check-coverage']);
  if (!ok) console.log('✖ coverage fell below a floor in .c8rc.json');
  return ok;
}
