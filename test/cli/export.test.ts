import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HOUR } from '../../src/clock.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { insertApiKey, insertManyCalls, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { until } from '../helpers/listen.ts';

/**
 * `callcap export` against the real public listener on a loopback port: 10,000 calls seeded with one
 * INSERT … SELECT, exported within the key's rate limit; an export killed mid-way (SIGKILL) and one
 * interrupted with SIGINT, each resumed, are byte for byte the uninterrupted export; 429 answers are
 * waited out as Retry-After says.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const N = 10_000;
let h: Harness;
let apiUrl: string;
let tmp: string;
let key: { keyId: string; key: string };
let orgId: string;

before(async () => {
  h = await createHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  apiUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/api/v1`;
  tmp = await mkdtemp(join(tmpdir(), 'callcap-export-'));
  const org = await insertOrg(h.db);
  orgId = org.orgId;
  key = await insertApiKey(h.db, { orgId, userId: org.ownerId, scopes: ['read.calls'], rateLimit: 1000 });
  // 10,000 calls, three per minute, back from 2026-06-14; calls 5000..5249 share one instant.
  await insertManyCalls(h.db, {
    orgId,
    n: N,
    newest: new Date('2026-06-14T12:00:00.000Z'),
    tieFrom: 5000,
    tieCount: 250,
  });
});
after(async () => {
  await h?.close();
  await rm(tmp, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a process (the way a user runs it); onStderr sees stderr as it comes. */
function spawnCli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['src/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', CALLCAP_API_URL: apiUrl, CALLCAP_API_KEY: key.key, ...env },
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => {
    out.stdout += d;
  });
  child.stderr.on('data', (d) => {
    out.stderr += d;
  });
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, ...out }));
  });
  child.stdin.end();
  return { child, done, out };
}

/** The CLI in this process (faster; stderr lines reach onStderr synchronously). */
function inProcess(args: string[], env: Record<string, string> = {}, onStderr?: (s: string) => void) {
  return cliInProcess(args, { CALLCAP_API_URL: apiUrl, CALLCAP_API_KEY: key.key, ...env }, { onStderr });
}

async function expectedIds(where = '', params: unknown[] = []): Promise<string[]> {
  const { rows } = await h.db.query<{ id: string }>(
    `SELECT id FROM calls WHERE organization_id = $1 ${where} ORDER BY created_at DESC, id DESC`,
    [orgId, ...params],
  );
  return rows.map((r) => r.id);
}

const keyRequests = async (keyId: string) =>
  (
    await h.db.query<{ n: number }>(
      `SELECT COALESCE(sum(count), 0)::int AS n FROM rate_limit_windows WHERE bucket = $1`,
      [`key:${keyId}`],
    )
  ).rows[0].n;

let full: Buffer;

test('an export of 10,000 calls completes within the rate limit, newest first, every call once', async () => {
  const out = join(tmp, 'full.jsonl');
  const before = await keyRequests(key.keyId);
  const r = await inProcess(['export', '--output', out, '--from', '2026-01-01', '--to', '2026-06-30']);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout);
  full = await readFile(out);
  const lines = full.toString('utf8').split('\n');
  assert.equal(lines.pop(), '', 'the file ends with a newline');
  const items = lines.map((l) => JSON.parse(l));
  assert.deepEqual(
    items.map((c) => c.call_id),
    await expectedIds(),
  );
  // Each line is the Call exactly as GET /calls/{id} answers it.
  const sample = items.find((c) => c.caller_name?.startsWith("O'Brien") && c.transcript_processed);
  const one = await fetch(`${apiUrl}/calls/${sample.call_id}`, {
    headers: { authorization: `Bearer ${key.key}` },
  });
  assert.equal(lines[items.indexOf(sample)], JSON.stringify(((await one.json()) as { data: unknown }).data));

  // 99 new calls per request after the first (the cursor call is asked again), the 250-call tie
  // costs a few more, plus GET /me: far below the key's 1000 an hour, and no 429.
  assert.deepEqual(summary, {
    output: out,
    format: 'jsonl',
    calls: N,
    from: '2026-01-01',
    to: '2026-06-30',
    resumed: false,
    requests: summary.requests,
    rate_limited: 0,
    bytes: full.length,
  });
  assert.ok(summary.requests >= 101 && summary.requests <= 110, `requests: ${summary.requests}`);
  assert.equal((await keyRequests(key.keyId)) - before - 1, summary.requests, 'every request counted once');
  assert.doesNotMatch(r.stderr, /429|rate limited/);
  assert.match(r.stderr, /export: 10,000 calls, 100% of the date range, [\d,]+ calls\/s, ETA 0:00\n$/);
  await assert.rejects(stat(`${out}.export-state.json`), { code: 'ENOENT' });
});

