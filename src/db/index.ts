import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { migrate } from './migrate.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';
import type { Db } from './types.ts';

export type { Db, Queryable } from './types.ts';
export { DatabaseError } from './types.ts';

/** PostgreSQL when DATABASE_URL is set, otherwise PGlite in DATA_DIR/db. Migrates before returning. */
export async function openDatabase(opts: { databaseUrl?: string; dataDir: string }): Promise<Db> {
  let db: Db;
  if (opts.databaseUrl) {
    db = await openPostgres(opts.databaseUrl);
  } else {
    const dir = join(opts.dataDir, 'db');
    await mkdir(dir, { recursive: true });
    db = await openPglite(dir);
  }
  await migrate(db);
  return db;
}
