import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { CliIo } from '../../src/cli/command.ts';
import { boundMs, csvField, runExport } from '../../src/cli/export.ts';
import { formatDuration, Progress, renderBar, renderLine } from '../../src/cli/progress.ts';
import { retryAfterMs, waitAfter } from '../../src/cli/rest-client.ts';

/**
 * The pieces of `callcap export` that the end-to-end test (export.test.ts) cannot steer: the
 * rate-limit arithmetic, the progress rendering, and the engine against a scripted REST server
 * (a proactive wait on X-RateLimit-Remaining 0 measured against the server's Date header, a 503
 * retried, stdout output).
 */
let tmp: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'callcap-export-units-'));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const headers = (h: Record<string, string>) => new Headers(h);

test('waitAfter waits for X-RateLimit-Reset only when nothing remains, measured on the Date header', () => {
  const date = 'Mon, 15 Jun 2026 10:59:50 GMT';
  assert.deepEqual(
    waitAfter(
      headers({ 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '2026-06-15T11:00:00.000Z', date }),
    ),
    { ms: 0, reset: null },
  );
  // 10 s to the reset by the server's clock, plus a second for the Date header's precision; the
  // local clock (a year off here) does not matter.
  assert.deepEqual(
    waitAfter(
      headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2026-06-15T11:00:00.000Z', date }),
      Date.parse('2027-01-01T00:00:00Z'),
    ),
    { ms: 11_000, reset: '2026-06-15T11:00:00.000Z' },
  );
  // Without a Date header the local clock is used; a reset in the past means no wait.
  assert.deepEqual(
    waitAfter(
      headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2026-06-15T11:00:00.000Z' }),
      Date.parse('2026-06-15T11:00:01Z'),
    ),
    { ms: 0, reset: '2026-06-15T11:00:00.000Z' },
  );
  // A reset more than a window away means the clocks disagree: no proactive wait (a 429 decides).
  assert.deepEqual(
    waitAfter(
      headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2026-06-15T13:00:00.000Z', date }),
    ),
    { ms: 0, reset: '2026-06-15T13:00:00.000Z' },
  );
  assert.deepEqual(waitAfter(headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': 'soon' })), {
    ms: 0,
    reset: null,
  });
});

test('Retry-After is read as seconds or as an HTTP date', () => {
  assert.equal(retryAfterMs(headers({ 'retry-after': '7' })), 7000);
  assert.equal(
    retryAfterMs(
      headers({ 'retry-after': 'Mon, 15 Jun 2026 11:00:00 GMT' }),
      Date.parse('2026-06-15T10:59:30Z'),
    ),
    30_000,
  );
  assert.equal(retryAfterMs(headers({})), null);
  assert.equal(retryAfterMs(headers({ 'retry-after': 'later' })), null);
});

test('progress: the terminal bar, the plain line and durations', () => {
  const p = { calls: 6100, fraction: 0.61, rate: 310.4, etaSeconds: 12.2 };
  assert.equal(renderBar(p, 80), `[${'█'.repeat(24)}${'░'.repeat(16)}]   61%  6,100 calls  310/s  ETA 0:12`);
  assert.equal(renderLine(p), 'export: 6,100 calls, 61% of the date range, 310 calls/s, ETA 0:12');
  const unknown = { calls: 42, fraction: null, rate: 5, etaSeconds: null };
  assert.equal(renderBar(unknown), 'export  42 calls  5/s');
  assert.equal(renderLine(unknown), 'export: 42 calls, 5 calls/s');
  assert.equal(formatDuration(3725), '1:02:05');
  assert.equal(formatDuration(59.6), '1:00');
});

