import { PGlite, types } from '@electric-sql/pglite';
import { DatabaseError, type Db, type Queryable, type QueryResult } from './types.ts';

const parsers = {
  // int8 (count(*), sums) as JS numbers: our counts stay far below 2^53.
  [types.INT8]: (v: string) => Number(v),
  [types.NUMERIC]: (v: string) => Number(v),
};

function wrap(q: { query: PGlite['query'] }): Queryable {
  return {
    async query<T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      try {
        const r = await q.query<T>(sql, params as unknown[] | undefined, { parsers });
        // SELECT reports affectedRows 0; RETURNING and SELECT rows count themselves.
        return { rows: r.rows, rowCount: r.rows.length > 0 ? r.rows.length : (r.affectedRows ?? 0) };
      } catch (err) {
        throw new DatabaseError((err as Error).message, { cause: err });
      }
    },
  };
}

/** A PGlite Db that can also dump its data directory (the tests' migrated template). */
export type PgliteDb = Db & { dumpDataDir(): Promise<Blob> };

/**
 * Embedded PostgreSQL (WebAssembly, in-process). dataDir undefined = in memory. `loadDataDir` starts
 * from a dumped data directory instead of running initdb (seconds saved per start).
 */
export async function openPglite(dataDir?: string, opts: { loadDataDir?: Blob } = {}): Promise<PgliteDb> {
  const pg = await PGlite.create({ ...(dataDir ? { dataDir } : {}), ...opts });
  const base = wrap(pg);
  return {
    kind: 'pglite',
    query: base.query,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return pg.transaction((tx) => fn(wrap(tx)));
    },
    async exec(sql: string) {
      await pg.exec(sql);
    },
    // In-process: no connection to lose, so options (reconnection callback, log) have nothing to do.
    async listen(channel, onNotify) {
      const unsub = await pg.listen(channel, onNotify);
      return async () => unsub();
    },
    async close() {
      await pg.close();
    },
    async dumpDataDir() {
      return (await pg.dumpDataDir('none')) as Blob;
    },
  };
}
