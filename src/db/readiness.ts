import { migrationFiles } from './migrate.ts';
import type { Queryable } from './types.ts';

/** What GET /readyz reports: the database answers, and every migration of this version is applied. */
export type Readiness =
  | { ready: true; migrations: number }
  | { ready: false; database: 'unreachable' }
  | { ready: false; database: 'ok'; pending: string[] };

/** How long the database has to answer a readiness check before the node counts as not ready. */
export const READINESS_TIMEOUT_MS = 2_000;

/**
 * One query (two when schema_migrations does not exist yet): the applied migrations against this
 * version's files. A database that errors or does not answer within READINESS_TIMEOUT_MS is
 * unreachable; the pending query is left to the pool's own timeouts.
 */
export async function checkReadiness(db: Queryable, timeoutMs = READINESS_TIMEOUT_MS): Promise<Readiness> {
  const expected = await expectedMigrations();
  const applied = await withTimeout(appliedMigrations(db), timeoutMs);
  if (applied === null) return { ready: false, database: 'unreachable' };
  const pending = expected.filter((f) => !applied.has(f));
  if (pending.length > 0) return { ready: false, database: 'ok', pending };
  return { ready: true, migrations: expected.length };
}

let files: Promise<string[]> | undefined;
/** The files ship with the code: read once per process. */
const expectedMigrations = () => {
  files ??= migrationFiles();
  return files;
};

/** The applied migration names; an empty set when the table does not exist; null when unreachable. */
async function appliedMigrations(db: Queryable): Promise<Set<string> | null> {
  try {
    const { rows } = await db.query<{ name: string }>('SELECT name FROM schema_migrations');
    return new Set(rows.map((r) => r.name));
  } catch {
    try {
      await db.query('SELECT 1');
      return new Set(); // the database answers; it has never been migrated
    } catch {
      return null;
    }
  }
}

async function withTimeout<T>(p: Promise<T | null>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
