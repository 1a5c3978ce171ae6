import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../clock.ts';
import { exchange, fetchFailed, type RequestBody } from '../http-client.ts';

export { Multipart } from '../http-client.ts';

import { ProviderError } from './types.ts';

/**
 * One HTTP exchange with a provider, classified for the job runner (types.ts ProviderError):
 * time-out and connection errors, 429 and 5xx are `retryable` (with Retry-After honoured), any other
 * 4xx is `fatal` with the provider's own message kept (trimmed, the key never in it), and an answer
 * that is not JSON is `fatal`.
 *
 * The answer is read as a stream, never more than a limit: a 2xx body longer than `maxAnswerBytes`
 * (PROVIDER_MAX_ANSWER_BYTES) is `answer_too_large` — the connection is closed at the limit, so a
 * provider (or a wrong base URL) answering gigabytes costs at most the limit in memory and traffic.
 * An error answer (4xx, 5xx) is read up to ERROR_BODY_MAX only: its message is cut short anyway.
 */

export interface ProviderHttp {
  provider: string;
  timeoutMs: number;
  clock: Clock;
  /** secrets that must never appear in a message we keep (the API key) */
  secrets: string[];
  /** most bytes of a successful answer read (PROVIDER_MAX_ANSWER_BYTES); default DEFAULT_MAX_ANSWER_BYTES */
  maxAnswerBytes?: number;
}

/**
 * The default PROVIDER_MAX_ANSWER_BYTES, 32 MiB: a four-hour dual-channel call's Deepgram answer
 * (utterances and words of both channels) is around 20 MB; an analysis answer a few kilobytes.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Most bytes of an error answer read: the message kept is MESSAGE_MAX characters at most. */
const ERROR_BODY_MAX = 64 * 1024;
/** Longest provider message kept on an error (the operator reads it; a whole HTML page is noise). */
const MESSAGE_MAX = 500;
/** Longest Retry-After we take from a provider; beyond it the runner's own backoff rules. */
const RETRY_AFTER_MAX_MS = 6 * 60 * 60 * 1000;

export async function postJson(
  h: ProviderHttp,
  url: string,
  init: { headers: Record<string, string>; body: RequestBody; signal?: AbortSignal },
): Promise<unknown> {
  const timeout = AbortSignal.timeout(h.timeoutMs);
  // aborted by us when an answer passes its limit: the connection is closed, nothing more is read
  const cut = new AbortController();
  const signal = AbortSignal.any(init.signal ? [init.signal, timeout, cut.signal] : [timeout, cut.signal]);
  let res: IncomingMessage;
  try {
    res = await exchange(new URL(url), 'POST', init.headers, init.body, signal);
  } catch (err) {
    throw networkError(h, err, timeout, init.signal);
  }
  const status = res.statusCode!;
  const failed = status >= 400;
  const maxAnswerBytes = h.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const limit = failed ? Math.min(ERROR_BODY_MAX, maxAnswerBytes) : maxAnswerBytes;
  const answerTooLarge = () => {
    cut.abort();
    return new ProviderError(
      h.provider,
      'answer_too_large',
      `${h.provider} answered ${status} with a body over ${maxAnswerBytes} bytes, the most this service reads (PROVIDER_MAX_ANSWER_BYTES); the answer was dropped`,
      { status },
    );
  };
  const declared = Number(res.headers['content-length'] ?? Number.NaN);
  if (!failed && declared > limit) throw answerTooLarge();
  let text: string;
  try {
    const read = await readAtMost(res, limit);
    // an error answer is only read for its message: the part within the limit is enough
    if (read.over && !failed) throw answerTooLarge();
    if (read.over) cut.abort();
    text = read.text;
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw networkError(h, err, timeout, init.signal);
  }
  const statusText = res.statusMessage ?? '';
  if (status === 429 || status >= 500) {
    throw new ProviderError(
      h.provider,
      'retryable',
      `${h.provider} answered ${status}: ${providerMessage(h, text) || statusText}`,
      { status, retryAfterMs: parseRetryAfter(headerOf(res, 'retry-after'), h.clock.now()) },
    );
  }
  if (status >= 400) {
    throw new ProviderError(
      h.provider,
      'fatal',
      `${h.provider} answered ${status}: ${providerMessage(h, text) || statusText}`,
      { status },
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ProviderError(
      h.provider,
      'fatal',
      `${h.provider} answered ${status} with a body that is not JSON`,
      {
        status,
        cause: err,
      },
    );
  }
}

/** A response header as fetch's Headers.get reads it: repeated ones joined with ", ". */
function headerOf(res: IncomingMessage, name: string): string | null {
  const v = res.headers[name];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/**
 * The body as text, read chunk by chunk up to `limit` bytes; `over` when there was more (the rest is
 * not read: the caller closes the connection). Never holds more than limit + one chunk.
 */
async function readAtMost(res: IncomingMessage, limit: number): Promise<{ text: string; over: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const value of res as AsyncIterable<Buffer>) {
    if (total + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - total));
      res.destroy();
      return { text: Buffer.concat(chunks).toString('utf8'), over: true };
    }
    total += value.byteLength;
    chunks.push(value);
  }
  // a body that ended early (the connection lost before its Content-Length) is an error, as in fetch
  if (!res.complete) throw fetchFailed(new Error('terminated'));
  return { text: Buffer.concat(chunks).toString('utf8'), over: false };
}

