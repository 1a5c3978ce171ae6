/**
 * PostgreSQL-only helpers of the LISTEN reconnection tests: find the backend that LISTENs on a
 * channel in the test database (pg_stat_activity), terminate it as a server restart would, and wait
 * until a new backend has re-issued the LISTEN.
 */
import type { Queryable } from '../../src/db/types.ts';

export interface ListenBackend {
  pid: number;
  application_name: string;
  state: string;
}

/** Backends of this database whose last statement was LISTEN on `channel` (excluding the caller). */
export async function listenBackends(db: Queryable, channel: string): Promise<ListenBackend[]> {
  const { rows } = await db.query<ListenBackend>(
    `SELECT pid, application_name, state FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND query ILIKE 'LISTEN %' AND position($1 in query) > 0
      ORDER BY backend_start`,
    [channel],
  );
  return rows;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls check every 10 ms; throws naming `what` when it is still false after timeoutMs. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** Terminates the one backend listening on `channel` (pg_terminate_backend); returns its pid. */
export async function terminateListener(db: Queryable, channel: string): Promise<number> {
  const before = await listenBackends(db, channel);
  if (before.length !== 1) throw new Error(`expected one LISTEN backend, found ${before.length}`);
  const { rows } = await db.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [before[0].pid]);
  if (!rows[0].ok) throw new Error(`could not terminate backend ${before[0].pid}`);
  return before[0].pid;
}

/** Waits for a backend other than oldPid that has completed LISTEN on `channel`; returns it. */
export async function waitForResubscribe(
  db: Queryable,
  channel: string,
  oldPid: number,
  timeoutMs = 5000,
): Promise<ListenBackend> {
  let found: ListenBackend | undefined;
  await until(
    async () => {
      found = (await listenBackends(db, channel)).find((b) => b.pid !== oldPid && b.state === 'idle');
      return found !== undefined;
    },
    `a new backend LISTENing on ${channel} (the old one, ${oldPid}, was terminated)`,
    timeoutMs,
  );
  return found!;
}
