/**
 * npm test — runs every test file with `node --test` (each in its own process, TEST_CONCURRENCY at
 * a time, default 2) under a whole-file bound, so a hang is a red run that names the file.
 *
 * Why not plain `node --test`: its --test-timeout bounds each test, but a file whose tests all
 * finished while something they started is still open (a server, worker, receiver or database
 * pool not closed in `finally` / `after`) keeps its process alive, and the run waits for it
 * forever. Here such a file is killed after TEST_FILE_TIMEOUT_MS (default 10 min) and reported.
 *
 * Usage: node scripts/run-tests.ts <glob or file>… Prints one line per passing file (and the lines
 * of its output that match TEST_ECHO, a regular expression), the whole output of a failing one, and
 * totals; exits 1 when any file failed or was killed.
 *
 * COVERAGE=1 also measures line, branch and function coverage of src/ and sdk/src/ over every process
 * the files start (V8's own coverage, NODE_V8_COVERAGE, reported by c8), prints the summary, and
 * exits 1 when a figure is below its floor in .c8rc.json (CI sets it; the floors only ever rise).
 *
 * Files run longest first (durations of the last run on this checkout, .tmp/test-times.json), so
 * the slowest file does not start last and leave one core idle at the end.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { globSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const PER_TEST_TIMEOUT_MS = 120_000;
const fileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS) || 10 * 60_000;
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY) || 2);
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

interface Outcome {
  file: string;
  ok: boolean;
  timedOut: boolean;
  ms: number;
  counts: Record<string, number>;
  output: string;
}

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

function runFile(file: string): Promise<Outcome> {
  const started = performance.now();
  // Its own process group, so a timeout kills the test process it spawns too.
  const child = spawn(
    process.execPath,
    ['--test', '--test-reporter=spec', `--test-timeout=${PER_TEST_TIMEOUT_MS}`, file],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: coverageDir ? { ...process.env, NODE_V8_COVERAGE: `${coverageDir}/v8` } : process.env,
    },
  );
  running.add(child);
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
      running.delete(child);
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

function report(o: Outcome): void {
  const secs = `${(o.ms / 1000).toFixed(1)} s`;
  if (o.ok) {
    const skipped = o.counts.skipped ? `, ${o.counts.skipped} skipped` : '';
    console.log(`✔ ${o.file} (${o.counts.pass ?? 0} passed${skipped}, ${secs})`);
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
  console.log('');
}

const started = performance.now();
const outcomes: Outcome[] = [];
const queue = [...files];
await Promise.all(
  Array.from({ length: Math.min(concurrency, files.length) }, async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const o = await runFile(file);
      report(o);
      outcomes.push(o);
    }
  }),
);

const sum = (k: string) => outcomes.reduce((n, o) => n + (o.counts[k] ?? 0), 0);
const failed = outcomes.filter((o) => !o.ok);
console.log(
  `ℹ files ${outcomes.length}, failed ${failed.length} · tests ${sum('tests')} · pass ${sum('pass')} · fail ${sum('fail')}` +
    ` · cancelled ${sum('cancelled')} · skipped ${sum('skipped')} · ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
for (const o of failed) console.log(`✖ ${o.file}${o.timedOut ? ' (killed: file timeout)' : ''}`);
mkdirSync('.tmp', { recursive: true });
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