test('an export killed mid-way and run again is byte-identical to the uninterrupted one', async () => {
  const out = join(tmp, 'killed.jsonl');
  const args = ['export', '--output', out, '--from', '2026-01-01', '--to', '2026-06-30'];
  const first = spawnCli(args);
  const state = `${out}.export-state.json`;
  await until(
    async () => {
      try {
        return JSON.parse(await readFile(state, 'utf8')).calls >= 3000;
      } catch {
        return false;
      }
    },
    'the export to get past 3000 calls',
    60_000,
  );
  first.child.kill('SIGKILL');
  const killed = await first.done;
  assert.equal(killed.signal, 'SIGKILL');
  const partial = await stat(out);
  assert.ok(partial.size > 0 && partial.size < full.length);

  const second = await spawnCli(args).done;
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, /^export: resuming after \d+ calls \(.*killed\.jsonl\.export-state\.json\)\n/);
  const summary = JSON.parse(second.stdout);
  assert.equal(summary.resumed, true);
  assert.equal(summary.calls, N);
  assert.ok((await readFile(out)).equals(full), 'the resumed file is the uninterrupted file');
  await assert.rejects(stat(state), { code: 'ENOENT' });
});

test('CSV: Ctrl-C stops with exit 130, the same command resumes, and the file equals an uninterrupted one', async () => {
  const range = [
    '--from',
    '2026-06-10',
    '--to',
    '2026-06-12T23:59:59Z',
    '--format',
    'csv',
    '--page-size',
    '50',
  ];
  const whole = join(tmp, 'whole.csv');
  const ok = await inProcess(['export', '--output', whole, ...range]);
  assert.equal(ok.code, 0, ok.stderr);
  const expected = await readFile(whole);
  const text = expected.toString('utf8');
  assert.ok(
    text.startsWith(
      'call_id,created_at,direction,caller_phone,customer_phone_e164,customer_phone_national,company_phone_e164,caller_name,duration,crm_status,review_status,outbound_lifecycle,app_url,analysis_caller_name,summary,service_needed,followup_email_subject,followup_email_body,followup_email_language\r\n',
    ),
  );
  const ids = await expectedIds(`AND created_at BETWEEN '2026-06-10T00:00:00Z' AND '2026-06-12T23:59:59Z'`);
  assert.equal(JSON.parse(ok.stdout).calls, ids.length);
  assert.ok(ids.length > 500);
  // A quoted name and a quoted multi-line summary survive as RFC 4180 fields.
  assert.match(text, /,"O'Brien, ""Pat"" #\d+",/);
  assert.match(
    text,
    /,"Leak under the sink, ""urgent"",\ncall back",plumbing,Your leak,"Hi,\nwe will come.",en\r\n/,
  );

  const out = join(tmp, 'interrupted.csv');
  const first = spawnCli(['export', '--output', out, ...range]);
  await until(
    async () => {
      try {
        return JSON.parse(await readFile(`${out}.export-state.json`, 'utf8')).calls >= 200;
      } catch {
        return false;
      }
    },
    'the CSV export to get past 200 calls',
    60_000,
  );
  first.child.kill('SIGINT');
  const stopped = await first.done;
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.match(stopped.stderr, /callcap: interrupted; run the same command again to resume\.\n$/);
  assert.equal(stopped.stdout, '');
  const resumed = await spawnCli(['export', '--output', out, ...range]).done;
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.ok((await readFile(out)).equals(expected), 'the resumed CSV is the uninterrupted CSV');
});

