/**
 * Groups successful attempts that finish close together into one write (complete-delivery.ts).
 * An item is flushed on the next turn of the event loop, together with every other success that
 * arrived meanwhile; while one batch is being written the next one fills up, so under load batches
 * grow by themselves and an idle queue still writes at once. add() settles when its batch is written.
 */
export interface Batcher<T> {
  add(item: T): Promise<void>;
}

export function createBatcher<T>(write: (items: T[]) => Promise<void>, maxBatch: number): Batcher<T> {
  let buffer: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  let scheduled = false;
  let writing = false;

  function schedule() {
    if (scheduled || writing) return;
    scheduled = true;
    setImmediate(run);
  }

  async function run() {
    scheduled = false;
    if (writing || buffer.length === 0) return;
    const batch = buffer.slice(0, maxBatch);
    buffer = buffer.slice(maxBatch);
    writing = true;
    try {
      await write(batch.map((b) => b.item));
      for (const b of batch) b.resolve();
    } catch (err) {
      for (const b of batch) b.reject(err);
    } finally {
      writing = false;
      if (buffer.length > 0) schedule();
    }
  }

  return {
    add(item) {
      return new Promise<void>((resolve, reject) => {
        buffer.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
