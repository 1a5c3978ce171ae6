import type { Deps } from './deps.ts';

/**
 * What wakes a claim loop — the webhook delivery worker's and the processing-job runner's, the two
 * queues in PostgreSQL (DESIGN.md "The queue is the deliveries table"): a LISTEN on the channel their
 * enqueues NOTIFY at commit, once more after a lost LISTEN connection is back (notifications sent
 * meanwhile are lost), and a poll for rows falling due and leases expiring. Kicks once at the start.
 * Answers the stop: no more kicks from here once it has resolved.
 */
export async function startWakeups(
  deps: Pick<Deps, 'db' | 'log'>,
  p: { channel: string; pollIntervalMs: number; kick: () => void },
): Promise<() => Promise<void>> {
  const unlisten = await deps.db.listen(p.channel, () => p.kick(), { onReconnect: p.kick, log: deps.log });
  const timer = setInterval(p.kick, p.pollIntervalMs);
  p.kick();
  return async () => {
    clearInterval(timer);
    await unlisten();
  };
}

/** `runOnce` again until a run finds nothing due at the current clock; answers how many it ran in all. */
export async function drainRuns(runOnce: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await runOnce();
    if (n === 0) return total;
    total += n;
  }
}

/** What every claim of leased rows from a queue table says: now, how many, whose lease, until when. */
export interface LeaseClaim {
  now: Date;
  limit: number;
  /** lease_owner written on the claimed rows */
  owner: string;
  leaseUntil: Date;
}
