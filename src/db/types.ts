/** The one database interface the rest of the code sees: PGlite and node-postgres both fit it. */
export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/**
 * name: a prepared-statement name for a hot query with fixed SQL text (PostgreSQL plans it once per
 * connection instead of on every call; PGlite ignores it). One name per SQL text, never reused.
 */
export interface QueryOptions {
  name?: string;
}

export interface Queryable {
  query<T = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<T>>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs fn in one transaction (BEGIN … COMMIT, ROLLBACK on throw). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a multi-statement SQL script (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * LISTEN on a channel; returns the function that stops listening (for good: no reconnection after
   * it, no timer left). On PostgreSQL a lost LISTEN connection is re-opened with backoff and
   * re-subscribed; notifications sent while it was down are lost, so options.onReconnect is called
   * once after each successful re-subscription for the caller to catch up.
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    options?: ListenOptions,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /**
   * The connection pool right now (PostgreSQL only): connections open, idle, and queries or
   * transactions waiting for one. For measurements (bench:capture samples it); absent on PGlite.
   */
  poolStats?(): PoolStats;
}

/** A connection pool's state at one moment. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** The pino-style logger methods the LISTEN connection reports its loss and recovery through. */
export interface ListenLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface ListenOptions {
  /** called once after the LISTEN connection was lost and is subscribed again */
  onReconnect?: () => void;
  log?: ListenLog;
}

/** A database failure: rendered as 500 DATABASE_ERROR, never with its SQL or stack in the body. */
export class DatabaseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseError';
  }
}
