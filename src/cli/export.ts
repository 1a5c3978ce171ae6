import { open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { boundEnd, boundStart, parseDateParam } from '../domain/date-param.ts';
import { CliError } from './admin-client.ts';
import type { CliIo } from './command.ts';
import { Progress } from './progress.ts';
import { Interrupted, type RestOptions, type RestTarget, restGet, sleep, waitAfter } from './rest-client.ts';

/**
 * `callcap export`: every call of a date range through GET /calls, newest first, as JSON lines or
 * CSV. Resumable: after every page the file is synced and then a state file next to it
 * (<output>.export-state.json) records the cursor and the file's length; a new run with the same
 * options truncates the file to that length and goes on from the cursor, so a resumed export is
 * byte for byte the uninterrupted one. The state file goes when the export is complete.
 *
 * Paging is by cursor, not by page number: each request asks for the calls up to (dateTo) the
 * created_at of the last call written, and skips the ids already written at exactly that instant
 * (the API orders created_at DESC, id DESC). A call created or erased meanwhile therefore never
 * shifts a later page, and every request reads the first page, which the API serves fastest. Only
 * when a whole page shares one created_at does the next request ask for page 2 of the same instant.
 */

export type ExportFormat = 'jsonl' | 'csv';

export interface ExportOptions {
  target: RestTarget;
  /** dateFrom as given (YYYY-MM-DD or ISO 8601), or null for no start */
  from: string | null;
  /** dateTo as given, or null: then the time the export started (the server's clock) */
  to: string | null;
  format: ExportFormat;
  /** a file path, or "-" for stdout (not resumable) */
  output: string;
  filters: { direction?: string; status?: string; phone?: string };
  pageSize: number;
  /** discard a partial export (or overwrite a finished file) and start again */
  restart: boolean;
  io: CliIo;
  signal: AbortSignal;
  /** tests: backoff of transient failures */
  backoffMs?: RestOptions['backoffMs'];
}

export interface ExportSummary {
  output: string;
  format: ExportFormat;
  calls: number;
  from: string | null;
  to: string;
  resumed: boolean;
  requests: number;
  rate_limited: number;
  bytes: number;
}

interface Cursor {
  /** dateTo of the next request (a created_at the API gave, or the range's end) */
  to: string;
  /** page of that request: 1 unless whole pages share the instant `to` */
  page: number;
  /** ids already written whose created_at is exactly `to` */
  seen: string[];
}

interface ExportState {
  version: 1;
  options: {
    api_url: string;
    organization_id: string;
    from: string | null;
    to: string | null;
    format: ExportFormat;
    filters: ExportOptions['filters'];
    page_size: number;
  };
  /** the range's end as first asked (`to`, or the start time) */
  range_to: string;
  cursor: Cursor | null;
  /** length of the output file up to the last complete page */
  bytes: number;
  calls: number;
  done: boolean;
}

interface CallItem {
  call_id: string;
  created_at: string;
  [k: string]: unknown;
}

/** The CSV columns, in order (docs/cli.md "callcap export"). */
export const CSV_COLUMNS: readonly [string, (c: CallItem) => unknown][] = [
  ['call_id', (c) => c.call_id],
  ['created_at', (c) => c.created_at],
  ['direction', (c) => c.direction],
  ['caller_phone', (c) => c.caller_phone],
  ['customer_phone_e164', (c) => c.customer_phone_e164],
  ['customer_phone_national', (c) => c.customer_phone_national],
  ['company_phone_e164', (c) => c.company_phone_e164],
  ['caller_name', (c) => c.caller_name],
  ['duration', (c) => c.duration],
  ['crm_status', (c) => c.crm_status],
  ['review_status', (c) => c.review_status],
  ['outbound_lifecycle', (c) => c.outbound_lifecycle],
  ['app_url', (c) => c.app_url],
  ['analysis_caller_name', (c) => tp(c)?.caller_name],
  ['summary', (c) => tp(c)?.summary],
  ['service_needed', (c) => tp(c)?.service_needed],
  ['followup_email_subject', (c) => followup(c)?.subject],
  ['followup_email_body', (c) => followup(c)?.body],
  ['followup_email_language', (c) => followup(c)?.language],
];

const tp = (c: CallItem) => c.transcript_processed as Record<string, unknown> | null | undefined;
const followup = (c: CallItem) => tp(c)?.followup_email as Record<string, unknown> | null | undefined;

/** One RFC 4180 field: quoted when it holds a comma, quote, CR or LF; null and undefined are empty. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const CRLF = '\r\n';
export const csvHeader = (): string => CSV_COLUMNS.map(([name]) => name).join(',') + CRLF;
export const csvRow = (c: CallItem): string =>
  CSV_COLUMNS.map(([, get]) => csvField(get(c))).join(',') + CRLF;
export const jsonLine = (c: CallItem): string => `${JSON.stringify(c)}\n`;

/**
 * The instant a dateFrom/dateTo value stands for, read by the API's own parser (domain/date-param.ts:
 * a date is a whole UTC day; a date-time needs a zone; 2026-02-31 is no date), so the CLI refuses
 * what the API would refuse before it asks.
 */
export function boundMs(value: string, end: boolean): number | null {
  const b = parseDateParam(value);
  if (!b) return null;
  return (end ? boundEnd(b) : boundStart(b)).getTime();
}

const statePath = (output: string) => `${output}.export-state.json`;

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

async function readState(path: string): Promise<ExportState | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const s = JSON.parse(text) as ExportState;
    if (s.version !== 1) throw new Error(`version ${s.version}`);
    return s;
  } catch (err) {
    throw new CliError(
      `the state file ${path} is unreadable (${(err as Error).message}); give --restart to start the export again.`,
      2,
    );
  }
}

