import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { migrationFiles } from '../../src/db/migrate.ts';
import { DatabaseError, type Db } from '../../src/db/types.ts';
import { buildOperatorApp } from '../../src/http/operator/app.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { T0 } from '../helpers/deps.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, bearer, errorBody } from '../helpers/http.ts';

/** GET /healthz and /readyz on both listeners (issue 11, item 5). */
let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

const READY = { status: 'ready', database: 'ok', migrations: 'current' };
const UNREACHABLE = {
  ...errorBody('DATABASE_ERROR', 'Not ready: the database does not answer.'),
  status: 'not_ready',
  database: 'unreachable',
  migrations: 'unknown',
};

const listeners = () =>
  [
    ['public', h.app],
    ['operator', h.operator],
  ] as const;

test('GET /healthz and /readyz answer 200 on both listeners, uncached, without authentication', async () => {
  for (const [name, app] of listeners()) {
    for (const headers of [{}, bearer('cc_live_not_a_key'), { authorization: ['Bearer a', 'Bearer b'] }]) {
      const live = await app.inject({
        method: 'GET',
        url: '/healthz',
        headers: headers as Record<string, string>,
      });
      assert.equal(live.statusCode, 200, `${name}: ${live.body}`);
      assert.deepEqual(JSON.parse(live.body), { status: 'ok' });
      assert.equal(live.headers['cache-control'], 'no-store');
      assert.equal(live.headers['x-ratelimit-limit'], undefined);
      const ready = await app.inject({
        method: 'GET',
        url: '/readyz',
        headers: headers as Record<string, string>,
      });
      assert.equal(ready.statusCode, 200, `${name}: ${ready.body}`);
      assert.deepEqual(JSON.parse(ready.body), READY);
      assert.equal(ready.headers['cache-control'], 'no-store');
      assert.equal(ready.headers['x-ratelimit-limit'], undefined);
    }
  }
});

test('they keep answering 200 while the public API is in maintenance (they are outside /api/v1)', async () => {
  assert.equal((await admin(h, 'PUT', '/maintenance', { public_api_enabled: false })).statusCode, 200);
  try {
    h.clock.advance(2_000);
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me' })).statusCode, 503);
    for (const url of ['/healthz', '/readyz']) {
      const res = await h.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
    }
  } finally {
    await admin(h, 'PUT', '/maintenance', { public_api_enabled: true });
    h.clock.advance(2_000);
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me' })).statusCode, 401);
    h.clock.set(T0);
  }
});

test('/readyz answers 503 naming the migrations that are not applied', async () => {
  const files = await migrationFiles();
  const last = files[files.length - 1];
  const { rows } = await h.db.query<{ applied_at: Date }>(
    'DELETE FROM schema_migrations WHERE name = $1 RETURNING applied_at',
    [last],
  );
  assert.equal(rows.length, 1);
  try {
    for (const [name, app] of listeners()) {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503, name);
      assert.deepEqual(JSON.parse(res.body), {
        ...errorBody(
          'DATABASE_ERROR',
          `Not ready: the database schema is behind this version (1 migration(s) not applied: ${last}); start the service once so that it migrates.`,
        ),
        status: 'not_ready',
        database: 'ok',
        migrations: 'behind',
      });
      assert.equal(res.headers['cache-control'], 'no-store');
      // Liveness does not depend on the database.
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    }
  } finally {
    await h.db.query('INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)', [
      last,
      rows[0].applied_at,
    ]);
  }
  assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
});

/** The harness's deps with a database that fails (or never answers) every query. */
const brokenDb = (mode: 'error' | 'hang'): Db => ({
  ...h.db,
  query: () =>
    mode === 'error'
      ? Promise.reject(new DatabaseError('connect ECONNREFUSED 127.0.0.1:5432'))
      : new Promise(() => {}),
});

for (const mode of ['error', 'hang'] as const) {
  test(`/readyz answers 503 when the database ${mode === 'error' ? 'refuses connections' : 'does not answer within 2 s'}; /healthz stays 200`, async () => {
    const deps = { ...h.deps, db: brokenDb(mode) };
    const pub = await buildPublicApp(deps);
    const op = await buildOperatorApp(deps);
    try {
      for (const app of [pub, op]) {
        const started = Date.now();
        const res = await app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(res.statusCode, 503);
        assert.deepEqual(JSON.parse(res.body), UNREACHABLE);
        if (mode === 'hang') assert.ok(Date.now() - started >= 1900, 'waited for the 2 s budget');
        const live = await app.inject({ method: 'GET', url: '/healthz' });
        assert.equal(live.statusCode, 200);
        assert.deepEqual(JSON.parse(live.body), { status: 'ok' });
      }
    } finally {
      await pub.close();
      await op.close();
    }
  });
}
