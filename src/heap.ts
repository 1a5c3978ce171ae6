import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full GC, in percent, in a
 * `callcap serve` process: 200 = to three times the live heap (V8's own factor ranges from 1.1 to 4).
 *
 * Why: V8 picks the factor from how fast it collects against how fast the program allocates. The
 * service allocates little JavaScript per second against its ~50 MB live heap, so V8 settles at
 * 1.1–1.7 × — and it starts marking once the space left under that limit is smaller than the young
 * generation, which V8 sizes at 64 MB on a machine with this much memory. Together they meant a full
 * mark-compact every ~0.7 s under capture load, each collecting ~10 MB (bench:capture with
 * `--trace-gc`: 39–52 mark-compacts per 600 calls; with this setting 16–19, and the V8 helper
 * threads' CPU per call down by a quarter to a half). The price is memory: the heap may reach ~3 ×
 * its live size (~160 MB for the service's ~53 MB) before a full GC. docs/decisions.md.
 *
 * Read by V8 at every full GC, so setting it once the process runs takes effect from the next one.
 */
export const HEAP_GROWING_PERCENT = 200;

/** Sets HEAP_GROWING_PERCENT for every isolate of this process (its worker threads too). */
export function tuneHeap(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
