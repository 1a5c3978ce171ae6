import type { PgliteDb } from '../../src/db/pglite.ts';
import { DatabaseError, type Db, type Queryable } from '../../src/db/types.ts';

/**
 * The PGlite instances of one test process, reused from one test file to the next: opening one from
 * the migrated template costs ~0.4 s wall and ~0.6 CPU-s (the 40 MB data directory unpacked, the
 * WebAssembly module started); resetting one, tens of CPU-milliseconds.
 *
 * A file gets a lease ({@link PglitePool.lease}); its close() ends the lease and hands the instance
 * back, reset to the template's state:
 * - the JS-side LISTEN callbacks the lease registered are removed;
 * - the session is reset: ROLLBACK of a transaction left open, then DISCARD ALL (settings, prepared
 *   statements, cursors, LISTENs, temporary tables, session advisory locks, SET ROLE);
 * - the catalog fingerprint is taken again: if anything but table rows and sequence values changed
 *   (a table, column, index, function, trigger, type, role, grant, extension, schema, a temporary
 *   table's schema…), the instance is closed instead;
 * - the tables holding a row, and those the template held rows in, are emptied (TRUNCATE …
 *   CASCADE), the rows the template held (schema_migrations, anything a migration seeded) are put
 *   back as they were, and every sequence (owned by an identity or serial column, or standalone)
 *   is set back to the template's value.
 * A failure anywhere in that closes the instance instead. At most {@link MAX_IDLE} wait in the pool;
 * more are closed.
 */
export class PglitePool {
  readonly #open: () => Promise<PgliteDb>;
  #snapshot: Promise<Snapshot> | undefined;
  readonly #idle: PgliteDb[] = [];
  /** instances opened, leases that reused one, instances closed on release (for the pool's tests) */
  readonly stats = { opened: 0, reused: 0, discarded: 0 };

  constructor(open: () => Promise<PgliteDb>) {
    this.#open = open;
  }

