import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * The service's outgoing HTTP requests that fetch made before (docs/decisions.md "Provider requests
 * on node:http"): the providers' (./providers/http.ts postJson) and Twilio's recording DELETE
 * (./telephony/twilio/rest.ts), on node:http(s) with fetch's redirect rules and error shapes. The
 * recording download has its own client (src/recordings/pulled-get.ts).
 */

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
export const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });

/**
 * Sends a request (`body` null: none) on node:http(s) (keep-alive, the global agents) and answers the response head
 * once it arrives, following redirects as fetch does (docs/decisions.md "Provider requests on
 * node:http"). `signal` aborts the request and the response's body.
 */
export async function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: RequestBody | null,
  signal: AbortSignal,
): Promise<IncomingMessage> {
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
          // in order, a file's bytes as they are read; a request closed meanwhile (an error, an
          // abort, the server done with it) ends the pipeline, which closes the file
          return pipeline(async function* () {
            for (const p of pieces) {
              if (Buffer.isBuffer(p)) yield p;
              else yield* createReadStream(p.path);
            }
          }, req);
        })
        .catch(fail);
    }
  });
}
