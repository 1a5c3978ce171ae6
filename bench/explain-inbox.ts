/**
 * EXPLAIN (ANALYZE, BUFFERS) of the statements the lead inbox pages run (issue 18): the inbox (All,
 * Needs review, sorted by score), a search (a name, a topic word, a number) and the board, on the
 * bench database, as the pages run them (the big organization, environment 'live').
 *
 *   BENCH_DB_NAME=cc_bench_inbox node bench/explain-inbox.ts [scenario regexp] [--plans]
 *
 * Prints each statement's median execution time over five runs (after one warm-up), the shared buffers
 * its plan touched (the top node's, a figure the machine's load does not change) and, with --plans, the
 * plan of the last run.
 */
import { readBoard } from '../src/capture/board.ts';
import { readInbox } from '../src/capture/inbox.ts';
import { openPostgres } from '../src/db/postgres.ts';
import type { Queryable } from '../src/db/types.ts';
import type { InboxQuery } from '../src/domain/inbox.ts';
import { phoneFilterDigits } from '../src/domain/phone.ts';
import { BIG_ORG } from './seed-calls.ts';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const url = new URL(SERVER);
url.pathname = `/${process.env.BENCH_DB_NAME ?? 'cc_bench_inbox'}`;
const db = await openPostgres(url.toString(), { max: 1 });
const only = new RegExp(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? '.');
const plans = process.argv.includes('--plans');
const scope = { organizationId: BIG_ORG, environment: 'live' as const };

const phone = (
  await db.query<{ p: string }>(
    'SELECT customer_phone_e164 AS p FROM calls WHERE organization_id = $1 ORDER BY hashtext(id::text) LIMIT 1',
    [BIG_ORG],
  )
).rows[0]!.p;
const name = (
  await db.query<{ n: string }>(
    `SELECT c.caller_name AS n FROM calls c JOIN call_analyses a ON a.call_id = c.id
      WHERE c.organization_id = $1 AND c.caller_name IS NOT NULL ORDER BY hashtext(c.id::text) LIMIT 1`,
    [BIG_ORG],
  )
).rows[0]!.n;

const base: InboxQuery = {
  view: 'all',
  sort: 'newest',
  page: 1,
  limit: 25,
  from: null,
  to: null,
  direction: null,
  status: null,
  words: null,
  phoneDigits: null,
};
const search = (words: string): InboxQuery => {
  const d = phoneFilterDigits(words);
  return { ...base, words, phoneDigits: d?.ok ? d.digits : null };
};
const inboxes: [string, InboxQuery][] = [
  ['inbox All', base],
  ['inbox needs_review', { ...base, view: 'needs_review' }],
  ['inbox sort=score', { ...base, sort: 'score' }],
  ['inbox sort=score page 40', { ...base, sort: 'score', page: 40 }],
  ['search name', search(name)],
  ['search topic word (shingles)', search('shingles')],
  ['search topic word (sewer)', search('sewer')],
  ['search number', search(phone)],
  ['search topic word sort=score', { ...search('cistern'), sort: 'score' }],
];

/** Runs the statement, and EXPLAIN ANALYZEs it: its median execution time of five runs. */
function explaining(name: string): Queryable {
  return {
    async query(sql, params) {
      const times: number[] = [];
      let plan = '';
      for (let i = 0; i < 6; i++) {
        const { rows } = await db.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, BUFFERS) ${sql}`,
          params,
        );
        plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)![1]);
        if (i > 0) times.push(ms);
      }
      times.sort((a, b) => a - b);
      const buffers = /Buffers: shared hit=(\d+)/.exec(plan)?.[1] ?? '?';
      console.log(
        `${name.padEnd(34)} ${times[2]!.toFixed(2).padStart(9)} ms (min ${times[0]!.toFixed(2)}), ${buffers} buffers`,
      );
      if (plans) console.log(`${sql}\n-- ${JSON.stringify(params)}\n${plan}\n`);
      return db.query(sql, params);
    },
  } as Queryable;
}

for (const [label, q] of inboxes) if (only.test(label)) await readInbox(explaining(label), scope, q);
if (only.test('board')) await readBoard(explaining('board'), scope);
await db.close();
