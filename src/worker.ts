import type { Deps } from './deps.ts';

/** Starts the background workers; returns the function that stops them. */
export async function startWorkers(_deps: Deps): Promise<() => Promise<void>> {
  return async () => {};
}
