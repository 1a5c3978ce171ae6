/**
 * The request slots of one delivery worker (./worker.ts): claimed rows wait in a ready queue per
 * subscription, with their lease expiry, until one of `concurrency` slots is free; then their
 * attempt runs in flight. A slot is free again as soon as its attempt settles (a success's write
 * happens behind it, ./success-writer.ts). A ready row that waited past half its lease is dropped
 * (another claim takes it when the lease expires); one that waited RECHECK_AFTER_MS or more since
 * its claim is re-read before its request (./attempt.ts), so a delivery withdrawn meanwhile (its
 * call erased, ./erasure.ts) is not sent.
 *
 * Fairness (docs/webhooks.md "Fairness between subscriptions"): free slots go round-robin to the
 * subscriptions with ready rows, one row each per turn, up to a fair share each (concurrency /
 * subscriptions with work here); slots left over go to the fastest subscriptions first (those
 * with a measured attempt time: a new one gets its fair share until one of its attempts settled). And each
 * subscription has a cap on the slots it may hold:
 * - not slow, and the only subscription with work here (none other had any for RECENT_MS): the
 *   whole worker (a single busy subscription loses nothing);
 * - not slow, with others at work: all but the reserve (concurrency / 4), so a receiver that starts
 *   to hang mid-burst cannot take every slot before it is known to be slow;
 * - slow (a moving average of its attempt times ≥ SLOW_MS, or a request in flight for SLOW_MS):
 *   SLOW_CAP slots while any subscription that is not slow has work (ready or in flight);
 *   otherwise the slow ones share all but the reserve (work-conserving: an otherwise idle worker
 *   serves a slow customer's backlog wide, and new work of others still finds free slots).
 * The claim loop (./claim-loop.ts) counts only the ready rows that could start within their
 * subscription's allowance (`runnable`), and its claims leave out the subscriptions that already
 * hold an allowance's worth of rows ready (`saturated()`). A subscription's allowance is its fair
 * share of the slots (concurrency / subscriptions with work here), or its cap when lower; a
 * subscription alone and not slow has no allowance (it may take the whole worker). So the rows of
 * a customer whose replies are slow, or whose failures are written one at a time, never fill the
 * ready buffer: the claims pass over them and fetch the other customers' work.
 */
import { performance } from 'node:perf_hooks';
import type { Deps } from '../../deps.ts';
import type { ClaimedDelivery } from './sql/claim-deliveries.ts';

/** A subscription whose attempts take this long (average, or one in flight) is slow. */
export const SLOW_MS = 1_000;
/** A subscription out of work for less than this still counts as at work (see recentlyIdle). */
const RECENT_MS = 1_000;
/** Weight of the newest attempt time in a subscription's moving average. */
const LATENCY_WEIGHT = 0.2;
/** Subscriptions whose latency the worker remembers (idle ones beyond this are forgotten). */
const MAX_TRACKED = 10_000;

export interface SlotPumpOptions {
  deps: Pick<Deps, 'clock' | 'log'>;
  concurrency: number;
  leaseMs: number;
  recheckAfterMs: number;
  /** One attempt of a row; `recheck` when it waited RECHECK_AFTER_MS or more after its claim. */
  attempt(row: ClaimedDelivery, recheck: boolean): Promise<void>;
  /** Called each time an attempt settles, after the free slot was offered to the ready rows. */
  onSlotFree(): void;
  /** Monotonic milliseconds for attempt times (real time even under a test's fake clock). */
  monotonic?: () => number;
}

export interface SlotPump {
  /** Attempts whose request is in flight (or whose failure is being recorded). */
  readonly inFlight: number;
  /** Claimed rows waiting for a slot. */
  readonly ready: number;
  /** Ready rows that could start now if a slot were free (their subscription is below its cap). */
  readonly runnable: number;
  /** Subscriptions the next claim should leave out: capped below the worker, a cap's worth waiting. */
  saturated(): string[];
  /**
   * Rows any one subscription should get from the next claim: twice the fair share while several
   * subscriptions have work here, Infinity otherwise.
   */
  perClaim(): number;
  /** Queues freshly claimed rows (leased until `leaseUntil`, epoch ms) and fills the free slots. */
  add(rows: readonly ClaimedDelivery[], leaseUntil: number): void;
  /** Resolves once nothing is ready or in flight. */
  idle(): Promise<void>;
  /** Empties the ready queue: the ids of rows claimed and never started. */
  takeUnstarted(): string[];
  /** Resolves once every attempt in flight has settled, however it ended. */
  allSettled(): Promise<void>;
}