  /** A database in the template's state: an idle instance of the pool, or a newly opened one. */
  async lease(): Promise<Db> {
    unrefPgliteTimers();
    let db = this.#idle.pop();
    if (db) this.stats.reused++;
    else {
      db = await this.#open();
      this.stats.opened++;
      try {
        // The first instance of the process, untouched, is what every reset goes back to.
        this.#snapshot ??= takeSnapshot(db);
        await this.#snapshot;
      } catch (err) {
        this.#snapshot = undefined;
        await db.close();
        throw err;
      }
    }
    return new Lease(db, (inner) => this.#release(inner)).db;
  }

  /** Whether the catalog db (or a transaction's view of it) shows differs from the template's. */
  async catalogChanged(db: Queryable): Promise<boolean> {
    const snap = await this.#snapshot;
    if (!snap) throw new Error('no instance was opened yet');
    return (await catalogFingerprint(db, snap.fingerprintSql)) !== snap.fingerprint;
  }

  /** Closes the idle instances (a process that exits does not need it: they hold no handle). */
  async close(): Promise<void> {
    for (const db of this.#idle.splice(0)) await db.close();
  }

  async #release(db: PgliteDb): Promise<void> {
    let reusable = false;
    try {
      reusable = this.#idle.length < MAX_IDLE && (await resetToSnapshot(db, await this.#snapshot!));
    } catch {
      reusable = false;
    }
    if (reusable) {
      this.#idle.push(db);
      return;
    }
    this.stats.discarded++;
    await db.close();
  }
}

/** How many reset instances a process keeps (each holds its own WebAssembly memory, ~100 MB). */
export const MAX_IDLE = 2;

/** What the template held, taken from a newly opened instance before its first lease. */
interface Snapshot {
  fingerprint: string;
  /** the statement that lists the tables holding a row */
  nonEmpty: string;
  /** the INSERT that puts back a table's rows of the template, with its JSON parameter, by table */
  rows: Map<string, { sql: string; json: string }>;
  /** every sequence's state as JSON [{s, v, c}] for setval; null when there is none */
  sequences: string | null;
  /** the statement that computes the catalog fingerprint */
  fingerprintSql: string;
}

/** Tables (a partitioned table's rows are its partitions') and sequences outside the system's schemas. */
const USER_RELATIONS = `
  SELECT c.oid, format('%I.%I', n.nspname, c.relname) AS name, c.relkind
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'S') AND c.relpersistence <> 't'
     AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
   ORDER BY 2`;

async function takeSnapshot(db: PgliteDb): Promise<Snapshot> {
  const rels = await db.query<{ oid: number; name: string; relkind: string }>(USER_RELATIONS);
  const tables = rels.rows.filter((r) => r.relkind !== 'S');
  const rows: Snapshot['rows'] = new Map();
  for (const t of tables) {
    const { rows: data } = await db.query<{ json: string | null }>(
      `SELECT json_agg(t)::text AS json FROM ${t.name} t`,
    );
    const json = data[0]?.json;
    if (!json) continue;
    // Generated columns are computed again; identity columns keep the template's values.
    const cols = await db.query<{ col: string }>(
      `SELECT quote_ident(attname) AS col FROM pg_attribute
        WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
      [t.oid],
    );
    const list = cols.rows.map((c) => c.col).join(', ');
    rows.set(t.name, {
      sql: `INSERT INTO ${t.name} (${list}) OVERRIDING SYSTEM VALUE
              SELECT ${list} FROM json_populate_recordset(null::${t.name}, $1::json)`,
      json,
    });
  }
  const seqs: { s: string; v: number; c: boolean }[] = [];
  for (const s of rels.rows.filter((r) => r.relkind === 'S')) {
    const { rows: st } = await db.query<{ v: number; c: boolean }>(
      `SELECT last_value AS v, is_called AS c FROM ${s.name}`,
    );
    seqs.push({ s: s.name, v: st[0]!.v, c: st[0]!.c });
  }
  const catalogs = await db.query<{ name: string }>(
    `SELECT format('pg_catalog.%I', relname) AS name FROM pg_class
      WHERE relnamespace = 'pg_catalog'::regnamespace AND relkind = 'r' AND relname <> 'pg_class'
      ORDER BY relname`,
  );
  const fingerprintSql = `SELECT md5(concat_ws('|', (${PG_CLASS_HASH}),
    ${catalogs.rows.map((c) => `(SELECT count(*) || ':' || coalesce(max(xmin::text::bigint), 0) FROM ${c.name})`).join(',\n    ')}
  )) AS h`;
  await resetSession(db);
  return {
    fingerprint: await catalogFingerprint(db, fingerprintSql),
    nonEmpty:
      tables
        .map((t) => `SELECT ${quoteLiteral(t.name)} AS name WHERE EXISTS (SELECT FROM ${t.name})`)
        .join('\nUNION ALL ') || 'SELECT NULL::text AS name WHERE false',
    rows,
    sequences: seqs.length > 0 ? JSON.stringify(seqs) : null,
    fingerprintSql,
  };
}

const quoteLiteral = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Puts db back to the snapshot's state; false (and nothing reset) when its catalog changed. */
async function resetToSnapshot(db: PgliteDb, snap: Snapshot): Promise<boolean> {
  await resetSession(db);
  if ((await catalogFingerprint(db, snap.fingerprintSql)) !== snap.fingerprint) return false;
  await db.transaction(async (tx) => {
    // The tables holding a row now, and those that held one in the template (a file may have
    // emptied them).
    const { rows: found } = await tx.query<{ name: string }>(snap.nonEmpty);
    const dirty = [...new Set([...found.map((d) => d.name), ...snap.rows.keys()])].map((name) => ({ name }));
    if (dirty.length > 0) {
      // Only the tables holding rows: TRUNCATE gives each new, empty files (and the planner's
      // never-analysed estimates) as in the template; CASCADE empties the ones referring to them.
      await tx.query(`TRUNCATE ${dirty.map((d) => d.name).join(', ')} CASCADE`);
      // The template's rows go back as they were: no trigger or foreign-key check runs on them again.
      await tx.query('SET LOCAL session_replication_role = replica');
      for (const { name } of dirty) {
        const r = snap.rows.get(name);
        if (r) await tx.query(r.sql, [r.json]);
      }
    }
    if (snap.sequences) {
      await tx.query(
        `SELECT setval(s::regclass, v, c) FROM json_to_recordset($1::json) AS x(s text, v bigint, c boolean)`,
        [snap.sequences],
      );
    }
  });
  return true;
}

/** Ends what a file left in the session: an open transaction, settings, LISTENs, locks, temp tables. */
async function resetSession(db: Db): Promise<void> {
  await db.exec('ROLLBACK');
  await db.exec('DISCARD ALL');
}

/**
 * A fingerprint of the catalogs, i.e. of everything but table rows and sequence values: the schema,
 * functions, triggers, types, roles, grants, extensions, settings stored per database or role,
 * large objects. A catalog row that is inserted or updated gets a new xmin, beyond the template's
 * highest; one that is deleted lowers the count: so each catalog's (count, highest xmin) changes
 * whenever a statement changes it and commits. pg_class alone is hashed by its defining columns
 * instead, as TRUNCATE (the reset's own) updates its rows' storage columns (relfilenode, relpages…).
 * Rows rewritten in place (VACUUM's and ANALYZE's statistics) change nothing the rows of a query
 * depend on. A temporary table leaves its pg_temp schema behind: that instance is discarded too.
 */
async function catalogFingerprint(db: Queryable, sql: string): Promise<string> {
  const { rows } = await db.query<{ h: string }>(sql);
  return rows[0]!.h;
}

const PG_CLASS_HASH = `SELECT md5(string_agg(concat_ws(',', c.oid, relname, relnamespace, reltype, reloftype,
    relowner, relam, reltablespace, reltoastrelid, relisshared, relpersistence, relkind, relnatts,
    relchecks, relhasrules, relhastriggers, relrowsecurity, relforcerowsecurity, relispopulated,
    relreplident, relispartition, relacl, reloptions, relpartbound), ';' ORDER BY c.oid))
  FROM pg_class c`;

/**
 * One file's handle on a pooled instance. After close() every query, transaction and LISTEN through
 * it throws, as through a closed PGlite, so work a file left running cannot reach the next file's
 * rows; close() resolves once the instance is back in the pool (or closed).
 */
class Lease {
  readonly db: Db;
  #closed = false;
  readonly #unlistens = new Set<() => Promise<void>>();
  readonly #pending = new Set<Promise<unknown>>();

  constructor(inner: PgliteDb, release: (inner: PgliteDb) => Promise<void>) {
    const check = () => {
      if (this.#closed)
        throw new DatabaseError('PGlite is closed (this lease of a pooled test database ended)');
    };
    const guard = (q: Queryable): Queryable => ({
      async query(sql, params, options) {
        check();
        return q.query(sql, params, options);
      },
    });
    this.db = {
      kind: 'pglite',
      ...guard(inner),
      transaction: async (fn) => {
        check();
        return inner.transaction((tx) => fn(guard(tx)));
      },
      exec: async (sql) => {
        check();
        return inner.exec(sql);
      },
      listen: async (channel, onNotify, options) => {
        check();
        const subscribing = inner.listen(
          channel,
          (payload) => {
            if (!this.#closed) onNotify(payload);
          },
          options,
        );
        this.#pending.add(subscribing);
        let unlisten: () => Promise<void>;
        try {
          unlisten = await subscribing;
        } finally {
          this.#pending.delete(subscribing);
        }
        let done = false;
        const stop = async () => {
          if (done) return;
          done = true;
          this.#unlistens.delete(stop);
          await unlisten();
        };
        this.#unlistens.add(stop);
        return stop;
      },
      close: async () => {
        check();
        this.#closed = true;
        let clean = true;
        try {
          await Promise.allSettled([...this.#pending]);
          for (const stop of [...this.#unlistens]) await stop();
        } catch {
          clean = false;
        }
        if (clean) await release(inner);
        else await inner.close();
      },
    };
  }
}

/**
 * PostgreSQL arms a 10-second timer to flush its statistics after a statement (setitimer, a Node
 * timer in PGlite) and never disarms it; only close() clears it. An idle instance in the pool would
 * so keep its process, and the test worker's wait for what a file left open, waiting up to 10 s.
 * Such timers (PGlite's emscripten `setitimer`, recognised by its callback) are unreferenced: they
 * still fire while the process runs, they just do not hold it.
 */
function unrefPgliteTimers(): void {
  if (timersPatched) return;
  timersPatched = true;
  const original = globalThis.setTimeout;
  const patched = function (this: unknown, fn: unknown, ms?: number, ...args: unknown[]) {
    const timer = (original as (...a: unknown[]) => NodeJS.Timeout).call(this, fn, ms, ...args);
    if (
      typeof fn === 'function' &&
      fn.length === 0 &&
      EMSCRIPTEN_TIMER.test(Function.prototype.toString.call(fn))
    ) {
      timer.unref();
    }
    return timer;
  };
  Object.defineProperties(patched, Object.getOwnPropertyDescriptors(original));
  globalThis.setTimeout = patched as typeof globalThis.setTimeout;
}
let timersPatched = false;
const EMSCRIPTEN_TIMER = /callUserCallback\(__emscripten_timeout\b/;
