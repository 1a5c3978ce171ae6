import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { BeginQuery, openPostgres, type PgConnection, Transaction } from '../../src/db/postgres.ts';
import { DatabaseError, type Db } from '../../src/db/types.ts';
import { engine } from '../helpers/db.ts';

/**
 * A PostgreSQL transaction's BEGIN travels with its first statement (src/db/postgres.ts BeginQuery):
 * one write and one round trip fewer per transaction.
 */
const url = process.env.TEST_DATABASE_URL;
const onPostgres = { skip: engine !== 'postgres' && 'needs TEST_DATABASE_URL (PostgreSQL)' };

/** An empty database of this file's own on the server (no migrations: the tests make their tables). */
let dbName: string | undefined;
before(async () => {
  if (!url) return;
  dbName = `cc_txbegin_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${dbName}`);
});
after(async () => {
  if (dbName) await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
});

async function admin<T extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** A pool of at most `max` connections on this file's database, closed after fn. */
async function withDb(max: number, fn: (db: Db) => Promise<void>): Promise<void> {
  const u = new URL(url!);
  u.pathname = `/${dbName}`;
  const db = await openPostgres(u.toString(), { max });
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

/**
 * The writes handed to the kernel by sockets to the server's port while fn runs: each call of a
 * socket's _write or _writev is one (pg corks the socket around an extended-protocol query, so its
 * messages leave in one _writev).
 */
async function countWrites(fn: () => Promise<void>): Promise<number> {
  const port = Number(new URL(url!).port || 5432);
  const proto = net.Socket.prototype as unknown as Record<'_write' | '_writev', (...a: unknown[]) => unknown>;
  const original = { _write: proto._write, _writev: proto._writev };
  let writes = 0;
  for (const key of ['_write', '_writev'] as const) {
    proto[key] = function (this: net.Socket, ...args: unknown[]) {
      if (this.remotePort === port) writes++;
      return original[key].apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    proto._write = original._write;
    proto._writev = original._writev;
  }
  return writes;
}

/** Whether the pool's connection (max 1) is idle and in no transaction, as the server sees it. */
async function connectionIsClean(db: Db): Promise<void> {
  // Fails in an aborted transaction; statement_timestamp() = now() only in a transaction it started.
  const { rows } = await db.query<{ pid: number; fresh: boolean }>(
    'SELECT pg_backend_pid() AS pid, now() = statement_timestamp() AS fresh',
  );
  assert.equal(rows[0].fresh, true);
  const [activity] = await admin<{ state: string }>('SELECT state FROM pg_stat_activity WHERE pid = $1', [
    rows[0].pid,
  ]);
  assert.equal(activity.state, 'idle');
}

test(
  'a two-statement transaction makes 3 writes (first statement + BEGIN, second, COMMIT), not 4',
  onPostgres,
  async () => {
    await withDb(1, async (db) => {
      await db.exec('CREATE TABLE w (id int PRIMARY KEY, v text)');
      await db.query('SELECT 1'); // the connection is open before counting
      const two = await countWrites(async () => {
        await db.transaction(async (tx) => {
          await tx.query('INSERT INTO w VALUES ($1, $2)', [1, 'a']);
          await tx.query('UPDATE w SET v = $2 WHERE id = $1', [1, 'b']);
        });
      });
      assert.equal(two, 3);
      const one = await countWrites(async () => {
        await db.transaction((tx) => tx.query('SELECT v FROM w WHERE id = $1', [1], { name: 'w_get' }));
      });
      assert.equal(one, 2);
      // A first statement without values or name (simple protocol) still has its own BEGIN.
      const simple = await countWrites(async () => {
        await db.transaction(async (tx) => {
          await tx.query('SELECT count(*) AS n FROM w');
          await tx.query('UPDATE w SET v = $2 WHERE id = $1', [1, 'c']);
        });
      });
      assert.equal(simple, 4);
      // No statement: no BEGIN, no COMMIT.
      const none = await countWrites(async () => {
        assert.equal(await db.transaction(async () => 7), 7);
      });
      assert.equal(none, 0);
      assert.deepEqual((await db.query('SELECT id, v FROM w')).rows, [{ id: 1, v: 'c' }]);
    });
  },
);

test(
  'a failing second statement rolls back the first (the BEGIN sent with it took effect)',
  onPostgres,
  async () => {
    await withDb(1, async (db) => {
      await db.exec('CREATE TABLE a (id int PRIMARY KEY, v text)');
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO a VALUES ($1, $2)', [1, 'first']);
          // in a transaction block: SAVEPOINT fails outside one
          await tx.query('SAVEPOINT s');
          await tx.query('INSERT INTO a VALUES ($1, $2)', [1, 'duplicate']);
        }),
        (err: unknown) => {
          assert.ok(err instanceof DatabaseError);
          assert.equal(err.message, 'duplicate key value violates unique constraint "a_pkey"');
          return true;
        },
      );
      assert.deepEqual((await db.query('SELECT * FROM a')).rows, []);
      // A throw in fn after the first statement rolls back too.
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO a VALUES ($1, $2)', [2, 'x'], { name: 'a_insert' });
          throw new Error('fn failed');
        }),
        /^Error: fn failed$/,
      );
      assert.deepEqual((await db.query('SELECT * FROM a')).rows, []);
      await connectionIsClean(db);
    });
  },
);

