import type { Deps } from './deps.ts';

/**
 * What wakes a claim loop — the webhook delivery worker's, the processing-job runner's and the
 * `callcap listen` streams' (http/public/app-api/listen.ts), over the two queues in PostgreSQL (DESIGN.md "The queue is the deliveries table"): a LISTEN on the channel their
 * enqueues NOTIFY at commit, once more after a lost LISTEN connection is back (notifications sent
 * meanwhile are lost), and a poll for rows falling due and leases expiring. Kicks once at the start.
 * Answers the stop: no more kicks from here once it has resolved.
 */
export async function startWakeups(
  deps: Pick<Deps, 'db' | 'log'>,
  p: {
    channel: string;
    pollIntervalMs: number;
    kick: () => void;
    /**
     * A LISTEN that cannot start: without this the start rejects (a worker must not run deaf);
     * with it the failure is reported here and the poll alone wakes the loop.
     */
    pollOnlyOnListenFailure?: (err: Error) => void;
  },
): Promise<() => Promise<void>> {
  const unlisten = await deps.db
    .listen(p.channel, () => p.kick(), { onReconnect: p.kick, log: deps.log })
    .catch((err: Error) => {
      if (!p.pollOnlyOnListenFailure) throw err;
      p.pollOnlyOnListenFailure(err);
      return async () => {};
    });
  const timer = setInterval(p.kick, p.pollIntervalMs);
  p.kick();
  return async () => {
    clearInterval(timer);
    await unlisten();
  };
}

/**
 * One round at a time for a loop woken by kicks: a kick while idle starts a round; a kick during a
 * round (a notification that came in mid-claim) and a round that answers true (it took a full
 * batch: more is probably due) run one more round when it ends, so no wake-up is lost and none
 * starts a second round beside the first. A round that throws is reported to onError and ends the
 * run (the next kick starts again). stop() lets no round start any more and waits for the one
 * running.
 */
export function kickedRounds(p: { round: () => Promise<boolean>; onError: (err: Error) => void }): {
  kick: () => void;
  stop: () => Promise<void>;
} {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const loop = async () => {
    try {
      do {
        again = false;
        if (await p.round()) again = true;
      } while (again && !stopped);
    } catch (err) {
      p.onError(err as Error);
    } finally {
      running = null;
    }
  };
  return {
    kick() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      // Started on the next microtask: `running` is set before the first round can finish.
      running = Promise.resolve().then(loop);
    },
    async stop() {
      stopped = true;
      await running;
    },
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