test('progress on a terminal redraws one line in place and leaves a fresh line at the end', () => {
  let err = '';
  const io: CliIo = {
    env: {},
    stdout: () => {},
    stderr: (s) => {
      err += s;
    },
    readStdin: async () => '',
    stderrIsTty: true,
    columns: 60,
  };
  const p = new Progress(io, { fromMs: 0, toMs: 1000 });
  p.start(0, null);
  p.update(50, 500);
  p.note('rate limited (429): waiting 1 s as Retry-After says');
  p.end();
  const CLEAR = '\r\x1b[K';
  assert.ok(err.startsWith(`${CLEAR}[`), 'the bar starts at the line start, the line cleared');
  assert.match(err.slice(CLEAR.length), /^\[█+░+\] {3}50% {2}50 calls {2}[\d,]+\/s {2}ETA 0:00/);
  assert.ok(err.includes('\r\x1b[Kexport: rate limited (429): waiting 1 s as Retry-After says\n\r\x1b[K['));
  assert.ok(err.endsWith('\n'));
  assert.equal(err.split('\n').length, 3, 'the bar never scrolls');
});

test('csvField quotes what RFC 4180 needs quoted, and boundMs reads dates as the API does', () => {
  assert.equal(csvField(null), '');
  assert.equal(csvField(undefined), '');
  assert.equal(csvField(12.5), '12.5');
  assert.equal(csvField('+14155550100'), '+14155550100');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('two\nlines'), '"two\nlines"');
  assert.equal(boundMs('2026-06-15', false), Date.parse('2026-06-15T00:00:00.000Z'));
  assert.equal(boundMs('2026-06-15', true), Date.parse('2026-06-15T23:59:59.999Z'));
  assert.equal(boundMs('2026-06-15T10:00:00+02:00', true), Date.parse('2026-06-15T08:00:00Z'));
  assert.equal(boundMs('June', false), null);
});