test(
  'a failing first statement rejects with its DatabaseError and leaves the connection clean',
  onPostgres,
  async () => {
    await withDb(1, async (db) => {
      await db.exec('CREATE TABLE f (id int PRIMARY KEY)');
      await db.query('INSERT INTO f VALUES (1)');
      const cases: Array<[string, unknown[], string | undefined, string]> = [
        // fails at execution (BEGIN ran: the transaction is aborted until ROLLBACK)
        [
          'INSERT INTO f VALUES ($1)',
          [1],
          undefined,
          'duplicate key value violates unique constraint "f_pkey"',
        ],
        [
          'INSERT INTO f VALUES ($1)',
          [1],
          'f_insert',
          'duplicate key value violates unique constraint "f_pkey"',
        ],
        // fails at Bind (BEGIN ran)
        [
          'SELECT id FROM f WHERE id = $1',
          ['one'],
          undefined,
          'invalid input syntax for type integer: "one"',
        ],
        // fails at Parse (unnamed: after BEGIN; named and new: before BEGIN, which then never runs)
        ['SELECT nope FROM f WHERE id = $1', [1], undefined, 'column "nope" does not exist'],
        ['SELECT nope FROM f WHERE id = $1', [1], 'f_nope', 'column "nope" does not exist'],
      ];
      for (const [sql, params, name, message] of cases) {
        await assert.rejects(
          db.transaction((tx) => tx.query(sql, params, { name })),
          (err: unknown) => {
            assert.ok(err instanceof DatabaseError, sql);
            assert.equal(err.message, message);
            return true;
          },
        );
        await connectionIsClean(db);
      }
      assert.deepEqual((await db.query('SELECT id FROM f')).rows, [{ id: 1 }]);
    });
  },
);