interface Sub {
  id: string;
  ready: Array<{ row: ClaimedDelivery; leaseUntil: number }>;
  /** start times (monotonic ms) of its attempts in flight, oldest first */
  starts: number[];
  /** moving average of its attempt times, null until one settled in this worker */
  avgMs: number | null;
}

export function createSlotPump(opts: SlotPumpOptions): SlotPump {
  const { deps, concurrency, leaseMs, recheckAfterMs } = opts;
  const mono = opts.monotonic ?? (() => performance.now());
  const reserve = Math.floor(concurrency / 4);
  const slowCap = Math.max(1, Math.min(4, Math.floor(concurrency / 16)));
  const inFlight = new Set<Promise<void>>();
  /** Every subscription with work here, and idle ones whose latency is remembered. */
  const subs = new Map<string, Sub>();
  /** Subscriptions with ready rows or attempts in flight. */
  const active = new Set<Sub>();
  /**
   * Subscriptions that ran out of work here within the last RECENT_MS (monotonic time they did):
   * in a burst a subscription is often out of ready rows for a moment between two claims, and
   * must not count as gone, or the one left would be "alone" and could take every slot.
   */
  const recentlyIdle = new Map<Sub, number>();

  function retire(s: Sub): void {
    if (s.ready.length > 0 || s.starts.length > 0) return;
    active.delete(s);
    recentlyIdle.set(s, mono());
  }

  function activate(s: Sub): void {
    active.add(s);
    recentlyIdle.delete(s);
  }
  /** Subscriptions with ready rows, in round-robin order. */
  let turn: Sub[] = [];
  let readyCount = 0;

  function sub(id: string): Sub {
    let s = subs.get(id);
    if (!s) {
      if (subs.size >= MAX_TRACKED) {
        for (const [k, v] of subs) {
          if (v.ready.length === 0 && v.starts.length === 0) subs.delete(k);
          if (subs.size < MAX_TRACKED / 2) break;
        }
      }
      s = { id, ready: [], starts: [], avgMs: null };
      subs.set(id, s);
    }
    return s;
  }

  function slow(s: Sub, now: number): boolean {
    return (s.avgMs !== null && s.avgMs >= SLOW_MS) || (s.starts.length > 0 && now - s.starts[0] >= SLOW_MS);
  }

  /** Each active subscription's cap on slots, at monotonic time `now`. */
  function caps(now: number): Map<Sub, number> {
    const isSlow = new Map<Sub, boolean>();
    let slowActive = 0;
    for (const s of active) {
      const k = slow(s, now);
      isSlow.set(s, k);
      if (k) slowActive++;
    }
    for (const [s, at] of recentlyIdle) if (now - at >= RECENT_MS) recentlyIdle.delete(s);
    // Not slow and at work now, or at work moments ago.
    const othersActive = active.size - slowActive + recentlyIdle.size;
    const shared = Math.max(slowCap, Math.floor((concurrency - reserve) / Math.max(1, slowActive)));
    const out = new Map<Sub, number>();
    for (const [s, k] of isSlow) {
      out.set(
        s,
        k ? (othersActive > 0 ? slowCap : shared) : othersActive > 1 ? concurrency - reserve : concurrency,
      );
    }
    return out;
  }

  /**
   * Each active subscription's allowance of rows at work here (in flight + ready that could start):
   * its fair share, or its cap when lower; Infinity for one alone and not slow (the whole worker).
   */
  function allowances(now: number): Map<Sub, number> {
    const cap = caps(now);
    const share = Math.ceil(concurrency / Math.max(1, active.size));
    const out = new Map<Sub, number>();
    for (const [s, c] of cap) out.set(s, c >= concurrency ? Infinity : Math.min(c, share));
    return out;
  }

  function launch(s: Sub, row: ClaimedDelivery, recheck: boolean): void {
    const started = mono();
    s.starts.push(started);
    const p: Promise<void> = opts
      .attempt(row, recheck)
      .catch((err: Error) => {
        // The row keeps its lease and is attempted again when it expires (at-least-once).
        deps.log.error({ deliveryId: row.id, err: err.message }, 'webhook attempt not recorded');
      })
      .finally(() => {
        const took = mono() - started;
        const i = s.starts.indexOf(started);
        if (i >= 0) s.starts.splice(i, 1);
        retire(s);
        s.avgMs = s.avgMs === null ? took : s.avgMs + LATENCY_WEIGHT * (took - s.avgMs);
        inFlight.delete(p);
        pump();
        opts.onSlotFree();
      });
    inFlight.add(p);
  }

  /** Starts the next ready row of `s` (or drops it when past half its lease). */
  function takeOne(s: Sub): void {
    const next = s.ready.shift()!;
    readyCount--;
    if (s.ready.length === 0) turn.splice(turn.indexOf(s), 1);
    const now = deps.clock.now().getTime();
    if (now > next.leaseUntil - leaseMs / 2) {
      retire(s);
      return;
    }
    launch(s, next.row, now - (next.leaseUntil - leaseMs) >= recheckAfterMs);
  }

  /**
   * Starts ready rows while slots are free, in two passes. First, round-robin, one row per
   * subscription per turn, each up to its fair share (concurrency / active subscriptions) and its
   * cap. Then the slots nobody claimed within their share go to the fastest subscriptions first
   * (lowest average attempt time), each up to its cap: a slot given to fast work comes back in
   * milliseconds, one given to slow work is gone for seconds. A row past half its lease is left for
   * a later claim, a row that waited RECHECK_AFTER_MS or more is re-read before its request.
   */
  function pump(): void {
    if (readyCount === 0 || inFlight.size >= concurrency) return;
    const cap = caps(mono());
    const share = Math.ceil(concurrency / Math.max(1, active.size));
    let i = 0;
    let progressed = false;
    while (inFlight.size < concurrency && turn.length > 0) {
      if (i >= turn.length) {
        if (!progressed) break;
        i = 0;
        progressed = false;
      }
      const s = turn[i];
      if (s.starts.length >= Math.min(share, cap.get(s) ?? concurrency)) {
        i++;
        continue;
      }
      const before = turn.length;
      takeOne(s);
      if (turn.length === before) i++;
      progressed = true;
    }
    // The next pump starts with the subscription after the last one served.
    if (i > 0 && i < turn.length) turn = [...turn.slice(i), ...turn.slice(0, i)];
    if (inFlight.size >= concurrency || turn.length === 0) return;
    // Only subscriptions with a measured attempt time take leftovers: a new receiver that hangs
    // would otherwise take every free slot for its time-out before it is known to be slow.
    const fastest = turn.filter((s) => s.avgMs !== null).sort((a, b) => a.avgMs! - b.avgMs!);
    for (const s of fastest) {
      while (
        inFlight.size < concurrency &&
        s.ready.length > 0 &&
        s.starts.length < (cap.get(s) ?? concurrency)
      )
        takeOne(s);
    }
  }

  return {
    get inFlight() {
      return inFlight.size;
    },
    get ready() {
      return readyCount;
    },
    get runnable() {
      if (readyCount === 0) return 0;
      const allowed = allowances(mono());
      let n = 0;
      for (const s of turn) {
        const a = allowed.get(s) ?? Infinity;
        // A subscription allowed the whole worker counts in full, as before fairness existed.
        n += a === Infinity ? s.ready.length : Math.min(s.ready.length, Math.max(0, a - s.starts.length));
      }
      return n;
    },
    saturated() {
      if (readyCount === 0) return [];
      const allowed = allowances(mono());
      return turn.filter((s) => s.ready.length >= (allowed.get(s) ?? Infinity)).map((s) => s.id);
    },
    perClaim() {
      return active.size <= 1 ? Infinity : 2 * Math.ceil(concurrency / active.size);
    },
    add(rows, leaseUntil) {
      for (const row of rows) {
        const s = sub(row.subscriptionId);
        if (s.ready.length === 0) turn.push(s);
        activate(s);
        s.ready.push({ row, leaseUntil });
        readyCount++;
      }
      pump();
    },
    async idle() {
      for (pump(); inFlight.size > 0; pump()) await Promise.race(inFlight);
    },
    takeUnstarted() {
      const ids = turn.flatMap((s) => s.ready.splice(0).map((r) => r.row.id));
      for (const s of turn) retire(s);
      turn = [];
      readyCount = 0;
      return ids;
    },
    async allSettled() {
      await Promise.allSettled([...inFlight]);
    },
  };
}
