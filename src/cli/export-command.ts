import { CliError } from './admin-client.ts';
import { type Command, EXIT, int, str, usageError } from './command.ts';
import { type ExportFormat, runExport } from './export.ts';
import { Interrupted } from './rest-client.ts';

/** The REST API base: CALLCAP_API_URL, else http://localhost:PORT/api/v1 (PORT as `callcap serve`). */
export function apiBase(env: Record<string, string | undefined>): string {
  const base = (env.CALLCAP_API_URL || `http://localhost:${env.PORT || '3000'}/api/v1`).replace(/\/+$/, '');
  return base.endsWith('/api/v1') ? base : `${base}/api/v1`;
}

export const EXPORT_COMMANDS: Command[] = [
  {
    words: ['export'],
    args: [],
    section: 'integrator',
    flags: {
      output: { hint: 'file|-', required: true, help: 'where the calls go; "-" is stdout (not resumable)' },
      from: { hint: 'date', help: 'earliest created_at, inclusive: YYYY-MM-DD (00:00Z) or ISO 8601' },
      to: {
        hint: 'date',
        help: 'latest created_at, inclusive: YYYY-MM-DD (the whole day) or ISO 8601; default: now',
      },
      format: {
        hint: 'jsonl|csv',
        help: 'JSON lines (each line a Call as the API gives it) or CSV (default jsonl)',
      },
      direction: { hint: 'inbound|outbound' },
      status: { hint: 'crm_status' },
      phone: { hint: 'phone', help: "only calls with this customer's number" },
      'page-size': { hint: '1-100', help: 'calls per request (default 100)' },
      restart: {
        hint: '',
        boolean: true,
        help: 'discard a partial export of --output (or the file) and start again',
      },
    },
    summary:
      'every call of a date range as JSON lines or CSV; resumable (run it again after an interruption)',
    details: [
      'Reads GET /calls with CALLCAP_API_KEY (scope read.calls), newest first, within the rate limit:',
      'a 429 waits as long as Retry-After says, and X-RateLimit-Remaining 0 waits for X-RateLimit-Reset.',
      'After every page the file is synced and <output>.export-state.json records how far it got; the',
      'same command run again continues there and the finished file is identical to an uninterrupted',
      'one. Progress goes to stderr (a bar on a terminal); a JSON summary to stdout when done.',
    ],
    run: async (c) => {
      const format = (str(c, 'format') ?? 'jsonl') as ExportFormat;
      if (format !== 'jsonl' && format !== 'csv')
        throw usageError(`--format must be jsonl or csv, not "${format}".`);
      const pageSize = int(c, 'page-size') ?? 100;
      if (pageSize < 1 || pageSize > 100) throw usageError(`--page-size must be 1 to 100, got ${pageSize}.`);
      const apiKey = c.io.env.CALLCAP_API_KEY;
      if (!apiKey) {
        throw new CliError(
          'no API key: set CALLCAP_API_KEY to a key with the scope read.calls (create one in the console or with "callcap key create").',
          2,
        );
      }
      const output = str(c, 'output') as string;
      const abort = new AbortController();
      const stop = () => abort.abort();
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      try {
        const summary = await runExport({
          target: { base: apiBase(c.io.env), apiKey },
          from: str(c, 'from') ?? null,
          to: str(c, 'to') ?? null,
          format,
          output,
          filters: Object.fromEntries(
            (['direction', 'status', 'phone'] as const).flatMap((k) => {
              const v = str(c, k);
              return v === undefined ? [] : [[k, v]];
            }),
          ),
          pageSize,
          restart: c.flags.restart === true,
          io: c.io,
          signal: abort.signal,
        });
        if (output !== '-') return summary;
        c.io.stderr(`export: done, ${JSON.stringify(summary)}\n`);
        return undefined;
      } catch (err) {
        if (err instanceof Interrupted) {
          throw new CliError(
            `interrupted; ${output === '-' ? 'stdout cannot be resumed' : 'run the same command again to resume'}.`,
            EXIT.INTERRUPTED,
          );
        }
        throw err;
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    },
  },
];
