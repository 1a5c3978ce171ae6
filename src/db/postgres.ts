import pg from 'pg';
import {
  DatabaseError,
  type Db,
  type ListenOptions,
  type Queryable,
  type QueryOptions,
  type QueryResult,
} from './types.ts';

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

export interface PoolOptions {
  /** most connections of the pool (DATABASE_POOL_MAX) */
  max?: number;
  /** statement_timeout of every pooled connection, ms; 0 or unset = none (DATABASE_STATEMENT_TIMEOUT_MS) */
  statementTimeoutMs?: number;
}

export async function openPostgres(url: string, options: PoolOptions = {}): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    // Sent as a startup parameter: the server cancels a longer statement (SQLSTATE 57014), which
    // surfaces as a DatabaseError. LISTEN connections are separate clients and have none.
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
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
    listen(channel, onNotify, options) {
      return listenWithReconnect(url, channel, onNotify, options);
    },
    async close() {
      await pool.end();
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}

/** application_name of LISTEN connections: operators (and the tests) find them in pg_stat_activity. */
export const LISTEN_APPLICATION_NAME = 'callcap-listen';
/** Reconnection delays of a lost LISTEN connection: 100 ms doubling up to 5 s, with jitter. */
export const LISTEN_RETRY_MIN_MS = 100;
export const LISTEN_RETRY_MAX_MS = 5_000;

/**
 * Delay before reconnection attempt `attempt` (0 for the first after a loss): d = 100 ms × 2^attempt
 * capped at 5 s, drawn from [d/2, d) ("equal jitter") so that the workers of a restarted server do
 * not all reconnect at the same instant.
 */
export function listenRetryDelayMs(attempt: number, random: () => number = Math.random): number {
  const d = Math.min(LISTEN_RETRY_MAX_MS, LISTEN_RETRY_MIN_MS * 2 ** attempt);
  return Math.floor(d / 2 + (random() * d) / 2);
}

interface ListenConnection {
  client: pg.Client;
  lost: boolean;
  err?: Error;
}

/**
 * LISTEN on a dedicated connection (a pooled one would be handed to other queries). When the
 * connection is lost (server restart, pg_terminate_backend, network), it is re-opened with backoff
 * and LISTEN re-issued; then onReconnect is called once, since notifications sent meanwhile are
 * lost. The returned function stops for good: it cancels a pending retry and closes the connection.
 * The first connection is opened before returning: if that fails, listen() rejects.
 */
async function listenWithReconnect(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
  options: ListenOptions = {},
): Promise<() => Promise<void>> {
  const { onReconnect, log } = options;
  const statement = `LISTEN ${pg.escapeIdentifier(channel)}`;
  let stopped = false;
  let current: ListenConnection | undefined;
  let timer: NodeJS.Timeout | undefined;
  let reconnecting: Promise<void> = Promise.resolve();
  /** failed attempts since the loss, and when it happened */
  let failures = 0;
  let lostAt = 0;

  async function open(): Promise<ListenConnection> {
    const client = new pg.Client({
      connectionString: url,
      application_name: LISTEN_APPLICATION_NAME,
      // An idle connection whose server vanished without a word (network) is noticed too.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    const conn: ListenConnection = { client, lost: false };
    const onLoss = (err?: Error) => {
      if (conn.lost) return;
      conn.lost = true;
      conn.err ??= err;
      if (current === conn) lost(conn);
    };
    // pg emits 'error' (e.g. the FATAL of a terminated backend) and then 'end'.
    client.on('error', onLoss);
    client.on('end', () => onLoss());
    client.on('notification', (n) => {
      if (!stopped && n.channel === channel) onNotify(n.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(statement);
      if (conn.lost) throw conn.err ?? new Error('connection ended while subscribing');
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    return conn;
  }

  function lost(conn: ListenConnection): void {
    current = undefined;
    void conn.client.end().catch(() => {});
    if (stopped) return;
    failures = 0;
    lostAt = Date.now();
    log?.warn({ channel, err: conn.err?.message }, 'LISTEN connection lost; reconnecting');
    retryIn(listenRetryDelayMs(0));
  }

  function retryIn(ms: number): void {
    timer = setTimeout(() => {
      timer = undefined;
      reconnecting = reconnect();
    }, ms);
  }

  async function reconnect(): Promise<void> {
    if (stopped) return;
    let conn: ListenConnection;
    try {
      conn = await open();
    } catch (err) {
      if (stopped) return;
      failures++;
      const delay = listenRetryDelayMs(failures);
      log?.warn(
        { channel, attempt: failures, err: (err as Error).message, retryInMs: delay },
        'LISTEN reconnection failed; retrying',
      );
      retryIn(delay);
      return;
    }
    if (stopped) {
      await conn.client.end().catch(() => {});
      return;
    }
    current = conn;
    log?.info({ channel, attempts: failures + 1, downMs: Date.now() - lostAt }, 'LISTEN connection restored');
    onReconnect?.();
  }

  current = await open();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = undefined;
    const conn = current;
    current = undefined;
    await Promise.all([conn?.client.end().catch(() => {}), reconnecting]);
  };
}