test(
  'a named statement is parsed once per connection and reused across transactions, also after failures',
  onPostgres,
  async () => {
    await withDb(1, async (db) => {
      await db.exec('CREATE TABLE n (id int PRIMARY KEY, v text)');
      // Its Parse fails (no table yet): the name must not be taken as parsed by BEGIN's ParseComplete,
      // or its next use would skip Parse and fail with 'prepared statement "later_get" does not exist'.
      const later = 'SELECT v FROM later WHERE id = $1';
      await assert.rejects(
        db.transaction((tx) => tx.query(later, [1], { name: 'later_get' })),
        /^DatabaseError: relation "later" does not exist$/,
      );
      await db.exec("CREATE TABLE later (id int PRIMARY KEY, v text); INSERT INTO later VALUES (1, 'l')");
      const got = await db.transaction((tx) => tx.query(later, [1], { name: 'later_get' }));
      assert.deepEqual(got, { rows: [{ v: 'l' }], rowCount: 1 });
      // Its Parse succeeds and its execution fails: the statement exists on the server, and its next
      // use must not send Parse again ('prepared statement "div" already exists').
      const div = 'SELECT 10 / $1::int AS q';
      await assert.rejects(
        db.transaction((tx) => tx.query(div, [0], { name: 'div' })),
        /^DatabaseError: division by zero$/,
      );
      assert.deepEqual(await db.transaction((tx) => tx.query(div, [5], { name: 'div' })), {
        rows: [{ q: 2 }],
        rowCount: 1,
      });
      // First statement in one transaction, second in the next, outside any in a third.
      for (let i = 1; i <= 3; i++) {
        await db.transaction(async (tx) => {
          if (i === 2) await tx.query('SELECT $1::int AS i', [i]);
          await tx.query('INSERT INTO n VALUES ($1, $2)', [i, `v${i}`], { name: 'n_insert' });
        });
      }
      await db.query('INSERT INTO n VALUES ($1, $2)', [4, 'v4'], { name: 'n_insert' });
      assert.deepEqual((await db.query('SELECT id, v FROM n ORDER BY id')).rows, [
        { id: 1, v: 'v1' },
        { id: 2, v: 'v2' },
        { id: 3, v: 'v3' },
        { id: 4, v: 'v4' },
      ]);
      const { rows } = await db.query<{ name: string }>(
        'SELECT name FROM pg_prepared_statements ORDER BY name',
      );
      assert.deepEqual(
        rows.map((r) => r.name),
        ['div', 'later_get', 'n_insert'],
      );
      await connectionIsClean(db);
    });
  },
);

test(
  'the first statement answers rows and rowCount exactly as outside a transaction',
  onPostgres,
  async () => {
    await withDb(1, async (db) => {
      await db.exec(
        "CREATE TABLE r (id int PRIMARY KEY, v text, n bigint); INSERT INTO r VALUES (1, 'a', 10), (2, 'b', 20)",
      );
      const statements: Array<[string, unknown[], string | undefined]> = [
        ['SELECT id, v, n FROM r WHERE id >= $1 ORDER BY id', [1], undefined],
        ['SELECT id, v, n FROM r WHERE id >= $1 ORDER BY id', [1], 'r_select'],
        ['SELECT id FROM r WHERE id > $1', [5], undefined],
        ['UPDATE r SET v = v WHERE id >= $1', [1], undefined],
        ['UPDATE r SET v = v WHERE id = $1 RETURNING id, v', [2], 'r_touch'],
        ['DELETE FROM r WHERE id = $1', [99], undefined],
      ];
      for (const [sql, params, name] of statements) {
        const outside = await db.query(sql, params, { name });
        const inside = await db.transaction((tx) => tx.query(sql, params, { name }));
        assert.deepEqual(inside, outside, sql);
      }
      assert.deepEqual(await db.transaction((tx) => tx.query('SELECT id, v, n FROM r WHERE id = $1', [2])), {
        rows: [{ id: 2, v: 'b', n: 20 }],
        rowCount: 1,
      });
      assert.deepEqual(
        await db.transaction((tx) => tx.query('INSERT INTO r VALUES ($1, $2, $3)', [3, 'c', 30])),
        {
          rows: [],
          rowCount: 1,
        },
      );
    });
  },
);

test('a transaction of param-less statements still runs in one transaction block', onPostgres, async () => {
  await withDb(1, async (db) => {
    await db.exec('CREATE TABLE p (id int PRIMARY KEY)');
    assert.deepEqual(await db.transaction((tx) => tx.query('SELECT 1 AS one')), {
      rows: [{ one: 1 }],
      rowCount: 1,
    });
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO p VALUES (1)');
        await tx.query('SAVEPOINT s'); // only in a transaction block
        await tx.query('INSERT INTO p VALUES (1)');
      }),
      /^DatabaseError: duplicate key value violates unique constraint "p_pkey"$/,
    );
    assert.deepEqual((await db.query('SELECT id FROM p')).rows, []);
    await connectionIsClean(db);
  });
});