function networkError(
  h: ProviderHttp,
  err: unknown,
  timeout: AbortSignal,
  caller?: AbortSignal,
): ProviderError {
  if (caller?.aborted)
    return new ProviderError(h.provider, 'retryable', `${h.provider} request was cancelled`, { cause: err });
  if (timeout.aborted)
    return new ProviderError(
      h.provider,
      'retryable',
      `${h.provider} did not answer within ${h.timeoutMs} ms`,
      {
        cause: err,
      },
    );
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  const code = e?.cause?.code ?? e?.code;
  return new ProviderError(
    h.provider,
    'retryable',
    `${h.provider} could not be reached${code ? ` (${code})` : ''}`,
    { cause: err },
  );
}

/**
 * The human part of a provider's error body: OpenAI-style `{error:{message}}`, Deepgram's
 * `{err_msg}` / `{message}`, a `detail` (FastAPI servers such as speaches), or the text itself —
 * trimmed, single-spaced, at most MESSAGE_MAX characters, with any secret replaced.
 */
export function providerMessage(h: Pick<ProviderHttp, 'secrets'>, body: string): string {
  let msg = body;
  try {
    const j = JSON.parse(body) as Record<string, unknown>;
    const e = j.error as Record<string, unknown> | string | undefined;
    const picked =
      (typeof e === 'object' && e !== null && typeof e.message === 'string' && e.message) ||
      (typeof e === 'string' && e) ||
      (typeof j.err_msg === 'string' && j.err_msg) ||
      (typeof j.message === 'string' && j.message) ||
      (typeof j.detail === 'string' && j.detail) ||
      null;
    if (picked) msg = picked;
  } catch {
    // not JSON: keep the text
  }
  for (const s of h.secrets) if (s) msg = msg.split(s).join('[redacted]');
  msg = msg.replace(/\s+/g, ' ').trim();
  return msg.length > MESSAGE_MAX ? `${msg.slice(0, MESSAGE_MAX - 1)}…` : msg;
}

/**
 * Retry-After as milliseconds from now: delta-seconds ("120") or an HTTP date; undefined when absent
 * or unreadable; a date in the past is 0; capped at RETRY_AFTER_MAX_MS.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    // an HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"); a bare "-1" would parse as a year
    const at = /[a-z]/i.test(v) ? Date.parse(v) : Number.NaN;
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now.getTime());
  }
  return Math.min(ms, RETRY_AFTER_MAX_MS);
}

/** The audio exceeds the provider's upload limit: refused, never cut. */
export function tooLarge(provider: string, bytes: number, limit: number): ProviderError {
  return new ProviderError(
    provider,
    'too_large',
    `the recording is ${bytes} bytes; ${provider} accepts at most ${limit} bytes (${(limit / 1024 / 1024).toFixed(0)} MB) per upload`,
  );
}
