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
  /** LISTEN on a channel; returns the function that stops listening. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** A database failure: rendered as 500 DATABASE_ERROR, never with its SQL or stack in the body. */
export class DatabaseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseError';
  }
}
