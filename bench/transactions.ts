/**
 * CPU per PostgreSQL transaction of two parameterised named statements (an upsert and a read), one
 * after another on one pooled connection: this process's CPU and its backend's (/proc), and the wall.
 * Compares src/db/postgres.ts implementations: pass another copy's path to measure it (e.g. the
 * base's `git show <rev>:src/db/postgres.ts > src/db/postgres.base.ts`, then
 * `node bench/transactions.ts ../src/db/postgres.base.ts`). BENCH_DATABASE_URL (default the local
 * test database), BENCH_TRANSACTIONS (default 5000).
 */
import { readFileSync } from 'node:fs';
import type { Db, Queryable } from '../src/db/types.ts';

const module = process.argv[2] ?? '../src/db/postgres.ts';
const { openPostgres } = (await import(module)) as { openPostgres: (url: string, o: object) => Promise<Db> };
const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const N = Number(process.env.BENCH_TRANSACTIONS) || 5000;

/** utime + stime of a process, ms (USER_HZ = 100) */
function cpuMsOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

const db = await openPostgres(url, { max: 1 });
try {
  await db.exec('CREATE TEMP TABLE bench_tx (id int PRIMARY KEY, n int)');
  const { rows } = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const pid = rows[0]!.pid;
  const run = async (k: number) => {
    for (let i = 0; i < k; i++) {
      await db.transaction(async (tx: Queryable) => {
        await tx.query(
          'INSERT INTO bench_tx VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = bench_tx.n + 1',
          [i % 100, 1],
          { name: 'bench_tx_up' },
        );
        await tx.query('SELECT n FROM bench_tx WHERE id = $1', [i % 100], { name: 'bench_tx_get' });
      });
    }
  };
  await run(500); // warm up
  const c0 = process.cpuUsage();
  const b0 = cpuMsOf(pid);
  const t0 = performance.now();
  await run(N);
  const c = process.cpuUsage(c0);
  const b = cpuMsOf(pid) - b0;
  const t = performance.now() - t0;
  const us = (x: number) => x.toFixed(0);
  process.stdout.write(
    `${module}: ${N} transactions; per transaction ${us((t / N) * 1000)} µs wall, ` +
      `this process ${us((c.user + c.system) / N)} µs CPU, its backend ${us((b * 1000) / N)} µs CPU\n`,
  );
} finally {
  await db.close();
}
