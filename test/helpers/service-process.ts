/**
 * What the tests that start `callcap serve` as a child process give it, so each start costs less
 * CPU without changing what runs:
 *
 * - `--liftoff-only`: V8 compiles the embedded database's WebAssembly (PGlite, ~9 MB) with its
 *   baseline compiler only. By default it also optimises that code with TurboFan at start-up, which
 *   costs a short-lived service ~3 s of CPU (user and system) before its first request, more than
 *   the faster code saves over a test's few hundred queries (a start on a migrated DATA_DIR: 7.6 →
 *   4.4 s of CPU, docs/benchmarks.md, 2026-11-27). The same code, the same results: a compiler
 *   tier, not a behaviour.
 * - the run's compile cache (scripts/run-tests.ts sets NODE_COMPILE_CACHE): compiled JavaScript is
 *   reused instead of compiling every module again; the tests give their children a minimal
 *   environment, which dropped it.
 */
export const SERVICE_NODE_ARGS: readonly string[] = ['--liftoff-only'];

/** `{ NODE_COMPILE_CACHE }` when the run sets it, else nothing: spread into a child's env. */
export function compileCacheEnv(): Record<string, string> {
  return process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {};
}
