import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { HEAP_GROWING_PERCENT } from '../src/heap.ts';

/** A child Node that builds a small live heap and forces one full GC, with V8's heap-limit trace on. */
function heapControllerLines(tune: boolean): string[] {
  const script = `
    ${tune ? `const { tuneHeap } = await import(${JSON.stringify(new URL('../src/heap.ts', import.meta.url).href)}); tuneHeap();` : ''}
    const live = [];
    for (let i = 0; i < 300000; i++) live.push({ i });
    globalThis.gc();
    process.stdout.write(String(live.length) + '\\n');`;
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--trace-gc-verbose', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l.includes('[HeapController] factor'));
}

test('tuneHeap sets the factor V8 grows the old generation by at a full GC (src/heap.ts)', () => {
  assert.equal(HEAP_GROWING_PERCENT, 200);
  const tuned = heapControllerLines(true);
  assert.ok(tuned.length > 0, 'V8 printed no heap-limit line');
  // every full GC after tuneHeap grows the limit by exactly 1 + 200 / 100
  for (const l of tuned) assert.match(l, /\[HeapController\] factor 3\.0 based on/);
});

test("without tuneHeap, V8 picks the factor itself (the trace this test reads is V8's)", () => {
  const lines = heapControllerLines(false);
  assert.ok(lines.length > 0, 'V8 printed no heap-limit line');
  for (const l of lines) assert.match(l, /\[HeapController\] factor \d\.\d based on mu=/);
});
