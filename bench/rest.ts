/**
 * REST benchmark (npm run bench:rest). Seeds PostgreSQL (1,000,000 calls across organizations, one
 * holding 200,000; kept between runs), starts the product's public app and a bare Fastify baseline
 * route (same primary-key query, no auth, no rate limiting) as separate processes, and loads both
 * with autocannon in this process. Prints requests/s, p50, p99 and the ratio to the baseline.
 *
 * BENCH_DATABASE_URL  server to use (default postgres://postgres@127.0.0.1:5432/test)
 * BENCH_SECONDS       seconds per scenario (default 10)
 * BENCH_CONNECTIONS   concurrent connections (default 50)
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import pg from 'pg';
import { generateApiKey } from '../src/accounts/api-key-format.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { BIG_ORG, BIG_ORG_OWNER, seedCalls } from './seed-calls.ts';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DB_NAME = 'cc_bench_rest';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const log = (s: string) => process.stdout.write(s + '\n');

async function ensureDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DB_NAME}`);
  await admin.end();
  const u = new URL(SERVER);
  u.pathname = `/${DB_NAME}`;
  return u.toString();
}

function startServer(
  script: string,
  env: Record<string, string>,
): Promise<{ port: number; stop: () => void }> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      const m = /^PORT (\d+)/.exec(line);
      if (m) resolve({ port: Number(m[1]), stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(
  name: string,
  url: string,
  paths: string[],
  headers: Record<string, string>,
): Promise<Result> {
  let i = 0;
  const r = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    requests: [
      { setupRequest: (req: Record<string, unknown>) => ({ ...req, path: paths[i++ % paths.length] }) },
    ],
  });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx };
}

async function main() {
  const url = await ensureDatabase();
  const db = await openPostgres(url, { max: 4 });
  await migrate(db);
  const seeded = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM calls');
  if (seeded.rows[0].n === 0) {
    log('Seeding (first run only; the database is kept for later runs)…');
    await seedCalls(db, log);
  } else {
    log(`Using the existing seed: ${seeded.rows[0].n.toLocaleString()} calls.`);
  }
  if (process.env.BENCH_SEED_ONLY === '1') return db.close();
  const { key, prefix, hash } = generateApiKey();
  const keyId = crypto.randomUUID();
  await db.query(
    `INSERT INTO api_keys (id, organization_id, user_id, name, prefix, key_hash, scopes, rate_limit_per_hour, created_at)
     VALUES ($1, $2, $3, 'bench', $4, $5, '{read.calls,read.recordings}', 1000000000, now())`,
    [keyId, BIG_ORG, BIG_ORG_OWNER, prefix, hash],
  );
  const ids = (
    await db.query<{ id: string }>(
      'SELECT id FROM calls WHERE organization_id = $1 ORDER BY hashtext(id::text) LIMIT 2000',
      [BIG_ORG],
    )
  ).rows.map((r) => r.id);
  const phones = (
    await db.query<{ p: string }>(
      'SELECT customer_phone_e164 AS p FROM calls WHERE organization_id = $1 ORDER BY hashtext(id::text) LIMIT 200',
      [BIG_ORG],
    )
  ).rows.map((r) => encodeURIComponent(r.p));

  const env = { BENCH_DB_URL: url, BENCH_ORG: BIG_ORG };
  const baseline = await startServer('bench/baseline-server.ts', env);
  const product = await startServer('bench/product-server.ts', env);
  const auth = { authorization: `Bearer ${key}` };
  const results: Result[] = [];
  try {
    const b = `http://127.0.0.1:${baseline.port}`;
    const p = `http://127.0.0.1:${product.port}`;
    // Warm both up (connection pools, JIT, buffer cache).
    await load(
      'warm-up',
      b,
      ids.map((id) => `/calls/${id}`),
      {},
    );
    await load(
      'warm-up',
      p,
      ids.map((id) => `/api/v1/calls/${id}`),
      auth,
    );
    results.push(
      await load(
        'baseline: bare route, PK query',
        b,
        ids.map((id) => `/calls/${id}`),
        {},
      ),
    );
    results.push(
      await load(
        'GET /calls/{id}',
        p,
        ids.map((id) => `/api/v1/calls/${id}`),
        auth,
      ),
    );
    results.push(await load('GET /calls', p, ['/api/v1/calls'], auth));
    results.push(await load('GET /calls?limit=100&page=20', p, ['/api/v1/calls?limit=100&page=20'], auth));
    results.push(
      await load(
        'GET /calls?status=qualified&direction=inbound',
        p,
        ['/api/v1/calls?status=qualified&direction=inbound'],
        auth,
      ),
    );
    results.push(
      await load(
        'GET /calls?dateFrom&dateTo',
        p,
        ['/api/v1/calls?dateFrom=2026-03-01&dateTo=2026-03-31'],
        auth,
      ),
    );
    results.push(
      await load(
        'GET /calls?phone=<full number>',
        p,
        phones.map((ph) => `/api/v1/calls?phone=${ph}`),
        auth,
      ),
    );
    results.push(await load('GET /me', p, ['/api/v1/me'], auth));
  } finally {
    baseline.stop();
    product.stop();
    await db.query('DELETE FROM api_keys WHERE id = $1', [keyId]);
    await db.query(`DELETE FROM rate_limit_windows WHERE bucket IN ($1, $2)`, [
      `key:${keyId}`,
      `org:${BIG_ORG}`,
    ]);
    await db.close();
  }
  const base = results[0].rps;
  log(
    `\nREST benchmark — ${new Date().toISOString()} — ${CONNECTIONS} connections, ${SECONDS} s per scenario`,
  );
  log(
    'scenario'.padEnd(52) +
      'req/s'.padStart(9) +
      'p50 ms'.padStart(9) +
      'p99 ms'.padStart(9) +
      'vs base'.padStart(9) +
      'non-2xx'.padStart(9),
  );
  for (const r of results) {
    log(
      r.name.padEnd(52) +
        r.rps.toFixed(0).padStart(9) +
        String(r.p50).padStart(9) +
        String(r.p99).padStart(9) +
        `${((100 * r.rps) / base).toFixed(0)} %`.padStart(9) +
        String(r.non2xx).padStart(9),
    );
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
