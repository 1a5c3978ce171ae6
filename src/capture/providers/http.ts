import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../../clock.ts';
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

/**
 * A multipart/form-data body (what the openai protocol's /audio/transcriptions takes): text fields
 * and files, a file's bytes in memory or read from its path as they are sent. Encoded as undici's
 * FormData is (CRLF lines, names and filenames with CR, LF and `"` percent-escaped) and sent with
 * its Content-Length.
 */
export class Multipart {
  readonly boundary = `----callcap-form-${randomBytes(16).toString('hex')}`;
  private readonly pieces: (Buffer | { path: string })[] = [];
  private bytes = 0;
  private readonly files: string[] = [];

  field(name: string, value: string): this {
    const v = value.replace(/\r(?!\n)|(?<!\r)\n/g, '\r\n');
    return this.add(
      Buffer.from(
        `--${this.boundary}\r\nContent-Disposition: form-data; name="${escapeName(name)}"\r\n\r\n${v}\r\n`,
      ),
    );
  }

  /** `data`: the bytes, or a file's path (read when sent; its size taken by contentLength()) */
  file(name: string, data: Buffer | { path: string }, filename: string, type: string): this {
    this.add(
      Buffer.from(
        `--${this.boundary}\r\nContent-Disposition: form-data; name="${escapeName(name)}"; filename="${escapeName(filename)}"\r\nContent-Type: ${type}\r\n\r\n`,
      ),
    );
    if (Buffer.isBuffer(data)) this.add(data);
    else {
      this.pieces.push(data);
      this.files.push(data.path);
    }
    return this.add(Buffer.from('\r\n'));
  }

  get contentType(): string {
    return `multipart/form-data; boundary=${this.boundary}`;
  }

  /** The body's pieces (the closing boundary last) and its length, the files' sizes included. */
  async encoded(): Promise<{ pieces: (Buffer | { path: string })[]; length: number }> {
    let length = this.bytes;
    for (const f of this.files) length += (await stat(f)).size;
    const end = Buffer.from(`--${this.boundary}--\r\n`);
    return { pieces: [...this.pieces, end], length: length + end.length };
  }

  private add(b: Buffer): this {
    this.pieces.push(b);
    this.bytes += b.length;
    return this;
  }
}

const escapeName = (s: string) => s.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22');

/** A request body: text (sent as UTF-8), bytes, a stream (sent as it is read; not replayable), a multipart form. */
export type RequestBody = string | Buffer | Readable | Multipart;

/** fetch's redirect rules (WHATWG fetch, as undici follows them): at most 20, each status's method and body. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** dropped from a request that a redirect turns into a GET */
const BODY_HEADERS = [
  'content-encoding',
  'content-language',
  'content-location',
  'content-type',
  'content-length',
];
/** dropped from a request redirected to another origin */
const ORIGIN_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

/** An error of the exchange that is not an answer (fetch's "fetch failed"): its cause says what. */
const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });

/**
 * POSTs body to url on node:http(s) (keep-alive, the global agents) and answers the response head
 * once it arrives, following redirects as fetch does (docs/decisions.md "Provider requests on
 * node:http"). `signal` aborts the request and the response's body.
 */
async function exchange(
  url: URL,
  headers: Record<string, string>,
  body: RequestBody,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  let method = 'POST';
  let current: RequestBody | null = body;
  let hs: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) hs[k.toLowerCase()] = v;
  for (let redirects = 0; ; redirects++) {
    const res = await send(url, method, hs, current, signal);
    const location = res.headers.location;
    if (!REDIRECTS.has(res.statusCode ?? 0) || location === undefined) return res;
    res.resume(); // the redirect's own body is not read (the connection goes back to the pool)
    if (redirects === MAX_REDIRECTS) throw fetchFailed(new Error('redirect count exceeded'));
    let next: URL;
    try {
      next = new URL(location, url);
    } catch (err) {
      throw fetchFailed(err);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
      throw fetchFailed(new Error('URL scheme must be a HTTP(S) scheme'));
    const status = res.statusCode!;
    if (status !== 303 && current instanceof Readable)
      throw fetchFailed(new Error('Cannot follow redirect with a streamed request body'));
    if (((status === 301 || status === 302) && method === 'POST') || status === 303) {
      method = 'GET';
      current = null;
      hs = Object.fromEntries(Object.entries(hs).filter(([k]) => !BODY_HEADERS.includes(k)));
    }
    if (next.origin !== url.origin)
      hs = Object.fromEntries(Object.entries(hs).filter(([k]) => !ORIGIN_HEADERS.includes(k)));
    url = next;
  }
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: RequestBody | null,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const hs: Record<string, string> = { accept: '*/*', 'user-agent': 'node', ...headers };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let res: IncomingMessage | null = null;
    const abort = () => {
      const reason = signal.reason;
      req.destroy(reason);
      res?.destroy(reason);
      reject(reason);
    };
    const req = request(url, { method, headers: hs }, (r) => {
      res = r;
      // an error of the answer reaches its reader (readAtMost's iteration); unread (a redirect's), it is dropped
      r.on('error', () => {});
      r.once('close', () => signal.removeEventListener('abort', abort));
      resolve(r);
    });
    signal.addEventListener('abort', abort, { once: true });
    req.on('error', (err) => {
      if (!res) signal.removeEventListener('abort', abort);
      reject(signal.aborted ? signal.reason : fetchFailed(err));
    });
    const fail = (err: unknown) => req.destroy(err as Error);
    if (body === null) req.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      if (hs['content-type'] === undefined && typeof body === 'string')
        req.setHeader('content-type', 'text/plain;charset=UTF-8');
      req.setHeader('content-length', bytes.length);
      req.end(bytes);
    } else if (body instanceof Readable) {
      pipeline(body, req).catch(fail);
    } else {
      body
        .encoded()
        .then(({ pieces, length }) => {
          req.setHeader('content-type', body.contentType);
          req.setHeader('content-length', length);
          return writePieces(req, pieces);
        })
        .catch(fail);
    }
  });
}

/**
 * Writes a multipart body's pieces in order (a file's bytes as they are read), then ends the request.
 * A request closed meanwhile (an error, an abort, the server done with it) stops the writing and
 * closes the file.
 */
async function writePieces(req: ClientRequest, pieces: (Buffer | { path: string })[]): Promise<void> {
  const write = async (chunk: Buffer) => {
    if (req.destroyed) throw new Error('the request was closed');
    if (req.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        req.off('drain', done);
        req.off('close', done);
        resolve();
      };
      req.on('drain', done);
      req.on('close', done);
    });
  };
  for (const p of pieces) {
    if (Buffer.isBuffer(p)) await write(p);
    else for await (const chunk of createReadStream(p.path)) await write(chunk as Buffer);
  }
  if (!req.destroyed) req.end();
}

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
    res = await exchange(new URL(url), init.headers, init.body, signal);
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
