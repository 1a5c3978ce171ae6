/**
 * The success writer of one delivery worker (./worker.ts): a 2xx is handed in and its slot is free
 * at once; the success is written later, in a batch with the others that arrived meanwhile
 * (./success-batch.ts, ./sql/complete-delivery.ts). Its row stays leased until then: a batch that
 * fails to be written is logged and its rows are delivered again when their leases expire
 * (at-least-once). A subscription's outcomes are still written in the order their replies came in
 * (./outcome-order.ts): a success waits for the failures received before it.
 *
 * `pending` counts successes handed in and not yet written; the claim loop stops claiming while it
 * is too high (./claim-loop.ts), so the writer cannot fall ever further behind the requests.
 */
import type { Deps } from '../../deps.ts';
import type { OutcomeOrder } from './outcome-order.ts';
import { completeDeliveries, type DeliverySuccess } from './sql/complete-delivery.ts';
import { createBatcher } from './success-batch.ts';

/** Largest batch of successes written by one statement. */
export const MAX_SUCCESS_BATCH = 500;

export interface SuccessWriterOptions {
  deps: Pick<Deps, 'db' | 'clock' | 'log'>;
  /** lease_owner of the worker's rows: only rows still leased to it are completed */
  owner: string;
  order: OutcomeOrder;
  /** Called each time a handed-in success is written (or failed to be). */
  onWritten(): void;
}

export interface SuccessWriter {
  /** Successes handed in and not yet written. */
  readonly pending: number;
  record(item: DeliverySuccess): void;
  /** Resolves once every success handed in so far is written (or failed to be). */
  written(): Promise<void>;
}

export function createSuccessWriter(opts: SuccessWriterOptions): SuccessWriter {
  const { deps, owner, order } = opts;
  const batches = createBatcher<DeliverySuccess>(async (items) => {
    await completeDeliveries(deps.db, { owner, now: deps.clock.now(), items });
  }, MAX_SUCCESS_BATCH);
  const writes = new Set<Promise<void>>();

  return {
    get pending() {
      return writes.size;
    },
    record(item) {
      const w: Promise<void> = order
        .success(item.subscriptionId, () => batches.add(item))
        .catch((err: Error) => {
          // The rows keep their leases and are delivered again when those expire (at-least-once).
          deps.log.error({ err: err.message, deliveries: 1 }, 'webhook success not recorded');
        })
        .finally(() => {
          writes.delete(w);
          opts.onWritten();
        });
      writes.add(w);
    },
    async written() {
      await Promise.all([...writes]);
    },
  };
}
