import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from './types.ts';

export const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

/** The migration files of this version, in the order they apply. */
export async function migrationFiles(dir = MIGRATIONS_DIR): Promise<string[]> {
  return (await readdir(dir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
}

/**
 * Forward-only numbered migrations (NNNN_name.sql), each applied in its own transaction and
 * recorded in schema_migrations. The same files run on PGlite and PostgreSQL.
 * An advisory lock keeps two nodes starting at once from applying the same file twice.
 */
export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const files = await migrationFiles(dir);
  const applied: string[] = [];
  for (const file of files) {
    const sql = await readFile(join(dir, file), 'utf8');
    const done = await db.transaction(async (tx) => {
      // A migration may rewrite a large table: DATABASE_STATEMENT_TIMEOUT_MS is for requests, not for it.
      await tx.query('SET LOCAL statement_timeout = 0');
      await tx.query('SELECT pg_advisory_xact_lock(7305001)');
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE name = $1', [file]);
      if (seen.rowCount > 0) return false;
      // Statements run one by one inside this transaction (PGlite's tx.query takes one statement).
      for (const stmt of splitSql(sql)) await tx.query(stmt);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      return true;
    });
    if (done) applied.push(file);
  }
  return applied;
}

/** Splits a migration on semicolons at line ends, outside dollar-quoted bodies. */
export function splitSql(sql: string): string[] {
  const out: string[] = [];
  let buf = '';
  let inDollar = false;
  for (const line of sql.split('\n')) {
    if (line.trim().startsWith('--') && !inDollar) continue;
    const dollars = line.match(/\$\$/g)?.length ?? 0;
    if (dollars % 2 === 1) inDollar = !inDollar;
    buf += line + '\n';
    if (!inDollar && /;\s*$/.test(line)) {
      if (buf.trim()) out.push(buf.trim().replace(/;$/, ''));
      buf = '';
    }
  }
  if (buf.trim()) out.push(buf.trim().replace(/;$/, ''));
  return out;
}