/** A REST server following a script: each GET /calls answers the next entry. */
async function scripted(
  calls: { status: number; body?: unknown; headers?: Record<string, string> }[],
): Promise<{ server: Server; url: string; seen: { url: string; at: number }[] }> {
  const seen: { url: string; at: number }[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', at: Date.now() });
    if (req.url === '/api/v1/me') {
      res.writeHead(200, { 'content-type': 'application/json', date: 'Mon, 15 Jun 2026 10:00:00 GMT' });
      res.end(JSON.stringify({ success: true, data: { organization_id: 'org-1', scopes: ['read.calls'] } }));
      return;
    }
    const next = calls.shift() ?? { status: 500 };
    res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
    res.end(JSON.stringify(next.body ?? { success: false, error: { code: 'DATABASE_ERROR', message: 'x' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, seen };
}

const call = (id: string, at: string) => ({ call_id: id, created_at: at, direction: 'inbound' });
const page = (items: unknown[], hasMore: boolean) => ({ success: true, data: { items, has_more: hasMore } });

test('the export waits out X-RateLimit-Remaining 0 by the Date header, retries a 503, and can write to stdout', async () => {
  const now = new Date();
  const reset = new Date(Math.floor(now.getTime() / 1000) * 1000 + 2000);
  const s = await scripted([
    {
      status: 200,
      body: page([call('c3', '2026-06-15T09:00:02.000Z'), call('c2', '2026-06-15T09:00:01.000Z')], true),
      headers: {
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': reset.toISOString(),
        date: now.toUTCString(),
      },
    },
    { status: 503, headers: { 'retry-after': '0' } },
    {
      status: 200,
      body: page([call('c2', '2026-06-15T09:00:01.000Z'), call('c1', '2026-06-15T09:00:00.000Z')], false),
    },
  ]);
  let out = '';
  let err = '';
  try {
    const summary = await runExport({
      target: { base: s.url, apiKey: 'k' },
      from: null,
      to: '2026-06-15',
      format: 'jsonl',
      output: '-',
      filters: { direction: 'inbound' },
      pageSize: 2,
      restart: false,
      io: {
        env: {},
        stdout: (x) => {
          out += x;
        },
        stderr: (x) => {
          err += x;
        },
        readStdin: async () => '',
      },
      signal: new AbortController().signal,
      backoffMs: () => 10,
    });
    assert.equal(summary.calls, 3);
    assert.equal(summary.requests, 4);
  } finally {
    await new Promise((r) => s.server.close(r));
  }
  assert.deepEqual(
    out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).call_id),
    ['c3', 'c2', 'c1'],
  );
  assert.deepEqual(
    s.seen.map((x) => x.url),
    [
      '/api/v1/me',
      '/api/v1/calls?limit=2&page=1&dateTo=2026-06-15&direction=inbound',
      '/api/v1/calls?limit=2&page=1&dateTo=2026-06-15T09%3A00%3A01.000Z&direction=inbound',
      '/api/v1/calls?limit=2&page=1&dateTo=2026-06-15T09%3A00%3A01.000Z&direction=inbound',
    ],
  );
  const waited = s.seen[2].at - s.seen[1].at;
  assert.ok(waited >= 1900, `waited ${waited} ms for X-RateLimit-Reset`);
  assert.ok(
    err.includes(
      `export: rate limit reached (X-RateLimit-Remaining: 0): waiting until ${reset.toISOString()}\n`,
    ),
  );
  assert.ok(err.includes('export: 503 DATABASE_ERROR: x; trying again in 0 s\n'));
});

test('a page that is one instant throughout moves to page 2 of that instant; the file resumes there', async () => {
  const at = '2026-06-15T09:00:00.000Z';
  const s = await scripted([
    { status: 200, body: page([call('d', '2026-06-15T09:00:01.000Z'), call('c', at)], true) },
    { status: 200, body: page([call('c', at), call('b', at)], true) },
    { status: 200, body: page([call('a', at), call('z', '2026-06-15T08:00:00.000Z')], false) },
  ]);
  const output = join(tmp, 'ties.jsonl');
  try {
    const r = await runExport({
      target: { base: s.url, apiKey: 'k' },
      from: '2026-06-15',
      to: null,
      format: 'jsonl',
      output,
      filters: {},
      pageSize: 2,
      restart: false,
      io: { env: {}, stdout: () => {}, stderr: () => {}, readStdin: async () => '' },
      signal: new AbortController().signal,
    });
    assert.equal(r.calls, 5);
    // Without --to the range ends at the server's time (Date header of GET /me, end of that second).
    assert.equal(r.to, '2026-06-15T10:00:00.999Z');
  } finally {
    await new Promise((r) => s.server.close(r));
  }
  assert.deepEqual(
    s.seen.slice(1).map((x) => new URL(x.url, 'http://x').searchParams.toString()),
    [
      'limit=2&page=1&dateFrom=2026-06-15&dateTo=2026-06-15T10%3A00%3A00.999Z',
      `limit=2&page=1&dateFrom=2026-06-15&dateTo=${encodeURIComponent(at)}`,
      `limit=2&page=2&dateFrom=2026-06-15&dateTo=${encodeURIComponent(at)}`,
    ],
  );
  const ids = (await readFile(output, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l).call_id);
  assert.deepEqual(ids, ['d', 'c', 'b', 'a', 'z']);
});

test('an unreachable API is retried 5 times, then the export stops with exit 1 and says what to check', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  let err = '';
  const base = `http://127.0.0.1:${port}/api/v1`;
  await assert.rejects(
    runExport({
      target: { base, apiKey: 'k' },
      from: null,
      to: null,
      format: 'jsonl',
      output: join(tmp, 'never.jsonl'),
      filters: {},
      pageSize: 100,
      restart: false,
      io: {
        env: {},
        stdout: () => {},
        stderr: (x) => {
          err += x;
        },
        readStdin: async () => '',
      },
      signal: new AbortController().signal,
      backoffMs: () => 1,
    }),
    {
      name: 'CliError',
      exitCode: 1,
      message: `cannot reach the REST API at ${base} (ECONNREFUSED). Is the service running? Set CALLCAP_API_URL to its /api/v1 address.`,
    },
  );
  assert.equal(err, `export: cannot reach ${base} (ECONNREFUSED); trying again in 1 s\n`.repeat(5));
});
