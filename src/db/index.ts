import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { migrate } from './migrate.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';
import type { Db } from './types.ts';

export type { Db, Queryable } from './types.ts';
export { DatabaseError } from './types.ts';

/**
 * PostgreSQL when DATABASE_URL is set (a pool of poolMax connections with statementTimeoutMs),
 * otherwise PGlite in DATA_DIR/db (one in-process connection; neither setting applies). Migrates
 * before returning.
 */
export async function openDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  poolMax?: number;
  statementTimeoutMs?: number;
}): Promise<Db> {
  let db: Db;
  if (opts.databaseUrl) {
    db = await openPostgres(opts.databaseUrl, {
      max: opts.poolMax,
      statementTimeoutMs: opts.statementTimeoutMs,
    });
  } else {
    const dir = join(opts.dataDir, 'db');
    await mkdir(dir, { recursive: true });
    db = await openPglite(dir);
  }
  await migrate(db);
  return db;
}
