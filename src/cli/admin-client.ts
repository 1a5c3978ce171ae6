import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the operator API is and how to authenticate to it, read from the environment. */
export interface AdminTarget {
  base: string;
  token: string;
}

/**
 * A failure the CLI reports on stderr with its exit code (1: the request failed, 2: wrong usage or
 * missing configuration); showUsage adds the command's usage line.
 */
export class CliError extends Error {
  readonly exitCode: number;
  readonly showUsage: boolean;
  constructor(message: string, exitCode = 1, showUsage = false) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.showUsage = showUsage;
  }
}

/** A wildcard bind address is reached through loopback; IPv6 literals need brackets in a URL. */
function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * Base: CALLCAP_ADMIN_URL, else http://ADMIN_HOST:ADMIN_PORT (defaults as `callcap serve`).
 * Token: ADMIN_TOKEN, else the file DATA_DIR/admin-token that the first `callcap serve` wrote.
 */
export async function resolveAdminTarget(env: Record<string, string | undefined>): Promise<AdminTarget> {
  const base = (
    env.CALLCAP_ADMIN_URL || `http://${hostForUrl(env.ADMIN_HOST ?? '127.0.0.1')}:${env.ADMIN_PORT || '3001'}`
  )
    .replace(/\/+$/, '')
    .replace(/\/admin\/v1$/, '');
  if (env.ADMIN_TOKEN) return { base, token: env.ADMIN_TOKEN };
  const file = join(env.DATA_DIR || './data', 'admin-token');
  try {
    const token = (await readFile(file, 'utf8')).trim();
    if (token) return { base, token };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new CliError(`cannot read the operator token from ${file}: ${(err as Error).message}`);
    }
  }
  throw new CliError(
    `no operator token: set ADMIN_TOKEN, or set DATA_DIR to the directory whose admin-token file ` +
      `"callcap serve" wrote on first start (looked for ${file}).`,
    2,
  );
}

export interface AdminRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  json?: unknown;
  body?: { bytes: Uint8Array; contentType: string };
}

/**
 * Calls the operator API. Answers the parsed JSON body (null for 204). A non-2xx answer becomes a
 * CliError carrying the API's own code and message, which tell how to fix the request.
 */
export async function adminRequest(target: AdminTarget, r: AdminRequest): Promise<unknown> {
  const headers: Record<string, string> = { authorization: `Bearer ${target.token}` };
  let body: string | Uint8Array | undefined;
  if (r.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(r.json);
  } else if (r.body) {
    headers['content-type'] = r.body.contentType;
    body = r.body.bytes;
  }
  const url = `${target.base}/admin/v1${r.path}`;
  let res: Response;
  try {
    // The cast: with preact's JSX types (the web app) TypeScript also loads lib.dom, whose BodyInit
    // wants Uint8Array<ArrayBuffer>; Node's fetch takes any Uint8Array.
    res = await fetch(url, { method: r.method, headers, body: body as RequestInit['body'] });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(
      `cannot reach the operator API at ${target.base} (${cause?.code ?? cause?.message ?? (err as Error).message}). ` +
        'Is "callcap serve" running? Set CALLCAP_ADMIN_URL or ADMIN_HOST/ADMIN_PORT to where it listens.',
    );
  }
  const text = await res.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (!res.ok) {
    const e = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    throw new CliError(
      e?.code
        ? `${res.status} ${e.code}: ${e.message}`
        : `${res.status} ${res.statusText} from ${r.method} ${url}`,
    );
  }
  return parsed;
}
