/**
 * The request slots of one delivery worker (./worker.ts): claimed rows wait in a ready queue, with
 * their lease expiry, until one of `concurrency` slots is free; then their attempt runs in flight.
 * A slot is free again as soon as its attempt settles (a success's write happens behind it,
 * ./success-writer.ts). A ready row that waited past half its lease is dropped (another claim takes
 * it when the lease expires); one that waited RECHECK_AFTER_MS or more since its claim is re-read
 * before its request (./attempt.ts), so a delivery withdrawn meanwhile (its call erased,
 * ./erasure.ts) is not sent.
 */
import type { Deps } from '../../deps.ts';
import type { ClaimedDelivery } from './sql/claim-deliveries.ts';

export interface SlotPumpOptions {
  deps: Pick<Deps, 'clock' | 'log'>;
  concurrency: number;
  leaseMs: number;
  recheckAfterMs: number;
  /** One attempt of a row; `recheck` when it waited RECHECK_AFTER_MS or more after its claim. */
  attempt(row: ClaimedDelivery, recheck: boolean): Promise<void>;
  /** Called each time an attempt settles, after the free slot was offered to the ready rows. */
  onSlotFree(): void;
}

export interface SlotPump {
  /** Attempts whose request is in flight (or whose failure is being recorded). */
  readonly inFlight: number;
  /** Claimed rows waiting for a slot. */
  readonly ready: number;
  /** Queues freshly claimed rows (leased until `leaseUntil`, epoch ms) and fills the free slots. */
  add(rows: readonly ClaimedDelivery[], leaseUntil: number): void;
  /** Resolves once nothing is ready or in flight. */
  idle(): Promise<void>;
  /** Empties the ready queue: the ids of rows claimed and never started. */
  takeUnstarted(): string[];
  /** Resolves once every attempt in flight has settled, however it ended. */
  allSettled(): Promise<void>;
}

export function createSlotPump(opts: SlotPumpOptions): SlotPump {
  const { deps, concurrency, leaseMs, recheckAfterMs } = opts;
  const inFlight = new Set<Promise<void>>();
  const ready: Array<{ row: ClaimedDelivery; leaseUntil: number }> = [];

  function launch(row: ClaimedDelivery, recheck: boolean): void {
    const p: Promise<void> = opts
      .attempt(row, recheck)
      .catch((err: Error) => {
        // The row keeps its lease and is attempted again when it expires (at-least-once).
        deps.log.error({ deliveryId: row.id, err: err.message }, 'webhook attempt not recorded');
      })
      .finally(() => {
        inFlight.delete(p);
        pump();
        opts.onSlotFree();
      });
    inFlight.add(p);
  }

  /**
   * Starts ready rows while slots are free; a row past half its lease is left for a later claim, a
   * row that waited RECHECK_AFTER_MS or more is re-read before its request.
   */
  function pump(): void {
    while (inFlight.size < concurrency && ready.length > 0) {
      const next = ready.shift()!;
      const now = deps.clock.now().getTime();
      if (now > next.leaseUntil - leaseMs / 2) continue;
      launch(next.row, now - (next.leaseUntil - leaseMs) >= recheckAfterMs);
    }
  }

  return {
    get inFlight() {
      return inFlight.size;
    },
    get ready() {
      return ready.length;
    },
    add(rows, leaseUntil) {
      for (const row of rows) ready.push({ row, leaseUntil });
      pump();
    },
    async idle() {
      for (pump(); inFlight.size > 0; pump()) await Promise.race(inFlight);
    },
    takeUnstarted: () => ready.splice(0).map((r) => r.row.id),
    async allSettled() {
      await Promise.allSettled([...inFlight]);
    },
  };
}
