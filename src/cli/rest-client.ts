import { CliError } from './admin-client.ts';

/**
 * The integrator side of the CLI: GET requests to the REST API (/api/v1) with an API key, within the
 * rate limit (spec "Limits"): a 429 waits as long as its Retry-After says and asks again; after an
 * answer with X-RateLimit-Remaining 0 the next request waits until X-RateLimit-Reset (read against
 * the answer's own Date header, so a skewed local clock does not matter); 5xx answers and network
 * failures are retried with backoff a few times. Every wait is announced through `note` and ends
 * early on `signal`.
 */

export interface RestTarget {
  /** base URL ending in /api/v1 */
  base: string;
  apiKey: string;
}

export interface RestOptions {
  note(message: string): void;
  signal: AbortSignal;
  /** ms to wait before retry n (0-based) of a 5xx answer or a network failure */
  backoffMs?: (attempt: number) => number;
  /** waits longer than this are not made: the export stops and can be resumed (default 2 h) */
  maxWaitMs?: number;
}

export interface RestAnswer {
  body: unknown;
  headers: Headers;
}

/** Retries of a 5xx answer or network failure before giving up (the export can be resumed). */
export const TRANSIENT_RETRIES = 5;
/** Consecutive 429 answers before giving up. */
export const RATE_LIMIT_RETRIES = 20;

const defaultBackoff = (attempt: number) => Math.min(30_000, 1000 * 2 ** attempt);

export class Interrupted extends Error {
  constructor() {
    super('interrupted');
    this.name = 'Interrupted';
  }
}

/** Sleeps ms, or throws Interrupted as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Interrupted());
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Interrupted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | null {
  const v = headers.get('retry-after');
  if (v === null) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The longest proactive wait: one rate-limit window (an hour). */
export const MAX_RESET_WAIT_MS = 3600_000;

/**
 * How long to wait before the next request after this answer: 0 unless X-RateLimit-Remaining is 0;
 * then until X-RateLimit-Reset, measured from the answer's Date header (the server's clock) when
 * there is one, plus a second for the Date header's whole-second precision.
 */
export function waitAfter(headers: Headers, localNow = Date.now()): { ms: number; reset: string | null } {
  const remaining = headers.get('x-ratelimit-remaining');
  const reset = headers.get('x-ratelimit-reset');
  if (remaining === null || Number(remaining) > 0 || reset === null) return { ms: 0, reset: null };
  const resetAt = Date.parse(reset);
  if (Number.isNaN(resetAt)) return { ms: 0, reset: null };
  const date = Date.parse(headers.get('date') ?? '');
  const now = Number.isNaN(date) ? localNow : date;
  const ms = resetAt - now;
  // Windows reset on the hour: a reset further away than that means the clocks disagree; then the
  // next request goes out and a 429's Retry-After (relative, so immune to clocks) decides.
  if (ms <= 0 || ms > MAX_RESET_WAIT_MS) return { ms: 0, reset };
  return { ms: ms + 1000, reset };
}

const seconds = (ms: number) => `${Math.ceil(ms / 1000)} s`;

/** One GET of the REST API, waiting and retrying as described above. */
export async function restGet(
  target: RestTarget,
  pathAndQuery: string,
  o: RestOptions,
  stats: { requests: number; rateLimited: number },
): Promise<RestAnswer> {
  const url = `${target.base}${pathAndQuery}`;
  const backoff = o.backoffMs ?? defaultBackoff;
  const maxWait = o.maxWaitMs ?? 2 * 3600_000;
  let transient = 0;
  let limited = 0;
  for (;;) {
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${target.apiKey}`, accept: 'application/json' },
        signal: o.signal,
      });
      text = await res.text();
    } catch (err) {
      if (o.signal.aborted) throw new Interrupted();
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err as Error).message;
      if (transient >= TRANSIENT_RETRIES) {
        throw new CliError(
          `cannot reach the REST API at ${target.base} (${why}). Is the service running? Set CALLCAP_API_URL to its /api/v1 address.`,
        );
      }
      const ms = backoff(transient++);
      o.note(`cannot reach ${target.base} (${why}); trying again in ${seconds(ms)}`);
      await sleep(ms, o.signal);
      continue;
    }
    stats.requests++;
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (res.ok) return { body, headers: res.headers };
    const e = (body as { error?: { code?: string; message?: string } } | null)?.error;
    const what = e?.code ? `${res.status} ${e.code}: ${e.message}` : `${res.status} ${res.statusText}`;
    if (res.status === 429) {
      stats.rateLimited++;
      if (++limited > RATE_LIMIT_RETRIES)
        throw new CliError(`${what} (still rate limited after ${limited - 1} waits)`);
      const ms = retryAfterMs(res.headers) ?? 60_000;
      if (ms > maxWait)
        throw new CliError(`${what}; Retry-After asks for ${seconds(ms)}, longer than this run waits`);
      o.note(`rate limited (429): waiting ${seconds(ms)} as Retry-After says`);
      await sleep(ms, o.signal);
      continue;
    }
    if (res.status >= 500 && transient < TRANSIENT_RETRIES) {
      const ms = retryAfterMs(res.headers) ?? backoff(transient);
      transient++;
      o.note(`${what}; trying again in ${seconds(ms)}`);
      await sleep(ms, o.signal);
      continue;
    }
    throw new CliError(what);
  }
}
