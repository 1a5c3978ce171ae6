import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

// scripts/run-tests.ts in a folder of its own, on test files written here: one that passes, one
// whose process dies of a signal the way V8's fatal checks end it (SIGTRAP), once or every time.
const dir = mkdtempSync(join(tmpdir(), 'callcap-runner-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const runner = new URL('../../scripts/run-tests.ts', import.meta.url).pathname;

function file(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `import { existsSync, writeFileSync } from 'node:fs';\nimport { test } from 'node:test';\n${body}\n`,
  );
  return path;
}
const passing = file('a.test.ts', "test('passes', () => {});");
const crashOnce = file(
  'crash-once.test.ts',
  `const mark = ${JSON.stringify(join(dir, 'crashed'))};
test('crashes its worker the first time it runs', () => {
  if (!existsSync(mark)) {
    writeFileSync(mark, '');
    process.kill(process.pid, 'SIGTRAP');
  }
});`,
);
const crashAlways = file(
  'crash-always.test.ts',
  "test('crashes its worker every time', () => process.kill(process.pid, 'SIGTRAP'));",
);

function run(files: string[]) {
  const r = spawnSync(process.execPath, [runner, ...files], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, TEST_CONCURRENCY: '1', COVERAGE: '' },
  });
  return { status: r.status, out: r.stdout + r.stderr };
}

test('a worker that crashes runs the file again, with the files it had run, in a fresh worker', () => {
  const { status, out } = run([passing, crashOnce]);
  assert.equal(status, 0, out);
  assert.match(out, /✖ .*crash-once\.test\.ts: the test worker crashed \(SIGTRAP\) while running it/);
  assert.match(
    out,
    /ℹ a crash of the runtime, not a failed assertion: .*crash-once\.test\.ts and the 1 files that worker had run/,
  );
  // a.test.ts ran before the crash in the dead worker, and again (its coverage died with that worker)
  assert.equal(out.match(/✔ .*\/a\.test\.ts \(1 passed/g)?.length, 2, out);
  assert.match(out, /✔ .*crash-once\.test\.ts \(1 passed/);
  assert.match(out, /ℹ files 2, failed 0 · tests 2 · pass 2 · fail 0/);
  assert.match(out, /ℹ a test worker crashed \(the runtime, not an assertion\) on .*crash-once\.test\.ts/);
});

test('a second crash on the same file fails it', () => {
  const { status, out } = run([crashAlways]);
  assert.equal(status, 1, out);
  assert.match(
    out,
    /✖ .*crash-always\.test\.ts: the test process exited \(SIGTRAP\) while running this file/,
  );
  assert.match(out, /ℹ files 1, failed 1/);
});
