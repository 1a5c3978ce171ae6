import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { listenRetryDelayMs } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/types.ts';
import { createTestDb, engine } from '../helpers/db.ts';
import { listenBackends, sleep, terminateListener, until, waitForResubscribe } from '../helpers/listen.ts';

// A PGlite database lives in the process: its LISTEN has no connection to lose.
const skip =
  engine === 'pglite' ? 'needs PostgreSQL (TEST_DATABASE_URL): PGlite has no LISTEN connection' : false;

let db: Db;
before(async () => {
  if (!skip) db = await createTestDb();
});
after(async () => {
  await db?.close();
});

/** A logger that records (level, message) of what the listener reports. */
function recordingLog() {
  const lines: Array<[string, string]> = [];
  return {
    lines,
    log: {
      warn: (_obj: object, msg: string) => lines.push(['warn', msg]),
      info: (_obj: object, msg: string) => lines.push(['info', msg]),
    },
  };
}

const notify = (channel: string, payload: string) => db.query('SELECT pg_notify($1, $2)', [channel, payload]);

test('after its backend is terminated, listen reconnects, re-subscribes and delivers the next NOTIFY', {
  skip,
}, async () => {
  const channel = 'cc_listen_terminated';
  const notes: string[] = [];
  let reconnects = 0;
  const { lines, log } = recordingLog();
  const unlisten = await db.listen(channel, (p) => notes.push(p), { onReconnect: () => reconnects++, log });
  try {
    await notify(channel, 'before');
    await until(() => notes.length === 1, 'the first notification');

    const oldPid = await terminateListener(db, channel);
    const fresh = await waitForResubscribe(db, channel, oldPid);
    assert.equal(fresh.application_name, 'callcap-listen');
    await until(() => reconnects === 1, 'onReconnect');

    await notify(channel, 'after');
    await until(() => notes.length === 2, 'the notification sent after the reconnection', 2000);
    assert.deepEqual(notes, ['before', 'after']);
    assert.equal(reconnects, 1);
    assert.deepEqual(lines, [
      ['warn', 'LISTEN connection lost; reconnecting'],
      ['info', 'LISTEN connection restored'],
    ]);
  } finally {
    await unlisten();
  }
});

test('listen keeps retrying with backoff while the database refuses connections', { skip }, async () => {
  const channel = 'cc_listen_refused';
  const { rows } = await db.query<{ name: string }>('SELECT current_database() AS name');
  const dbName = pg.escapeIdentifier(rows[0].name);
  // ALTER DATABASE from a connection to another database (the server's TEST_DATABASE_URL one).
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  const notes: string[] = [];
  let reconnects = 0;
  const { lines, log } = recordingLog();
  const unlisten = await db.listen(channel, (p) => notes.push(p), { onReconnect: () => reconnects++, log });
  try {
    await admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
    const oldPid = await terminateListener(db, channel);
    await until(
      () => lines.filter(([, m]) => m === 'LISTEN reconnection failed; retrying').length >= 2,
      'two failed reconnection attempts',
    );
    assert.equal(reconnects, 0);
    await admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`);

    await waitForResubscribe(db, channel, oldPid);
    await until(() => reconnects === 1, 'onReconnect');
    await notify(channel, 'back');
    await until(() => notes.length === 1, 'the notification sent after the reconnection', 2000);
    assert.deepEqual(notes, ['back']);
    assert.deepEqual(lines[0], ['warn', 'LISTEN connection lost; reconnecting']);
    assert.deepEqual(lines.at(-1), ['info', 'LISTEN connection restored']);
    assert.ok(lines.slice(1, -1).every(([level]) => level === 'warn'));
  } finally {
    await admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`).catch(() => {});
    await admin.end();
    await unlisten();
  }
});

test('unlisten closes the connection and stops reconnecting for good, even while reconnecting', {
  skip,
}, async () => {
  const channel = 'cc_listen_stopped';
  let reconnects = 0;
  const calm = await db.listen(channel, () => {}, { onReconnect: () => reconnects++ });
  assert.equal((await listenBackends(db, channel)).length, 1);
  await calm();
  await until(async () => (await listenBackends(db, channel)).length === 0, 'the LISTEN backend to go');

  const unlisten = await db.listen(channel, () => {}, { onReconnect: () => reconnects++ });
  await terminateListener(db, channel);
  await sleep(20); // the loss is noticed; the first retry is due within 100 ms
  await unlisten();
  await sleep(700); // several retry delays
  assert.deepEqual(await listenBackends(db, channel), []);
  assert.equal(reconnects, 0);
});

test('reconnection delays double from 100 ms to a 5 s cap, with jitter in the upper half', () => {
  const low = [0, 1, 2, 3, 4, 5, 6, 10, 60].map((n) => listenRetryDelayMs(n, () => 0));
  const high = [0, 1, 2, 3, 4, 5, 6, 10, 60].map((n) => listenRetryDelayMs(n, () => 0.999999));
  assert.deepEqual(low, [50, 100, 200, 400, 800, 1600, 2500, 2500, 2500]);
  assert.deepEqual(high, [99, 199, 399, 799, 1599, 3199, 4999, 4999, 4999]);
  assert.equal(
    listenRetryDelayMs(1, () => 0.5),
    150,
  );
});
