import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/db/migrate.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/types.ts';

/** Which engine the integration tests run on: PGlite by default, PostgreSQL when TEST_DATABASE_URL is set. */
export const engine: 'pglite' | 'postgres' = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

/**
 * A migrated, empty database for one test file: an in-memory PGlite, or a fresh database created on
 * the TEST_DATABASE_URL server (dropped again on close). Share one per test file.
 */
export async function createTestDb(): Promise<Db> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const db = await openPglite();
    try {
      await migrate(db);
    } catch (err) {
      await db.close();
      throw err;
    }
    return db;
  }
  const name = `cc_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(url);
  u.pathname = `/${name}`;
  const db = await openPostgres(u.toString(), { max: 10 });
  const close = async () => {
    await db.close();
    const a = new pg.Client({ connectionString: url });
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await a.end();
  };
  try {
    await migrate(db);
  } catch (err) {
    await close(); // an open pool would keep the test process alive
    throw err;
  }
  return { ...db, close };
}
