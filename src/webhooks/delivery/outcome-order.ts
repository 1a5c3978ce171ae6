/**
 * Records a subscription's outcomes in the order this worker received the replies, so the
 * consecutive counters ("two consecutive 410", "50 consecutive failures") see them in that order.
 *
 * Successes are written in batches behind the requests (success-batch.ts) and failures at once in
 * their own transaction, so without this a failure received after a success could be written before
 * it — 410, 2xx, 410 would pause — and a success received after a failure could reset the counters
 * before that failure is counted. The rule, per subscription:
 *
 * - a failure is written once every outcome of the subscription received before it is written;
 * - a success is handed to the batch writer once the failures received before it are written.
 *   Successes need no order among themselves (each one just resets the counters).
 *
 * The hot path — a success of a subscription with no failure being written — goes straight to the
 * batch writer: one Map lookup, and the success's write is remembered until it lands. Failures are
 * rare; one waits at most for a batch write. Waiting happens before the failure's transaction
 * opens, so no connection or lock is held meanwhile.
 */
export interface OutcomeOrder {
  /** Starts write() for a success once the subscription's earlier failures are written. */
  success(subscriptionId: string, write: () => Promise<void>): Promise<void>;
  /**
   * Resolves once every earlier outcome of the subscription is written: the failure's turn to be
   * written. The returned function ends the turn (call it when the write settles, either way).
   */
  failure(subscriptionId: string): Promise<() => void>;
}

interface Unwritten {
  successes: Set<Promise<unknown>>;
  /** the last failure handed in; later outcomes wait for it */
  failure: Promise<unknown> | null;
}

export function createOutcomeOrder(): OutcomeOrder {
  const bySubscription = new Map<string, Unwritten>();

  function entry(id: string): Unwritten {
    let e = bySubscription.get(id);
    if (!e) {
      e = { successes: new Set(), failure: null };
      bySubscription.set(id, e);
    }
    return e;
  }

  function forget(id: string, e: Unwritten): void {
    if (e.successes.size === 0 && e.failure === null && bySubscription.get(id) === e)
      bySubscription.delete(id);
  }

  return {
    success(subscriptionId, write) {
      const e = entry(subscriptionId);
      const earlier = e.failure;
      const p = earlier ? earlier.then(write) : write();
      const settled = p.then(
        () => undefined,
        () => undefined,
      );
      e.successes.add(settled);
      void settled.then(() => {
        e.successes.delete(settled);
        forget(subscriptionId, e);
      });
      return p;
    },
    failure(subscriptionId) {
      const e = entry(subscriptionId);
      const earlier = [...e.successes];
      if (e.failure) earlier.push(e.failure);
      let end = () => {};
      const written = new Promise<void>((resolve) => {
        end = resolve;
      });
      e.failure = written;
      void written.then(() => {
        if (e.failure === written) e.failure = null;
        forget(subscriptionId, e);
      });
      return earlier.length === 0 ? Promise.resolve(end) : Promise.all(earlier).then(() => end);
    },
  };
}
