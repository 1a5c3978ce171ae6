import type { Clock } from './clock.ts';
import type { Db, Queryable } from './db/types.ts';
import { AppError } from './errors.ts';

/**
 * Maintenance switch of the public API (operator API: PUT /admin/v1/maintenance). Stored in
 * settings.public_api_enabled (jsonb boolean; absent = enabled). While false, every /api/v1 request
 * (any path and method, also openapi.json and recording downloads) answers 503 MAINTENANCE.
 *
 * Each node caches the flag for at most FLAG_TTL_MS, so the check costs no query per request. The
 * node that flips the switch drops its caches at once; other nodes follow within FLAG_TTL_MS.
 */
export const FLAG_TTL_MS = 1000;
const SETTING = 'public_api_enabled';

/**
 * The one module-level object of the REST API: from a database handle to the flag caches of the
 * apps built on it, so setPublicApiEnabled() can invalidate them on this node. It holds no data and
 * is garbage-collected with the handle.
 */
const caches = new WeakMap<object, Set<() => void>>();

export async function readPublicApiEnabled(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ value: unknown }>('SELECT value FROM settings WHERE key = $1', [SETTING]);
  return rows[0]?.value !== false;
}

/** Flips the switch (called by the operator API). Pass the node's Db (deps.db), not a transaction. */
export async function setPublicApiEnabled(db: Db, enabled: boolean, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2::jsonb, $3)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
    [SETTING, JSON.stringify(enabled), now],
  );
  for (const invalidate of caches.get(db) ?? []) invalidate();
}

/** The 503 every /api/v1 request gets while the public API is disabled. */
export const maintenanceError = () =>
  new AppError('MAINTENANCE', 'The public API is temporarily disabled for maintenance; retry later.');

export interface MaintenanceGate {
  /** throws 503 MAINTENANCE while the public API is disabled (the /api/v1 onRequest hook calls it) */
  check(): Promise<void>;
  /** the (cached) flag: false while the public API is disabled */
  enabled(): Promise<boolean>;
  /** stops listening for invalidations (app close) */
  dispose(): void;
}

/** A per-app cached view of the flag. Concurrent requests on a stale cache share one query. */
export function maintenanceGate(deps: { db: Db; clock: Clock }): MaintenanceGate {
  let value = true;
  let readAt = Number.NEGATIVE_INFINITY;
  let inflight: Promise<boolean> | null = null;
  const invalidate = () => {
    readAt = Number.NEGATIVE_INFINITY;
    inflight = null;
  };
  let set = caches.get(deps.db);
  if (!set) {
    set = new Set();
    caches.set(deps.db, set);
  }
  set.add(invalidate);

  async function enabled(): Promise<boolean> {
    const now = deps.clock.now().getTime();
    // A clock moved backwards (tests) also counts as stale.
    if (now - readAt < FLAG_TTL_MS && now >= readAt) return value;
    if (!inflight) {
      const p = readPublicApiEnabled(deps.db).then(
        (v) => {
          if (inflight === p) {
            value = v;
            readAt = now;
            inflight = null;
          }
          return v;
        },
        (err) => {
          if (inflight === p) inflight = null;
          throw err;
        },
      );
      inflight = p;
    }
    return inflight;
  }

  return {
    check: async () => {
      if (!(await enabled())) throw maintenanceError();
    },
    enabled,
    dispose: () => set.delete(invalidate),
  };
}