test(
  'concurrent transactions, and concurrent statements in one, keep their order and atomicity',
  onPostgres,
  async () => {
    await withDb(4, async (db) => {
      await db.exec(
        'CREATE TABLE c (id int PRIMARY KEY, n int); INSERT INTO c VALUES (1, 0); CREATE TABLE l (seq serial, tx int, k int)',
      );
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          db
            .transaction(async (tx) => {
              // The calls are made at once: the first carries BEGIN, the others queue behind it.
              const [a, , b] = await Promise.all([
                tx.query<{ n: number }>('UPDATE c SET n = n + 1 WHERE id = $1 RETURNING n', [1]),
                tx.query('INSERT INTO l (tx, k) VALUES ($1, $2)', [i, 1]),
                tx.query('INSERT INTO l (tx, k) VALUES ($1, $2)', [i, 2]),
              ]);
              if (i % 3 === 0) throw new Error(`rolled back ${i}`);
              return [a.rows[0].n, b.rowCount];
            })
            .catch((err: Error) => err.message),
        ),
      );
      assert.deepEqual(
        results.filter((r) => typeof r === 'string').sort(),
        [0, 3, 6, 9, 12, 15, 18, 21].map((i) => `rolled back ${i}`).sort(),
      );
      // The row lock orders them: each committed one saw the counter of those committed before it.
      const committed = results.filter((r) => typeof r !== 'string') as number[][];
      assert.deepEqual(
        committed.map((r) => r[0]).sort((x, y) => x - y),
        Array.from({ length: 16 }, (_, i) => i + 1),
      );
      assert.deepEqual(
        committed.map((r) => r[1]),
        Array(16).fill(1),
      );
      assert.deepEqual((await db.query('SELECT n FROM c')).rows, [{ n: 16 }]);
      // each committed transaction's two rows, in call order
      const { rows } = await db.query<{ tx: number; ks: number[] }>(
        'SELECT tx, array_agg(k ORDER BY seq) AS ks FROM l GROUP BY tx ORDER BY tx',
      );
      const expected = Array.from({ length: 24 }, (_, i) => i)
        .filter((i) => i % 3 !== 0)
        .map((i) => ({ tx: i, ks: [1, 2] }));
      assert.deepEqual(rows, expected);
      // Concurrent statements whose first is param-less: they wait for its separate BEGIN.
      const order = await db.transaction(async (tx) => {
        const [, a, b] = await Promise.all([
          tx.query('SELECT 1'),
          tx.query<{ s: string }>("SELECT 'second' AS s"),
          tx.query<{ s: string }>('SELECT $1::text AS s', ['third']),
        ]);
        return [a.rows[0].s, b.rows[0].s];
      });
      assert.deepEqual(order, ['second', 'third']);
    });
  },
);

/** A stand-in for pg's Connection that records the protocol messages a query sends. */
function fakeConnection(parsed: Record<string, string> = {}) {
  const sent: string[] = [];
  let corked = 0;
  const conn = {
    stream: { cork: () => corked++, uncork: () => sent.push(`uncork(${corked--})`) },
    parsedStatements: parsed,
    submittedNamedStatements: {} as Record<string, string>,
    parse: (m: { text: string; name?: string }) => sent.push(`Parse ${m.name || ''}:${m.text}`),
    bind: (m: { statement?: string } = {}) => sent.push(`Bind ${m.statement || ''}`),
    execute: () => sent.push('Execute'),
    describe: () => sent.push('Describe'),
    sync: () => sent.push('Sync'),
    flush: () => sent.push('Flush'),
  };
  return { conn: conn as unknown as pg.Connection & PgConnection, sent };
}

