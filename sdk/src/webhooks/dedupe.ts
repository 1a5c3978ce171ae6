/**
 * De-duplication on event_id. Delivery is at-least-once: the same event can arrive twice (a retry after a
 * lost 2xx, a manual resend from the delivery log, a reconciliation pass). Receivers persist idempotently.
 *
 * PRODUCTION: back `claim` with a unique constraint in your own database, ideally in the same transaction
 * as the business write, e.g.
 *
 *   insert into processed_webhook_events (event_id) values ($1) on conflict do nothing
 *
 * and return `rowCount === 1`. Then a crash between claim and processing rolls back both. The in-memory
 * store below only suits a single process and forgets everything on restart.
 */

/** Remembers which event ids were already taken on. */
export interface EventIdStore {
  /** Resolves true when `eventId` is seen for the first time (the caller must process it), else false. */
  claim(eventId: string): Promise<boolean>;
  /**
   * Optional: forget a claim because processing failed, so the service's retry is processed instead of
   * being dropped as a duplicate. Not needed when claim and processing share one transaction.
   */
  release?(eventId: string): Promise<void>;
}

/**
 * Default memory window: 72 h. The service's own retries span about 2 h 40 min (2 min, 5 min, 30 min,
 * 2 h), but resends from the delivery log and reconciliation can come later; three days covers a weekend.
 */
export const DEFAULT_DEDUPE_TTL_MS = 72 * 60 * 60 * 1000;
/** Upper bound on remembered ids so memory stays bounded (roughly 10-20 MB at this size); oldest are evicted. */
export const DEFAULT_DEDUPE_MAX_ENTRIES = 100_000;

export interface MemoryEventIdStoreOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** Clock in milliseconds; inject a fake one in tests. Default Date.now. */
  now?: () => number;
}

/** A single-process, in-memory `EventIdStore` with a time-to-live. For development and small receivers. */
export class MemoryEventIdStore implements EventIdStore {
  // Map keeps insertion order, and every entry gets the same TTL, so the oldest entry expires first.
  readonly #expiresAt = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: MemoryEventIdStoreOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_DEDUPE_TTL_MS;
    this.#maxEntries = options.maxEntries ?? DEFAULT_DEDUPE_MAX_ENTRIES;
    this.#now = options.now ?? Date.now;
    if (!(this.#ttlMs > 0) || !(this.#maxEntries > 0)) {
      throw new RangeError('MemoryEventIdStore needs ttlMs > 0 and maxEntries > 0.');
    }
  }

  /** Number of ids currently remembered. */
  get size(): number {
    return this.#expiresAt.size;
  }

  async claim(eventId: string): Promise<boolean> {
    const now = this.#now();
    this.#prune(now);
    if (this.#expiresAt.has(eventId)) return false;
    this.#expiresAt.set(eventId, now + this.#ttlMs);
    while (this.#expiresAt.size > this.#maxEntries) {
      const oldest = this.#expiresAt.keys().next().value as string;
      this.#expiresAt.delete(oldest);
    }
    return true;
  }

  async release(eventId: string): Promise<void> {
    this.#expiresAt.delete(eventId);
  }

  #prune(now: number): void {
    for (const [id, expiresAt] of this.#expiresAt) {
      if (expiresAt > now) break;
      this.#expiresAt.delete(id);
    }
  }
}
