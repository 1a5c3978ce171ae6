/**
 * The test helpers' PGlite pool (test/helpers/pglite-pool.ts): a reused instance is in the template's
 * state, one whose catalog changed is not reused, and a lease refuses work once closed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/db/types.ts';
import { engine, openPgliteTemplate } from '../helpers/db.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { PglitePool } from '../helpers/pglite-pool.ts';

const skip = engine !== 'pglite' ? 'the pool is PGlite-only' : false;

/**
 * The template of these tests: the migrated one plus a table with an identity and a generated
 * column and two rows seeded, and a standalone sequence, all made the same way on every instance.
 */
async function openProbeTemplate() {
  const db = await openPgliteTemplate();
  await db.exec(`
    CREATE TABLE pool_probe (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      note text NOT NULL,
      twice bigint GENERATED ALWAYS AS (id * 2) STORED
    );
    INSERT INTO pool_probe (note) VALUES ('seeded one'), ('seeded two');
    CREATE SEQUENCE pool_counter START 100;`);
  return db;
}

const probeRows = async (db: Db) =>
  (await db.query('SELECT id, note, twice FROM pool_probe ORDER BY id')).rows;
const count = async (db: Db, sql: string) => (await db.query<{ n: number }>(sql)).rows[0]!.n;
const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('the PGlite pool of the tests', { skip }, () => {
  let pool: PglitePool;
  let migrations: number;
  before(async () => {
    pool = new PglitePool(openProbeTemplate);
  });
  after(() => pool?.close());

  test('the next lease gets the same instance with the rows of the template only, identity and sequences restarted', async () => {
    const one = await pool.lease();
    migrations = await count(one, 'SELECT count(*) AS n FROM schema_migrations');
    assert.deepEqual(await probeRows(one), [
      { id: 1, note: 'seeded one', twice: 2 },
      { id: 2, note: 'seeded two', twice: 4 },
    ]);
    await one.query(`INSERT INTO pool_probe (note) VALUES ('by lease one')`);
    await one.query(`DELETE FROM pool_probe WHERE id = 1`);
    assert.deepEqual(
      (await one.query(`SELECT nextval('pool_counter') AS a, nextval('pool_counter') AS b`)).rows,
      [{ a: 100, b: 101 }],
    );
    const { orgId } = await insertOrg(one);
    await insertCall(one, { orgId });
    await one.query(`INSERT INTO schema_migrations (name) VALUES ('9999_by_lease_one.sql')`);
    await one.close();

    const two = await pool.lease();
    try {
      assert.deepEqual(pool.stats, { opened: 1, reused: 1, discarded: 0 });
      assert.deepEqual(await probeRows(two), [
        { id: 1, note: 'seeded one', twice: 2 },
        { id: 2, note: 'seeded two', twice: 4 },
      ]);
      assert.equal(await count(two, 'SELECT count(*) AS n FROM organizations'), 0);
      assert.equal(await count(two, 'SELECT count(*) AS n FROM calls'), 0);
      assert.equal(await count(two, 'SELECT count(*) AS n FROM schema_migrations'), migrations);
      assert.deepEqual(
        (await two.query(`INSERT INTO pool_probe (note) VALUES ('by lease two') RETURNING id, twice`)).rows,
        [{ id: 3, twice: 6 }],
      );
      assert.deepEqual((await two.query(`SELECT nextval('pool_counter') AS a`)).rows, [{ a: 100 }]);
    } finally {
      await two.close();
    }
  });

  test('the session a lease leaves (transaction, settings, prepared statements, LISTEN, locks) is not the next one’s', async () => {
    const one = await pool.lease();
    const heard: string[] = [];
    const appName = (await one.query<{ v: string }>('SELECT current_setting($1) AS v', ['application_name']))
      .rows[0]!.v;
    await one.listen('pool_probe_channel', (p) => heard.push(p));
    await one.exec(`SET application_name = 'lease one'`);
    await one.exec(`PREPARE left_behind AS SELECT 1`);
    await one.query('SELECT pg_advisory_lock(4242)');
    await one.exec('BEGIN');
    await one.query(`INSERT INTO pool_probe (note) VALUES ('in an open transaction')`);
    await one.close();

    const two = await pool.lease();
    try {
      assert.deepEqual(pool.stats, { opened: 1, reused: 3, discarded: 0 });
      assert.equal(
        (await two.query<{ v: string }>('SELECT current_setting($1) AS v', ['application_name'])).rows[0]!.v,
        appName,
      );
      assert.equal(await count(two, 'SELECT count(*) AS n FROM pg_prepared_statements'), 0);
      assert.equal(await count(two, `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory'`), 0);
      assert.equal(await count(two, 'SELECT count(*) AS n FROM pg_listening_channels()'), 0);
      assert.equal(
        await count(two, `SELECT count(*) AS n FROM pool_probe WHERE note = 'in an open transaction'`),
        0,
      );
      // a transaction of the new lease starts and ends normally: none was left open
      await two.transaction(async (tx) => {
        await tx.query(`NOTIFY pool_probe_channel, 'for lease two'`);
      });
      await two.query('SELECT 1'); // notifications are delivered after the statement that commits
      assert.deepEqual(heard, []);
    } finally {
      await two.close();
    }
  });

  test('a closed lease refuses queries, transactions, scripts and LISTEN; work left running cannot reach the next lease', async () => {
    const one = await pool.lease();
    let proceed!: () => void;
    const held = new Promise<void>((r) => {
      proceed = r;
    });
    const running = one.transaction(async (tx) => {
      await tx.query(`INSERT INTO pool_probe (note) VALUES ('before close')`);
      await held;
      await tx.query(`INSERT INTO pool_probe (note) VALUES ('after close')`);
    });
    const closing = one.close();
    proceed();
    await assert.rejects(running, /closed/);
    await closing;
    await assert.rejects(one.query('SELECT 1'), /closed/);
    await assert.rejects(one.exec('SELECT 1'), /closed/);
    await assert.rejects(
      one.transaction(async () => {}),
      /closed/,
    );
    await assert.rejects(
      one.listen('pool_probe_channel', () => {}),
      /closed/,
    );
    await assert.rejects(one.close(), /closed/);

    const two = await pool.lease();
    try {
      assert.deepEqual(pool.stats, { opened: 1, reused: 5, discarded: 0 });
      assert.deepEqual(await probeRows(two), [
        { id: 1, note: 'seeded one', twice: 2 },
        { id: 2, note: 'seeded two', twice: 4 },
      ]);
    } finally {
      await two.close();
    }
  });

  test('an instance whose schema changed is closed, and the next lease is a new instance', async () => {
    const { opened, discarded } = pool.stats;
    const one = await pool.lease();
    await one.exec('ALTER TABLE pool_probe ADD COLUMN extra text');
    await one.close();
    assert.equal(pool.stats.discarded, discarded + 1);

    const two = await pool.lease();
    try {
      assert.equal(pool.stats.opened, opened + 1);
      assert.deepEqual(await probeRows(two), [
        { id: 1, note: 'seeded one', twice: 2 },
        { id: 2, note: 'seeded two', twice: 4 },
      ]);
      assert.equal(
        await count(
          two,
          `SELECT count(*) AS n FROM pg_attribute WHERE attrelid = 'pool_probe'::regclass AND attname = 'extra'`,
        ),
        0,
      );
    } finally {
      await two.close();
    }
  });

  test('the catalog fingerprint sees a changed column, index, function, trigger, type, role, grant, setting or temporary table, and no row or sequence change', async () => {
    const db = await pool.lease();
    try {
      const changes = [
        'ALTER TABLE pool_probe ALTER COLUMN note DROP NOT NULL',
        'CREATE INDEX pool_probe_note ON pool_probe (note)',
        `CREATE FUNCTION pool_probe_fn() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
        `CREATE TRIGGER pool_probe_tg BEFORE INSERT ON organizations FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()`,
        `CREATE TYPE pool_probe_kind AS ENUM ('a')`,
        'CREATE ROLE pool_probe_role',
        'GRANT SELECT ON pool_probe TO PUBLIC',
        'ALTER DATABASE postgres SET work_mem = 1234',
        'CREATE TEMP TABLE pool_probe_temp (a int)',
        'DROP TABLE pool_probe',
      ];
      const seen: Record<string, boolean> = {};
      for (const change of changes) {
        await db.exec('BEGIN');
        try {
          await db.exec(change);
          seen[change] = await pool.catalogChanged(db);
        } finally {
          await db.exec('ROLLBACK');
        }
      }
      assert.deepEqual(seen, Object.fromEntries(changes.map((c) => [c, true])));
      await db.query(`INSERT INTO pool_probe (note) VALUES ('a row')`);
      await db.query(`SELECT nextval('pool_counter')`);
      await db.query('TRUNCATE pool_probe');
      assert.equal(await pool.catalogChanged(db), false);
    } finally {
      await db.close();
    }
  });

  test('leases held at once are different instances; an idle instance holds no timer', async () => {
    const before = timeouts();
    const { discarded } = pool.stats;
    const [one, two] = [await pool.lease(), await pool.lease()];
    try {
      // the previous test's lease emptied pool_probe: its seeded rows are back
      assert.deepEqual(await probeRows(one), [
        { id: 1, note: 'seeded one', twice: 2 },
        { id: 2, note: 'seeded two', twice: 4 },
      ]);
      await one.query(`INSERT INTO pool_probe (note) VALUES ('in one')`);
      assert.equal(await count(two, `SELECT count(*) AS n FROM pool_probe WHERE note = 'in one'`), 0);
    } finally {
      await one.close();
      await two.close();
    }
    assert.equal(timeouts(), before);
    assert.equal(pool.stats.discarded, discarded); // the second instance matches the first's fingerprint
  });
});