test('BeginQuery sends BEGIN ahead of the statement in one corked write, a new named one parsed first', () => {
  const unnamed = fakeConnection();
  new BeginQuery({ text: 'SELECT $1::int', values: [1] }).submit(unnamed.conn);
  assert.deepEqual(unnamed.sent, [
    'Parse :BEGIN',
    'Bind ',
    'Execute',
    'Parse :SELECT $1::int',
    'Bind ',
    'Describe',
    'Execute',
    'Sync',
    'uncork(1)',
  ]);
  const named = fakeConnection();
  new BeginQuery({ text: 'SELECT $1::int', values: [1], name: 's' }).submit(named.conn);
  assert.deepEqual(named.sent, [
    'Parse s:SELECT $1::int',
    'Parse :BEGIN',
    'Bind ',
    'Execute',
    'Bind s',
    'Describe',
    'Execute',
    'Sync',
    'uncork(1)',
  ]);
  assert.deepEqual(named.conn.submittedNamedStatements, { s: 'SELECT $1::int' });
  const parsed = fakeConnection({ s: 'SELECT $1::int' });
  new BeginQuery({ text: 'SELECT $1::int', values: [1], name: 's' }).submit(parsed.conn);
  assert.deepEqual(parsed.sent, [
    'Parse :BEGIN',
    'Bind ',
    'Execute',
    'Bind s',
    'Describe',
    'Execute',
    'Sync',
    'uncork(1)',
  ]);
});

test("BeginQuery's result is the statement's alone: BEGIN's CommandComplete is dropped", () => {
  const { conn } = fakeConnection();
  let result: pg.QueryResult | undefined;
  const q = new BeginQuery({
    text: 'INSERT INTO t VALUES ($1)',
    values: [1],
    callback: (err, r) => {
      assert.equal(err, null);
      result = r;
    },
  });
  q.submit(conn);
  q.handleCommandComplete({ text: 'BEGIN' }, conn);
  q.handleCommandComplete({ text: 'INSERT 0 1' }, conn);
  (q as unknown as { handleReadyForQuery(c: unknown): void }).handleReadyForQuery(conn);
  assert.ok(result && !Array.isArray(result));
  assert.equal(result.command, 'INSERT');
  assert.equal(result.rowCount, 1);
});

/** A stand-in for a pooled pg client that records the statements in the order they are queued. */
function fakeClient() {
  const queued: string[] = [];
  const pending: Array<() => void> = [];
  const client = {
    query(q: string | pg.QueryConfig | BeginQuery) {
      const text =
        typeof q === 'string' ? q : q instanceof BeginQuery ? `BEGIN+${q.text}` : (q.text as string);
      queued.push(text);
      const reply = { rows: [{ text }], rowCount: 1 } as unknown as pg.QueryResult;
      if (q instanceof BeginQuery) {
        pending.push(() =>
          (q as unknown as { callback(e: null, r: pg.QueryResult): void }).callback(null, reply),
        );
        return q;
      }
      return new Promise((resolve) => pending.push(() => resolve(reply)));
    },
  };
  /** answers every query queued so far, in order, and lets their awaits go on */
  const answer = async () => {
    while (pending.length) {
      pending.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { client: client as unknown as pg.PoolClient, queued, answer };
}

test('Transaction: BEGIN with the first extended statement, or alone before a simple one that others queue behind', async () => {
  const ext = fakeClient();
  const t1 = new Transaction(ext.client);
  assert.equal(t1.begun, false);
  const a = t1.query('SELECT $1', [1]);
  const b = t1.query('SELECT 2');
  assert.equal(t1.begun, true);
  await ext.answer();
  assert.deepEqual([(await a).rows, (await b).rows], [[{ text: 'BEGIN+SELECT $1' }], [{ text: 'SELECT 2' }]]);
  assert.deepEqual(ext.queued, ['BEGIN+SELECT $1', 'SELECT 2']);

  const simple = fakeClient();
  const t2 = new Transaction(simple.client);
  const c = t2.query('SELECT 1');
  const d = t2.query('SELECT $1', [2], { name: 'n' });
  const e = t2.query('SELECT 3');
  await simple.answer();
  await Promise.all([c, d, e]);
  assert.deepEqual(simple.queued, ['BEGIN', 'SELECT 1', 'SELECT $1', 'SELECT 3']);
});
