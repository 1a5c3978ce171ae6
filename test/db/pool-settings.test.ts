import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import pg from 'pg';
import { FakeClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { DatabaseError } from '../../src/db/types.ts';
import { installErrorHandling } from '../../src/http/error-handler.ts';
import { installRequestIds, requestIdOptions } from '../../src/http/request-id.ts';
import { engine } from '../helpers/db.ts';
import { T0 } from '../helpers/deps.ts';
import { errorBody, errorJson } from '../helpers/http.ts';

/** DATABASE_POOL_MAX and DATABASE_STATEMENT_TIMEOUT_MS (issue 11, item 6). */
const onPostgres = { skip: engine !== 'postgres' && 'needs TEST_DATABASE_URL (PostgreSQL)' };

test('the pool settings default to 20 connections and a 30 s statement timeout, and are validated', () => {
  const d = loadConfig({});
  assert.equal(d.DATABASE_POOL_MAX, 20);
  assert.equal(d.DATABASE_STATEMENT_TIMEOUT_MS, 30_000);
  const c = loadConfig({ DATABASE_POOL_MAX: '8', DATABASE_STATEMENT_TIMEOUT_MS: '0' });
  assert.equal(c.DATABASE_POOL_MAX, 8);
  assert.equal(c.DATABASE_STATEMENT_TIMEOUT_MS, 0);
  assert.throws(() => loadConfig({ DATABASE_POOL_MAX: '0' }), /DATABASE_POOL_MAX/);
  assert.throws(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '-1' }), /DATABASE_STATEMENT_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: 'soon' }), /DATABASE_STATEMENT_TIMEOUT_MS/);
});

test(
  'a statement over DATABASE_STATEMENT_TIMEOUT_MS is cancelled and answers 500 DATABASE_ERROR',
  onPostgres,
  async () => {
    const db = await openPostgres(process.env.TEST_DATABASE_URL!, { max: 2, statementTimeoutMs: 200 });
    const app = Fastify(requestIdOptions());
    try {
      const { rows } = await db.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t");
      assert.equal(rows[0].t, '200ms');
      // Directly through the Db: cancelled by the server, surfaced as a DatabaseError.
      const started = Date.now();
      await assert.rejects(db.query('SELECT pg_sleep(2)'), (err: unknown) => {
        assert.ok(err instanceof DatabaseError);
        assert.equal(err.message, 'canceling statement due to statement timeout');
        return true;
      });
      assert.ok(Date.now() - started < 1500, 'cancelled well before pg_sleep(2) ended');
      // Inside a transaction too (rolled back), and the pool stays usable.
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('SELECT pg_sleep(2)');
        }),
        DatabaseError,
      );
      assert.equal((await db.query<{ one: number }>('SELECT 1 AS one')).rows[0].one, 1);
      // Through a route: the error shape, no internals.
      installRequestIds(app);
      installErrorHandling(app, new FakeClock(T0));
      app.get('/slow', async () => (await db.query('SELECT pg_sleep(2)')).rows);
      const res = await app.inject({ method: 'GET', url: '/slow' });
      assert.equal(res.statusCode, 500);
      assert.deepEqual(
        errorJson(res),
        errorBody('DATABASE_ERROR', 'The service could not complete the request; retry with backoff.'),
      );
    } finally {
      await app.close();
      await db.close();
    }
  },
);

test(
  'without a statement timeout the pool sets none; DATABASE_POOL_MAX caps the connections',
  onPostgres,
  async () => {
    const db = await openPostgres(process.env.TEST_DATABASE_URL!, { max: 2 });
    try {
      assert.equal(
        (await db.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t")).rows[0].t,
        '0',
      );
      // Three concurrent sleeps on a pool of two: the third waits for a connection.
      const pids = await Promise.all(
        [0, 1, 2].map(
          async () =>
            (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.2)')).rows[0].pid,
        ),
      );
      assert.equal(new Set(pids).size, 2);
    } finally {
      await db.close();
    }
  },
);

test('migrations run without the statement timeout', onPostgres, async () => {
  const base = process.env.TEST_DATABASE_URL!;
  const name = `cc_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const dir = await mkdtemp(join(tmpdir(), 'callcap-mig-'));
  const db = await openPostgres(url.toString(), { max: 1, statementTimeoutMs: 50 });
  try {
    await writeFile(join(dir, '0001_slow.sql'), 'CREATE TABLE slow AS SELECT 1 AS s FROM pg_sleep(0.3);\n');
    // The pool's statements are cancelled after 50 ms…
    await assert.rejects(db.query('SELECT pg_sleep(0.3)'), DatabaseError);
    // …a migration's are not (SET LOCAL statement_timeout = 0 in its transaction).
    assert.deepEqual(await migrate(db, dir), ['0001_slow.sql']);
    assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM slow')).rows[0].n, 1);
  } finally {
    await db.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  }
});
