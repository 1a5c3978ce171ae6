/**
 * The claim-ahead loop of one delivery worker (./worker.ts). Claims run ahead of the request slots
 * (./slot-pump.ts): the worker holds up to 2.5 × concurrency rows (in flight + ready) and claims
 * again when no more than concurrency / 2 are ready, so a busy queue costs one claim per dozens of
 * deliveries and no slot waits for a claim round trip. Claiming pauses while the success writer is
 * 4 × concurrency behind (./success-writer.ts). Ready rows beyond their subscription's allowance
 * (its fair share of the slots, or its cap: ./slot-pump.ts) do not count as ready here, and a claim
 * leaves out the subscriptions that already hold an allowance's worth, so a customer whose replies
 * are slow or fail cannot stop the claims for the others. The rows held stay bounded (2 × the
 * claim-ahead capacity) however many subscriptions wait beyond their allowance.
 *
 * kick() is every wake-up (a notification, the poll, a LISTEN reconnect, start): on an idle worker
 * it claims at once; while a loop runs it asks that loop for one more round. A loop that stopped
 * because the worker was full is re-armed by freed() when a slot or a write frees up, and so is one
 * whose last claim came back full (more is probably due), and one whose short claim passed over a
 * saturated subscription, once that subscription has room again. A failed claim is logged; the next poll
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
  /**
   * Subscriptions the last claim left out when it came back short: more of their rows may be due,
   * so the loop claims again once one of them is no longer saturated (see freed()).
   */
  let passedOver: string[] = [];

  const maxPendingWrites = concurrency * 4;
  /**
   * Rows held in flight or ready: claims run ahead of the slots, so no slot waits for a claim. With
   * a refill below concurrency / 2 ready, a busy worker claims about `concurrency` rows at a time.
   */
  const capacity = Math.ceil(concurrency * 2.5);
  /** Rows held at most, counting the ones waiting beyond their subscription's allowance. */
  const maxHeld = capacity * 2;
  /** How many rows the next claim may take (0: none wanted now). */
  const room = () => {
    if (successes.pending >= maxPendingWrites) return 0;
    // Rows beyond their subscription's allowance do not count: they cannot use a free slot now.
    const runnable = slots.runnable;
    if (runnable > concurrency / 2) return 0;
    return Math.max(
      0,
      Math.min(capacity - slots.inFlight - runnable, maxHeld - slots.inFlight - slots.ready),
    );
  };
  const wantMore = () => room() > 0;
  /** Whether a subscription the last short claim passed over has room again. */
  const unblocked = () => {
    if (passedOver.length === 0) return false;
    const still = new Set(slots.saturated());
    return passedOver.some((id) => !still.has(id));
  };

  async function claim(limit: number): Promise<number> {
    if (limit <= 0) return 0;
    const now = deps.clock.now();
    const leaseUntil = now.getTime() + leaseMs;
    const exclude = slots.saturated();
    const rows = await claimDeliveries(deps.db, {
      now,
      limit,
      owner,
      leaseUntil: new Date(leaseUntil),
      exclude,
      perSubscription: slots.perClaim(),
    });
    lastClaimFull = rows.length === limit;
    passedOver = lastClaimFull ? [] : exclude;
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
        await claim(room());
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
      if (running && (wakeAgain || lastClaimFull || unblocked()) && wantMore()) kick();
    },
    stop() {
      running = false;
      return claimLoop;
    },
  };
}