/** Written next to the output and renamed over the old one: a crash leaves the old or the new state. */
async function saveState(path: string, s: ExportState): Promise<void> {
  await writeFile(`${path}.tmp`, JSON.stringify(s));
  await rename(`${path}.tmp`, path);
}

/** The writer of the output: a file synced after every page, or stdout. */
interface Sink {
  write(text: string): Promise<void>;
  close(): Promise<void>;
}

async function fileSink(path: string, truncateTo: number | null): Promise<Sink> {
  const fh = await open(path, truncateTo === null ? 'w' : 'r+');
  if (truncateTo !== null) await fh.truncate(truncateTo);
  let position = truncateTo ?? 0;
  return {
    async write(text) {
      const buf = Buffer.from(text, 'utf8');
      await fh.write(buf, 0, buf.length, position);
      position += buf.length;
      await fh.sync();
    },
    close: () => fh.close(),
  };
}

const stdoutSink = (io: CliIo): Sink => ({
  write: async (text) => io.stdout(text),
  close: async () => {},
});

function sameOptions(a: ExportState['options'], b: ExportState['options']): string[] {
  const diff: string[] = [];
  for (const k of Object.keys(b) as (keyof ExportState['options'])[]) {
    if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) diff.push(k);
  }
  return diff;
}

export async function runExport(o: ExportOptions): Promise<ExportSummary> {
  const stats = { requests: 0, rateLimited: 0 };
  const fromMs = o.from === null ? null : boundMs(o.from, false);
  const toGivenMs = o.to === null ? null : boundMs(o.to, true);
  if (o.from !== null && fromMs === null)
    throw new CliError(`--from "${o.from}" is not a date or ISO 8601 date-time.`, 2, true);
  if (o.to !== null && toGivenMs === null)
    throw new CliError(`--to "${o.to}" is not a date or ISO 8601 date-time.`, 2, true);
  if (fromMs !== null && toGivenMs !== null && fromMs > toGivenMs)
    throw new CliError(`--from (${o.from}) is after --to (${o.to}).`, 2, true);

  const toStdout = o.output === '-';
  const stateFile = statePath(o.output);
  let state = toStdout ? null : await readState(stateFile);
  if (!toStdout && o.restart) {
    state = null;
    await rm(stateFile, { force: true });
  } else if (!toStdout && !state && (await exists(o.output))) {
    throw new CliError(
      `${o.output} exists and is not a partial export (no ${stateFile}); choose another --output, or give --restart to overwrite it.`,
      2,
    );
  }

  let progress: Progress | null = null;
  const note = (m: string) => (progress ? progress.note(m) : o.io.stderr(`export: ${m}\n`));
  const rest: RestOptions = { note, signal: o.signal, backoffMs: o.backoffMs };

  // GET /me: the key works, may read calls, and (on resume) belongs to the organization the export began with.
  const me = await restGet(o.target, '/me', rest, stats);
  const identity = (me.body as { data?: { organization_id?: string; scopes?: string[] } } | null)?.data;
  if (!identity?.organization_id)
    throw new CliError('GET /me gave no organization_id: is CALLCAP_API_URL the /api/v1 address?');
  if (!identity.scopes?.includes('read.calls')) {
    throw new CliError(
      `this API key lacks the scope read.calls (it has: ${identity.scopes?.join(', ') || 'none'}).`,
    );
  }
  const options: ExportState['options'] = {
    api_url: o.target.base,
    organization_id: identity.organization_id,
    from: o.from,
    to: o.to,
    format: o.format,
    filters: o.filters,
    page_size: o.pageSize,
  };
  const resumed = state !== null && !state.done;
  if (state) {
    const diff = sameOptions(state.options, options);
    if (diff.length) {
      throw new CliError(
        `${stateFile} belongs to an export with other options (${diff.join(', ')} differ); repeat that export's options to resume it, or give --restart.`,
        2,
      );
    }
  }
  if (!state) {
    // The range's end is pinned when the export begins: calls that arrive meanwhile are not chased.
    const serverNow = Date.parse(me.headers.get('date') ?? '');
    const rangeTo = o.to ?? new Date((Number.isNaN(serverNow) ? Date.now() : serverNow) + 999).toISOString();
    state = { version: 1, options, range_to: rangeTo, cursor: null, bytes: 0, calls: 0, done: false };
  }
  const header = o.format === 'csv' ? csvHeader() : '';
  const sink = toStdout
    ? stdoutSink(o.io)
    : await fileSink(o.output, resumed ? await checkedLength(o.output, state.bytes) : null);
  progress = new Progress(o.io, { fromMs, toMs: boundMs(state.range_to, true) ?? Date.now() });
  try {
    if (!resumed) {
      if (header) await sink.write(header);
      state.bytes = Buffer.byteLength(header);
      if (!toStdout) await saveState(stateFile, state);
    } else {
      note(`resuming after ${state.calls} calls (${stateFile})`);
    }
    const cursorMs = () => (state.cursor ? Date.parse(state.cursor.to) : null);
    progress.start(state.calls, cursorMs());
    let pause = 0;
    for (;;) {
      if (o.signal.aborted) throw new Interrupted();
      if (pause > 0) await sleep(pause, o.signal);
      const c = state.cursor;
      const q = new URLSearchParams({ limit: String(o.pageSize), page: String(c?.page ?? 1) });
      if (o.from !== null) q.set('dateFrom', o.from);
      q.set('dateTo', c?.to ?? state.range_to);
      for (const [k, v] of Object.entries(o.filters)) if (v !== undefined) q.set(k, v);
      const res = await restGet(o.target, `/calls?${q}`, rest, stats);
      const data = (res.body as { data?: { items?: CallItem[]; has_more?: boolean } } | null)?.data;
      if (!data || !Array.isArray(data.items)) throw new CliError('GET /calls answered without data.items.');
      const items = data.items;
      const seen = new Set(c?.seen ?? []);
      const fresh = items.filter((i) => !seen.has(i.call_id));
      const text = fresh.map(o.format === 'csv' ? csvRow : jsonLine).join('');
      if (text) await sink.write(text);
      state.bytes += Buffer.byteLength(text);
      state.calls += fresh.length;
      const last = items.at(-1);
      if (!data.has_more || !last) {
        state.done = true;
        break;
      }
      const lastMs = Date.parse(last.created_at);
      if (c && lastMs === Date.parse(c.to)) {
        // The whole page shares the cursor's instant: the next one is the following page of it.
        state.cursor = { to: c.to, page: c.page + 1, seen: [...c.seen, ...fresh.map((i) => i.call_id)] };
      } else {
        state.cursor = {
          to: last.created_at,
          page: 1,
          seen: items.filter((i) => Date.parse(i.created_at) === lastMs).map((i) => i.call_id),
        };
      }
      if (!toStdout) await saveState(stateFile, state);
      progress.update(state.calls, cursorMs());
      const wait = waitAfter(res.headers);
      pause = wait.ms;
      if (wait.ms > 0) note(`rate limit reached (X-RateLimit-Remaining: 0): waiting until ${wait.reset}`);
    }
    progress.update(state.calls, null, true);
    progress.end();
    await sink.close();
    if (!toStdout) await rm(stateFile, { force: true });
  } catch (err) {
    progress.end();
    await sink.close();
    throw err;
  }
  return {
    output: o.output,
    format: o.format,
    calls: state.calls,
    from: o.from,
    to: state.range_to,
    resumed,
    requests: stats.requests,
    rate_limited: stats.rateLimited,
    bytes: state.bytes,
  };
}

/** The partial file must hold at least what the state file says was written. */
async function checkedLength(path: string, bytes: number): Promise<number> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new CliError(`${path} is gone but its export state is there; give --restart to start again.`, 2);
  }
  if (size < bytes) {
    throw new CliError(
      `${path} is shorter (${size} bytes) than its export state records (${bytes}); give --restart to start again.`,
      2,
    );
  }
  return bytes;
}