test('429: the export waits as long as Retry-After says and completes within a tiny rate limit', async () => {
  const org = await insertOrg(h.db, { name: 'Tiny Limit' });
  const tiny = await insertApiKey(h.db, {
    orgId: org.orgId,
    userId: org.ownerId,
    scopes: ['read.calls'],
    rateLimit: 2,
  });
  await insertManyCalls(h.db, { orgId: org.orgId, n: 35, newest: new Date('2026-06-14T12:00:00.000Z') });
  // One second before the hour: each 429 says Retry-After: 1; when the CLI announces its wait, the
  // clock jumps an hour (to the next hour's last second), so the retry lands in a fresh window.
  h.clock.set('2026-06-15T10:59:59.000Z');
  const waits: string[] = [];
  const r = await inProcess(
    ['export', '--output', join(tmp, 'tiny.jsonl'), '--page-size', '10'],
    { CALLCAP_API_KEY: tiny.key },
    (s) => {
      if (s.includes('rate limited (429)')) {
        waits.push(s);
        h.clock.advance(HOUR);
      }
    },
  );
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.calls, 35);
  // GET /me and 4 pages (10 new calls, then 9 each: the cursor's call is asked again) at 2 an hour:
  // /me, page 1 | 429, page 2, page 3 | 429, page 4.
  assert.equal(summary.rate_limited, 2, r.stderr);
  assert.equal(summary.requests, 7);
  assert.equal(waits.length, summary.rate_limited);
  for (const w of waits) assert.equal(w, 'export: rate limited (429): waiting 1 s as Retry-After says\n');
  const lines = (await readFile(join(tmp, 'tiny.jsonl'), 'utf8')).trimEnd().split('\n');
  const { rows } = await h.db.query<{ id: string }>(
    'SELECT id FROM calls WHERE organization_id = $1 ORDER BY created_at DESC, id DESC',
    [org.orgId],
  );
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).call_id),
    rows.map((x) => x.id),
  );
});

test('usage and configuration errors exit 2 and touch nothing', async () => {
  const noKey = await inProcess(['export', '--output', join(tmp, 'x.jsonl')], { CALLCAP_API_KEY: '' });
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /^callcap: no API key: set CALLCAP_API_KEY/);

  const existing = join(tmp, 'existing.jsonl');
  await writeFile(existing, 'keep me\n');
  const refused = await inProcess(['export', '--output', existing]);
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /existing\.jsonl exists and is not a partial export .*give --restart to overwrite it\./,
  );
  assert.equal(await readFile(existing, 'utf8'), 'keep me\n');

  const badFormat = await inProcess(['export', '--output', join(tmp, 'y'), '--format', 'xml']);
  assert.equal(badFormat.code, 2);
  assert.match(
    badFormat.stderr,
    /^callcap: --format must be jsonl or csv, not "xml"\.\nUsage: callcap export --output <file\|-> /,
  );

  const backwards = await inProcess([
    'export',
    '--output',
    join(tmp, 'z'),
    '--from',
    '2026-06-10',
    '--to',
    '2026-06-01',
  ]);
  assert.equal(backwards.code, 2);
  assert.match(backwards.stderr, /^callcap: --from \(2026-06-10\) is after --to \(2026-06-01\)\./);

  const wrongKey = await inProcess(['export', '--output', join(tmp, 'w')], {
    CALLCAP_API_KEY: 'cc_live_nope',
  });
  assert.equal(wrongKey.code, 1);
  assert.match(wrongKey.stderr, /^callcap: 401 UNAUTHORIZED: /);
  await assert.rejects(stat(join(tmp, 'w')), { code: 'ENOENT' });
});

test('a partial export resumed with other options is refused', async () => {
  const out = join(tmp, 'other.jsonl');
  await writeFile(out, '');
  await writeFile(
    `${out}.export-state.json`,
    JSON.stringify({
      version: 1,
      options: {
        api_url: apiUrl,
        organization_id: orgId,
        from: '2026-01-01',
        to: null,
        format: 'jsonl',
        filters: {},
        page_size: 100,
      },
      range_to: '2026-06-15T10:00:00.999Z',
      cursor: null,
      bytes: 0,
      calls: 0,
      done: false,
    }),
  );
  const r = await inProcess(['export', '--output', out, '--from', '2026-02-01']);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /belongs to an export with other options \(from differ\); repeat that export's options/,
  );
  const restarted = await inProcess(['export', '--output', out, '--from', '2026-06-14', '--restart']);
  assert.equal(restarted.code, 0, restarted.stderr);
  assert.equal(JSON.parse(restarted.stdout).resumed, false);
});
