import pg from 'pg';
import { DatabaseError, type Db, type Queryable, type QueryOptions, type QueryResult } from './types.ts';

const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    // int8 and numeric as JS numbers (counts and durations), everything else as node-postgres does.
    if (oid === 20 || oid === 1700) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
};

function wrapClient(c: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<T>(
      sql: string,
      params?: readonly unknown[],
      options?: QueryOptions,
    ): Promise<QueryResult<T>> {
      try {
        const r = await c.query({
          name: options?.name,
          text: sql,
          values: params as unknown[] | undefined,
          types: typeParsers,
        });
        return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
      } catch (err) {
        throw new DatabaseError((err as Error).message, { cause: err });
      }
    },
  };
}

export async function openPostgres(url: string, options: { max?: number } = {}): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 20 });
  // A dropped idle connection must not crash the process; the next query gets a fresh one.
  pool.on('error', () => {});
  const base = wrapClient(pool);
  return {
    kind: 'postgres',
    query: base.query,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw new DatabaseError((err as Error).message, { cause: err });
      }
      try {
        await client.query('BEGIN');
        const out = await fn(wrapClient(client));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async exec(sql: string) {
      try {
        await pool.query(sql);
      } catch (err) {
        throw new DatabaseError((err as Error).message, { cause: err });
      }
    },
    async listen(channel, onNotify) {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => {});
      await client.connect();
      client.on('notification', (n) => {
        if (n.channel === channel) onNotify(n.payload ?? '');
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await client.end().catch(() => {});
      };
    },
    async close() {
      await pool.end();
    },
  };
}
