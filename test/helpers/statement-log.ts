import type { Db, Queryable, QueryOptions } from '../../src/db/types.ts';

/**
 * A Db that records every statement sent through it — its prepared name, else its first `width`
 * characters with whitespace folded — and `BEGIN` for each transaction it opens. take() answers what
 * was recorded since the last take() and starts afresh.
 */
export function statementLog(db: Db, width = 40): { db: Db; take: () => string[] } {
  let seen: string[] = [];
  const label = (sql: string, options?: QueryOptions) =>
    options?.name ?? sql.replace(/\s+/g, ' ').trim().slice(0, width);
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params, options) => {
      seen.push(label(sql, options));
      return q.query(sql, params, options);
    },
  });
  return {
    db: {
      ...db,
      kind: db.kind,
      query: wrap(db).query,
      transaction: (fn) => {
        seen.push('BEGIN');
        return db.transaction((tx) => fn(wrap(tx)));
      },
      exec: (sql) => db.exec(sql),
      listen: (c, f, o) => db.listen(c, f, o),
      close: () => db.close(),
    },
    take: () => {
      const s = seen;
      seen = [];
      return s;
    },
  };
}
