import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { MIGRATIONS_DIR, migrate, migrationFiles } from '../../src/db/migrate.ts';
import { openPglite, type PgliteDb } from '../../src/db/pglite.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/types.ts';
import { PglitePool } from './pglite-pool.ts';

/** Which engine the integration tests run on: PGlite by default, PostgreSQL when TEST_DATABASE_URL is set. */
export const engine: 'pglite' | 'postgres' = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

/**
 * A migrated, empty database for one test file: an in-memory PGlite, or a fresh database created on
 * the TEST_DATABASE_URL server (dropped again on close). Share one per test file.
 *
 * Both start from a migrated template made once per set of migrations (the PGlite data directory
 * dumped to a tarball under the system temp folder; a `cc_template_<hash>` database on the server),
 * because a fresh PGlite spends seconds in initdb before the first migration runs. `fresh: true`
 * builds the database from nothing and migrates it, for the tests of the migrator itself.
 *
 * On PGlite the database is a lease on one of the process's pooled instances (pglite-pool.ts):
 * opening one from the template costs ~0.6 CPU-s, so a test worker hands the instance a file closed
 * to the next file, reset to the template's state (rows, sequences, session, LISTENs); an instance
 * whose schema, functions, roles or grants a file changed is closed instead. After close() the lease
 * refuses every query, as a closed PGlite does. `fresh: true` is never pooled; TEST_DB_REUSE=0 opens
 * a new instance on every call, as before the pool.
 */
export async function createTestDb(opts: { fresh?: boolean } = {}): Promise<Db> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    if (!opts.fresh && process.env.TEST_DB_REUSE !== '0') return pool.lease();
    const db = await openPglite(undefined, opts.fresh ? {} : { loadDataDir: await pgliteTemplate() });
    try {
      await migrate(db); // a no-op on the template; the whole history on a fresh one
    } catch (err) {
      await db.close();
      throw err;
    }
    return db;
  }
  const name = `cc_test_${randomBytes(6).toString('hex')}`;
  const template = opts.fresh ? null : await postgresTemplate(url);
  await adminQuery(url, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const db = await openPostgres(dbUrl(url, name), { max: 10 });
  const close = async () => {
    await db.close();
    await adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  try {
    await migrate(db);
  } catch (err) {
    await close(); // an open pool would keep the test process alive
    throw err;
  }
  return { ...db, close };
}

/** A PGlite opened from the migrated template (a new instance, not one of the pool's). */
export async function openPgliteTemplate(): Promise<PgliteDb> {
  const db = await openPglite(undefined, { loadDataDir: await pgliteTemplate() });
  try {
    await migrate(db); // a no-op on the template
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** This process's PGlite instances, handed from one test file to the next (see pglite-pool.ts). */
const pool = new PglitePool(openPgliteTemplate);

/** What a template is made of: the migration files' names and bytes, and PGlite's version. */
async function templateKey(): Promise<string> {
  const h = createHash('sha256');
  for (const file of await migrationFiles()) {
    h.update(file);
    h.update(readFileSync(join(MIGRATIONS_DIR, file)));
  }
  h.update(readFileSync(join(import.meta.dirname, '../../node_modules/@electric-sql/pglite/package.json')));
  return h.digest('hex').slice(0, 16);
}

/**
 * The migrated PGlite data directory as a tarball, made by the first test file that needs it (the
 * runner makes it before it starts the files) and kept under the system temp folder by key: a new
 * migration makes a new one. Written to a temporary name and renamed, so two files racing to make it
 * both succeed and neither reads half a file. Read once per process (a test worker runs many files).
 */
async function pgliteTemplate(): Promise<Blob> {
  templateBytes ??= readOrMakeTemplate().catch((err) => {
    templateBytes = undefined;
    throw err;
  });
  return new TarBytes(await templateBytes);
}
let templateBytes: Promise<Uint8Array> | undefined;

/** The template's tarball bytes (made first when missing); pglite-datadir.ts writes them to a DATA_DIR. */
export async function readOrMakeTemplate(): Promise<Uint8Array> {
  const dir = join(tmpdir(), 'callcap-test-templates');
  const file = join(dir, `pglite-${await templateKey()}.tar`);
  try {
    return readFileSync(file);
  } catch {
    // not made yet
  }
  const db = await openPglite();
  let tar: Uint8Array;
  try {
    await migrate(db);
    tar = new Uint8Array(await (await db.dumpDataDir()).arrayBuffer());
  } finally {
    await db.close();
  }
  mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, tar);
  renameSync(tmp, file);
  return tar;
}

/**
 * The template tarball as the Blob PGlite's `loadDataDir` reads with `arrayBuffer()`: a copy of the
 * bytes in memory. Node's own Blob reads its 40 MB back in chunks and joins them, about a CPU-second
 * per test file spent before the database starts.
 */
class TarBytes extends Blob {
  readonly #bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    super([], { type: 'application/x-tar' });
    this.#bytes = bytes;
  }
  override get size(): number {
    return this.#bytes.byteLength;
  }
  override async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.#bytes;
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
}

/**
 * The migrated template database on the server, made once per key under an advisory lock (built
 * under another name and renamed when complete, so a crash mid-way leaves no half template). Older
 * templates stay: another checkout's run may be copying one at this moment (each is a few MB).
 */
async function postgresTemplate(url: string): Promise<string> {
  const name = `cc_template_${await templateKey()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock(7305002)');
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const db = await openPostgres(dbUrl(url, building), { max: 1 });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    }
  } finally {
    await admin.query('SELECT pg_advisory_unlock(7305002)').catch(() => {});
    await admin.end();
  }
  return name;
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

function dbUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
