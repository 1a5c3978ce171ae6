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

function queryConfig(sql: string, params?: readonly unknown[], options?: QueryOptions): pg.QueryConfig {
  return {
    name: options?.name,
    text: sql,
    values: params as unknown[] | undefined,
    types: typeParsers,
  };
}

function toResult<T>(r: pg.QueryResult): QueryResult<T> {
  return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
}

function wrapClient(c: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<T>(
      sql: string,
      params?: readonly unknown[],
      options?: QueryOptions,
    ): Promise<QueryResult<T>> {
      try {
        return toResult(await c.query(queryConfig(sql, params, options)));
      } catch (err) {
        throw new DatabaseError((err as Error).message, { cause: err });
      }
    },
  };
}

/** The parts of node-postgres's Connection (pg/lib/connection.js) that BeginQuery uses. */
export interface PgConnection {
  parse(msg: { text: string; name?: string; types?: unknown }): void;
  bind(msg?: object): void;
  execute(msg?: object): void;
  /** named statements whose ParseComplete arrived on this connection, and those sent but not answered */
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
}

/** The members of node-postgres's Query (pg/lib/query.js) that BeginQuery overrides or calls. */
interface PgQuery {
  text: string;
  name?: string;
  types?: unknown;
  requiresPreparation(): boolean;
  hasBeenParsed(connection: PgConnection): boolean;
  prepare(connection: PgConnection): void;
  /** msg.text: the command tag, e.g. 'BEGIN', 'INSERT 0 1' */
  handleCommandComplete(msg: { text?: string }, connection: PgConnection): void;
}

type QueryCallback = (err: Error | null, result: pg.QueryResult) => void;
const PgQueryClass = pg.Query as unknown as new (
  config: pg.QueryConfig & { callback?: QueryCallback },
) => PgQuery & pg.Submittable;

/**
 * The first statement of a transaction, carrying the transaction's BEGIN in the same write and the
 * same round trip (extended protocol only: a statement with values or a name). pg's Query.submit
 * corks the socket around prepare(), so the messages below leave in one write, and the server
 * answers them up to one ReadyForQuery:
 *
 *   [Parse S]  Parse(BEGIN) Bind Execute  [Parse S]  Bind S  Describe  Execute  Sync
 *
 * BEGIN's Execute turns the extended protocol's implicit transaction into a transaction block that
 * Sync does not end. BEGIN's CommandComplete is swallowed, so the result is the statement's own
 * (a second CommandComplete would make pg return an array of two results).
 *
 * A named statement not yet parsed on this connection is parsed BEFORE BEGIN's Parse, not after:
 * pg's client marks the active query's name as parsed on any ParseComplete, so BEGIN's would mark S
 * as parsed even when S's own Parse then failed (a missing table), and the next use of the name would
 * skip Parse and fail with "prepared statement does not exist". In this order a failed Parse of S
 * is the first reply: the server skips to Sync, BEGIN never runs, and no ParseComplete arrives. (A
 * name that was already parsed, or an unnamed statement, gets BEGIN's Parse first: BEGIN uses the
 * unnamed statement, which S's own Parse would otherwise replace before BEGIN is bound.)
 */
export class BeginQuery extends PgQueryClass {
  #beginCompleted = false;

  override prepare(connection: PgConnection): void {
    if (this.name && !this.hasBeenParsed(connection)) {
      connection.parse({ text: this.text, name: this.name, types: this.types });
      // as pg's prepare does; its own call below then skips the Parse
      connection.submittedNamedStatements[this.name] = this.text;
    }
    connection.parse({ text: 'BEGIN' });
    connection.bind();
    connection.execute();
    super.prepare(connection);
  }

  override handleCommandComplete(msg: { text?: string }, connection: PgConnection): void {
    if (!this.#beginCompleted && msg.text === 'BEGIN') {
      this.#beginCompleted = true;
      return;
    }
    super.handleCommandComplete(msg, connection);
  }
}

/**
 * The Queryable a transaction's fn gets. BEGIN is sent with the first statement (BeginQuery), or,
 * when that statement uses the simple protocol (no values, no name: it may hold several
 * statements), alone just before it, as before. Statements queued meanwhile wait for that BEGIN, so
 * they run in the order they were called and never outside the transaction.
 */
export class Transaction implements Queryable {
  /** BEGIN was sent (so COMMIT or ROLLBACK must follow) */
  begun = false;
  /** the separate BEGIN of a simple-protocol first statement while in flight (or failed) */
  #begin: Promise<unknown> | undefined;
  readonly #client: pg.PoolClient;

  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  async query<T>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<T>> {
    const config = queryConfig(sql, params, options);
    try {
      if (this.begun) {
        if (this.#begin) await this.#begin;
        return toResult(await this.#client.query(config));
      }
      this.begun = true;
      let done!: QueryCallback;
      const result = new Promise<pg.QueryResult>((resolve, reject) => {
        done = (err, r) => (err ? reject(err) : resolve(r));
      });
      const first = new BeginQuery({ ...config, callback: done });
      if (!first.requiresPreparation()) {
        this.#begin = this.#client.query('BEGIN');
        await this.#begin;
        this.#begin = undefined; // later calls need not wait; after a failure they do, and fail too
        return toResult(await this.#client.query(config));
      }
      this.#client.query(first);
      return toResult(await result);
    } catch (err) {
      throw new DatabaseError((err as Error).message, { cause: err });
    }
  }
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
      const tx = new Transaction(client);
      // A connection whose ROLLBACK failed may still be in the transaction: it is closed, not reused.
      let broken: Error | undefined;
      try {
        const out = await fn(tx);
        // No statement sent, no BEGIN sent: nothing to commit.
        if (tx.begun) await client.query('COMMIT');
        return out;
      } catch (err) {
        if (tx.begun) {
          await client.query('ROLLBACK').catch((e: Error) => {
            broken = e;
          });
        }
        throw err;
      } finally {
        client.release(broken);
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
