/**
 * The claim-ahead loop of one delivery worker (./worker.ts). Claims run ahead of the request slots
 * (./slot-pump.ts): the worker holds up to 2.5 × concurrency rows (in flight + ready) and claims
 * again when no more than concurrency / 2 are ready, so a busy queue costs one claim per dozens of
 * deliveries and no slot waits for a claim round trip. Claiming pauses while the success writer is
 * 4 × concurrency behind (./success-writer.ts). Ready rows a subscription cannot start because it
 * is at its fairness cap (./slot-pump.ts) do not count as ready here, and a claim leaves out the
 * slow subscriptions that already have a cap's worth waiting, so a slow customer cannot stop the
 * claims for the others.
 *
 * kick() is every wake-up (a notification, the poll, a LISTEN reconnect, start): on an idle worker
 * it claims at once; while a loop runs it asks that loop for one more round. A loop that stopped
 * because the worker was full is re-armed by freed() when a slot or a write frees up, and so is one
 * whose last claim came back full (more is probably due). A failed claim is logged; the next poll
 * tries again.
 */
import type { Deps } from '../../deps.ts';
import type { SlotPump } from './slot-pump.ts';
import { claimDeliveries } from './sql/claim-deliveries.ts';
import type { SuccessWriter } from './success-writer.ts';

export interface ClaimLoopOptions {
  deps: Pick<Deps, 'db' | 'clock' | 'log'>;
  /** lease_owner written on claimed rows */
  owner: string;
  concurrency: number;
  leaseMs: number;
  slots: SlotPump;
  successes: Pick<SuccessWriter, 'pending'>;
}

export interface ClaimLoop {
  /** Between start() and stop(). */
  readonly running: boolean;
  /** One claim of up to `limit` due rows, handed to the slots; returns how many were claimed. */
  claim(limit: number): Promise<number>;
  /** Lets kick() claim from now on. */
  start(): void;
  /** Claims in the background until the worker is full or nothing more is due (no-op unless started). */
  kick(): void;
  /** A slot or a write was freed: claim again if a loop is owed one. */
  freed(): void;
  /** kick() no longer claims; resolves once the loop that is running, if any, has finished. */
  stop(): Promise<void>;
}

export function createClaimLoop(opts: ClaimLoopOptions): ClaimLoop {
  const { deps, owner, concurrency, leaseMs, slots, successes } = opts;
  let running = false;
  let claiming = false;
  let claimLoop: Promise<void> = Promise.resolve();
  let wakeAgain = false;
  let lastClaimFull = false;

  const maxPendingWrites = concurrency * 4;
  /**
   * Rows held in flight or ready: claims run ahead of the slots, so no slot waits for a claim. With
   * a refill below concurrency / 2 ready, a busy worker claims about `concurrency` rows at a time.
   */
  const capacity = Math.ceil(concurrency * 2.5);
  const wantMore = () => {
    if (successes.pending >= maxPendingWrites) return false;
    // Rows of a subscription held at its fairness cap do not count: they cannot use a free slot.
    const runnable = slots.runnable;
    return runnable <= concurrency / 2 && slots.inFlight + runnable < capacity;
  };

  async function claim(limit: number): Promise<number> {
    if (limit <= 0) return 0;
    const now = deps.clock.now();
    const leaseUntil = now.getTime() + leaseMs;
    const rows = await claimDeliveries(deps.db, {
      now,
      limit,
      owner,
      leaseUntil: new Date(leaseUntil),
      exclude: slots.saturated(),
    });
    lastClaimFull = rows.length === limit;
    slots.add(rows, leaseUntil);
    return rows.length;
  }

  async function claimAhead(): Promise<void> {
    try {
      do {
        wakeAgain = false;
        if (!wantMore()) {
          wakeAgain = true; // claim when slots free up
          break;
        }
        await claim(capacity - slots.inFlight - slots.runnable);
      } while (running && (wakeAgain || lastClaimFull) && wantMore());
    } catch (err) {
      deps.log.error({ err: (err as Error).message }, 'webhook claim failed; retrying at the next poll');
    } finally {
      claiming = false;
    }
  }

  function kick(): void {
    if (!running) return;
    if (claiming) {
      wakeAgain = true;
      return;
    }
    // The flag is set before the loop starts: the loop may finish without ever awaiting.
    claiming = true;
    claimLoop = claimAhead();
  }

  return {
    get running() {
      return running;
    },
    claim,
    start() {
      running = true;
    },
    kick,
    freed() {
      if (running && (wakeAgain || lastClaimFull) && wantMore()) kick();
    },
    stop() {
      running = false;
      return claimLoop;
    },
  };
}
