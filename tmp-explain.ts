import pg from 'pg';
import { readInbox } from './src/capture/inbox.ts';
import { readBoard } from './src/capture/board.ts';
import { BIG_ORG } from './bench/seed-calls.ts';
import type { InboxQuery } from './src/domain/inbox.ts';
const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/cc_bench_inbox' });
await client.connect();
const scope = { organizationId: BIG_ORG, environment: 'live' as const };
const base: InboxQuery = { view: 'all', sort: 'newest', page: 1, limit: 25, from: null, to: null, direction: null, status: null, words: null, phoneDigits: null };
const which = process.argv[2] ?? '';
const cases: [string, InboxQuery][] = [
  ['all', base],
  ['needs_review', { ...base, view: 'needs_review' }],
  ['name', { ...base, words: 'Caller 123457' }],
  ['word', { ...base, words: 'shingles' }],
  ['phone', { ...base, words: '+12000987650', phoneDigits: ['12000987650'] }],
  ['score', { ...base, sort: 'score' }],
];
for (const [name, q] of cases) {
  if (which && !name.startsWith(which)) continue;
  let sql = ''; let params: unknown[] = [];
  const fake = { query: async (s: string, p: unknown[]) => { sql = s; params = p; return { rows: [{ n_needs_review: '0', n_needs_decision: '0', n_new: '0', n_all: '0', rn: null }] }; } };
  await readInbox(fake as never, scope, q);
  for (let i = 0; i < 2; i++) await client.query(sql, params);
  const t = Date.now();
  const r = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  console.log(`== ${name}: ${Date.now() - t} ms`);
  if (process.env.PLAN) console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
  else console.log(r.rows.slice(-2).map((x) => x['QUERY PLAN']).join('\n'));
}
if (!which || which === 'board') {
  let sql = ''; let params: unknown[] = [];
  const fake = { query: async (s: string, p: unknown[]) => { sql = s; params = p; return { rows: [] }; } };
  await readBoard(fake as never, scope);
  await client.query(sql, params);
  const r = await client.query(`EXPLAIN (ANALYZE) ${sql}`, params);
  console.log('== board'); console.log(r.rows.slice(-2).map((x) => x['QUERY PLAN']).join('\n'));
}
await client.end();
