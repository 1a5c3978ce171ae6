/**
 * The reporter of a test worker (scripts/test-worker.ts): Node's spec reporter, plus one marker line
 * after each file's top-level suite (the file) ends, carrying the file's counts. The runner splits
 * the worker's output at these lines, so each file's output (its spec lines and whatever its tests
 * printed, stdout and stderr merged in order) is reported under its name.
 */
import { spec } from 'node:test/reporters';
import { inspect } from 'node:util';

/** Starts the marker line; a control character no test prints. */
export const END_MARK = '\u0001test-file-end ';

interface TestEvent {
  type: string;
  data: {
    name?: string;
    nesting?: number;
    skip?: unknown;
    todo?: unknown;
    details?: { type?: string; error?: Error & { failureType?: string; cause?: unknown } };
  };
}

const QUIET_FAILURES = new Set(['cancelledByParent', 'subtestsFailed']);

export default async function* reporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const inner = new spec();
  let out = '';
  inner.on('data', (chunk: string | Buffer) => {
    out += chunk.toString();
  });
  let counts = fresh();
  for await (const event of source) {
    // The run's closing summary repeats the failures of every file the worker ran: each file's own
    // failures were printed where they happened.
    if (event.type === 'test:summary' || (event.type === 'test:diagnostic' && !event.data.nesting)) continue;
    inner.write(event); // synchronous: the spec lines are in `out` when write returns
    if (out) {
      yield out;
      out = '';
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting = 0, details, skip, todo } = event.data;
    // The spec reporter keeps the failures' details for the run's closing summary, which a worker
    // reaches only after its last file: print them under the failed test, in its file's output.
    const error = details?.error;
    // (Not "cancelled by parent" nor a suite's "subtests failed": their cause is printed once, where it happened.)
    if (event.type === 'test:fail' && error && !QUIET_FAILURES.has(error.failureType ?? '')) {
      const shown = error.failureType === 'testCodeFailure' && error.cause ? error.cause : error;
      const pad = '  '.repeat(nesting + 1);
      yield `${inspect(shown, { depth: 6 }).replace(/^/gm, pad)}\n`;
    }
    if (nesting === 0) {
      yield `${END_MARK}${JSON.stringify({ file: event.data.name, ok: event.type === 'test:pass', counts })}\n`;
      counts = fresh();
    } else if (details?.type !== 'suite') {
      counts.tests++;
      if (skip !== undefined) counts.skipped++;
      else if (todo !== undefined) counts.todo++;
      else if (event.type === 'test:pass') counts.pass++;
      else if (details?.error?.failureType === 'cancelledByParent') counts.cancelled++;
      else counts.fail++;
    }
  }
}

function fresh() {
  return { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
}
