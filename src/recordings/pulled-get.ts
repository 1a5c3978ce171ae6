import { isIP, connect as netConnect, type Socket } from 'node:net';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';

/**
 * An HTTP/1.1 GET whose body is read into a few reused buffers (docs/decisions.md "Recording
 * download: a GET into reused buffers"): the recording download's client. fetch (undici), like
 * node:http, hands every socket read to JavaScript in a fresh 64 KiB ArrayBuffer that is garbage as
 * soon as it is written, and V8 collects such buffers by external-memory volume — ten downloads at
 * once kept 100–160 MB of them alive. Here the socket reads into one buffer per download (`onread`,
 * net and tls alike), each read is copied at once into a chunk buffer of a small per-download pool,
 * and the consumer gets those chunks one at a time: a chunk is valid until the consumer asks for the
 * next one, then goes back to the pool. The socket is paused while `QUEUED_CHUNKS` full chunks wait
 * for the consumer, so a slow store stops the download (the server's send buffer and TCP window
 * hold the rest) and memory per download is bounded: the read buffer, the head buffer and the
 * chunks (2 + QUEUED_CHUNKS in steady state).
 *
 * What it speaks: GET with the given headers and `Connection: close` (one request per connection,
 * no compression asked for), a 1xx head skipped, the body framed by Transfer-Encoding: chunked,
 * Content-Length or the end of the connection. A body that ends early (closed before its
 * Content-Length or its last chunk) is an error. No redirect is followed (the caller sees the 3xx).
 */

/** The bytes of a chunk handed to the consumer (the last may be shorter), and of the socket's read buffer. */
export const CHUNK_BYTES = 64 * 1024;
/** Full chunks that may wait for the consumer before the socket is paused. */
export const QUEUED_CHUNKS = 2;
/** A connection that neither connects, answers nor sends body bytes for this long fails (undici's body timeout). */
const IDLE_MS = 300_000;
/** The response's status line and headers together. */
const MAX_HEAD_BYTES = 32 * 1024;
/** A chunk-size line of Transfer-Encoding: chunked (hex size and extensions) or a trailer line. */
const MAX_LINE_BYTES = 4 * 1024;

export interface PulledResponse {
  status: number;
  /** lower-cased names; repeated headers joined with ", " */
  headers: Map<string, string>;
  /**
   * The body, chunk by chunk (each at most CHUNK_BYTES). A chunk is valid until the next one is
   * asked for (it is then refilled): copy what must outlive that. Read once. Leaving the loop early
   * closes the connection.
   */
  body: AsyncIterable<Buffer>;
  /** The body's first `max` bytes as UTF-8 (an error answer), then the connection is closed. */
  text(max: number): Promise<string>;
  /** Closes the connection (the body is not read). */
  close(): void;
}

export interface PulledGetOptions {
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** tls.connect options for tests (a CA of their own); the defaults verify the server as usual */
  tls?: { ca?: string | Buffer };
  /** chunk buffer size, for tests (CHUNK_BYTES) */
  chunkBytes?: number;
}

type Framing = { kind: 'length'; left: number } | { kind: 'chunked' } | { kind: 'eof' };

export function pulledGet(url: URL, opts: PulledGetOptions): Promise<PulledResponse> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new Error(`unsupported protocol ${url.protocol}`));
  }
  for (const [k, v] of Object.entries(opts.headers)) {
    if (/[\r\n:]/.test(k) || /[\r\n]/.test(v)) return Promise.reject(new Error('invalid request header'));
  }
  const requestHead = [
    `GET ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    ...Object.entries(opts.headers).map(([k, v]) => `${k}: ${v}`),
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  return new Promise<PulledResponse>((resolveHead, rejectHead) => {
    const chunkBytes = opts.chunkBytes ?? CHUNK_BYTES;
    const readBuffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let head: Buffer | null = Buffer.allocUnsafe(MAX_HEAD_BYTES);
    let headLength = 0;
    let framing: Framing | null = null;
    // Transfer-Encoding: chunked
    let chunkedState: 'size' | 'data' | 'data-end' | 'trailer' = 'size';
    let chunkLeft = 0;
    let line = '';
    // the consumer's side
    const free: Buffer[] = [];
    const ready: { buf: Buffer; n: number }[] = [];
    let filling: Buffer | null = null;
    let filled = 0;
    let ended = false;
    let failure: Error | null = null;
    let paused = false;
    let wake: (() => void) | null = null;
    let headDone = false;
    let bodyTaken = false;

    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const fail = (err: Error) => {
      if (failure || ended) return;
      failure = err;
      socket.destroy();
      if (!headDone) rejectHead(err);
      notify();
    };
    const finish = () => {
      if (ended || failure) return;
      if (filling && filled > 0) ready.push({ buf: filling, n: filled });
      filling = null;
      ended = true;
      socket.destroy();
      notify();
    };

    /** Copies body bytes into the chunk buffers; full chunks go to the consumer. */
    const emit = (src: Buffer, from: number, to: number) => {
      while (from < to) {
        if (!filling) {
          filling = free.pop() ?? Buffer.allocUnsafe(chunkBytes);
          filled = 0;
        }
        const n = src.copy(filling, filled, from, Math.min(to, from + chunkBytes - filled));
        filled += n;
        from += n;
        if (filled === chunkBytes) {
          ready.push({ buf: filling, n: filled });
          filling = null;
          notify();
        }
      }
    };

    /** Consumes src[from, to) as body bytes under the framing (finish() at its end). */
    const body = (src: Buffer, from: number, to: number): void => {
      const f = framing!;
      if (f.kind === 'eof') {
        emit(src, from, to);
        return;
      }
      if (f.kind === 'length') {
        const n = Math.min(f.left, to - from);
        emit(src, from, from + n);
        f.left -= n;
        if (f.left === 0) finish();
        return;
      }
      while (from < to && !ended && !failure) {
        if (chunkedState === 'data') {
          const n = Math.min(chunkLeft, to - from);
          emit(src, from, from + n);
          chunkLeft -= n;
          from += n;
          if (chunkLeft === 0) chunkedState = 'data-end';
          continue;
        }
        // a line: the chunk size, the CRLF after a chunk's data, or a trailer line
        const c = src[from++]!;
        if (c === 0x0a) {
          const l = line; // CRLF, or a bare LF
          line = '';
          if (chunkedState === 'data-end') {
            if (l !== '') {
              fail(new Error('malformed chunked body: no CRLF after a chunk'));
              return;
            }
            chunkedState = 'size';
          } else if (chunkedState === 'size') {
            const size = Number.parseInt(l.split(';')[0]!.trim(), 16);
            if (!/^[0-9a-fA-F]+$/.test(l.split(';')[0]!.trim()) || !Number.isSafeInteger(size)) {
              fail(new Error('malformed chunked body: bad chunk size'));
              return;
            }
            if (size === 0) chunkedState = 'trailer';
            else {
              chunkLeft = size;
              chunkedState = 'data';
            }
          } else if (l === '') {
            finish(); // the empty line after the trailers
          }
        } else if (c !== 0x0d) {
          if (line.length >= MAX_LINE_BYTES) {
            fail(new Error('malformed chunked body: line too long'));
            return;
          }
          line += String.fromCharCode(c);
        }
      }
    };

    /** Parses a complete head in head[0, end); answers false when it was a 1xx (another head follows). */
    const parseHead = (end: number): boolean => {
      const lines = head!.toString('latin1', 0, end).split('\r\n');
      const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
      if (!m) throw new Error('malformed HTTP answer: bad status line');
      const status = Number(m[1]);
      const headers = new Map<string, string>();
      for (const l of lines.slice(1)) {
        if (l === '') continue;
        const colon = l.indexOf(':');
        if (colon <= 0) throw new Error('malformed HTTP answer: bad header line');
        const name = l.slice(0, colon).trim().toLowerCase();
        const value = l.slice(colon + 1).trim();
        headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
      }
      if (status >= 100 && status < 200) return false;
      const te = headers.get('transfer-encoding');
      const cl = headers.get('content-length');
      if (te !== undefined) {
        if (te.toLowerCase() !== 'chunked') throw new Error(`unsupported Transfer-Encoding ${te}`);
        framing = { kind: 'chunked' };
      } else if (cl !== undefined) {
        if (!/^\d+$/.test(cl) || !Number.isSafeInteger(Number(cl)))
          throw new Error('malformed Content-Length');
        framing = { kind: 'length', left: Number(cl) };
      } else {
        framing = { kind: 'eof' };
      }
      headDone = true;
      resolveHead(response(status, headers));
      return true;
    };

    /** Copies the head's bytes into `head` until its end; the bytes after it go to body(). */
    const readHead = (buf: Buffer, nread: number) => {
      let at = 0;
      let searchFrom = Math.max(0, headLength - 3);
      while (head) {
        const end = head.subarray(0, headLength).indexOf('\r\n\r\n', searchFrom, 'latin1');
        if (end >= 0) {
          const rest = end + 4;
          if (!parseHead(end)) {
            // a 1xx: the next head starts after it
            head.copy(head, 0, rest, headLength);
            headLength -= rest;
            searchFrom = 0;
            continue;
          }
          const h = head;
          head = null;
          if (framing!.kind === 'length' && framing!.left === 0) return finish();
          body(h, rest, headLength);
          if (at < nread && !ended && !failure) body(buf, at, nread);
          return;
        }
        if (at === nread) return;
        const take = Math.min(nread - at, MAX_HEAD_BYTES - headLength);
        if (take === 0) throw new Error('the HTTP answer head is too large');
        searchFrom = Math.max(0, headLength - 3);
        buf.copy(head, headLength, at, at + take);
        headLength += take;
        at += take;
      }
    };

    const onRead = (nread: number, buf: Buffer): boolean => {
      if (failure || ended) return false;
      try {
        if (head) {
          readHead(buf, nread);
        } else {
          body(buf, 0, nread);
        }
      } catch (err) {
        fail(err as Error);
        return false;
      }
      if (ready.length >= QUEUED_CHUNKS && !ended && !failure) {
        paused = true;
        return false; // the socket is paused until the consumer takes a chunk
      }
      return true;
    };

    const onEnd = () => {
      if (ended || failure) return;
      if (!headDone) return fail(new Error('the connection closed before an HTTP answer'));
      if (framing!.kind === 'eof') return finish();
      fail(new Error('the connection closed before the body ended'));
    };

    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    const onread = { buffer: readBuffer, callback: onRead };
    // tls.connect takes net's onread too (not in its typings)
    const tlsOptions: ConnectionOptions & { onread: typeof onread } = {
      host,
      port,
      servername: isIP(host) ? undefined : host,
      ALPNProtocols: ['http/1.1'],
      onread,
      ...opts.tls,
    };
    const socket: Socket =
      url.protocol === 'https:' ? tlsConnect(tlsOptions) : netConnect({ host, port, onread });
    socket.on('error', (err) => fail(err));
    // nothing read or written for IDLE_MS while the consumer is not the one holding the socket back
    socket.setTimeout(IDLE_MS, () => {
      if (!paused) fail(new Error(`no data from the server for ${IDLE_MS / 1000} s`));
    });
    socket.on('end', onEnd);
    socket.on('close', onEnd);

    const abort = () => fail(abortReason(opts.signal!));
    if (opts.signal?.aborted) return abort();
    opts.signal?.addEventListener('abort', abort, { once: true });
    socket.once('close', () => opts.signal?.removeEventListener('abort', abort));

    socket.write(requestHead, 'latin1');

    /** The next full chunk (or the last, shorter one); null at the end of the body. */
    const next = async (): Promise<{ buf: Buffer; n: number } | null> => {
      while (ready.length === 0 && !ended && !failure) {
        await new Promise<void>((r) => {
          wake = r;
        });
      }
      if (failure) throw failure;
      const c = ready.shift() ?? null;
      if (paused && ready.length < QUEUED_CHUNKS && !failure && !ended) {
        paused = false;
        socket.resume();
      }
      return c;
    };

    async function* chunks(): AsyncGenerator<Buffer> {
      if (bodyTaken) throw new Error('the body was already read');
      bodyTaken = true;
      try {
        for (;;) {
          const c = await next();
          if (!c) return;
          try {
            yield c.n === c.buf.length ? c.buf : c.buf.subarray(0, c.n);
          } finally {
            free.push(c.buf);
          }
        }
      } finally {
        if (!ended && !failure) {
          ended = true;
          socket.destroy();
        }
      }
    }

    const response = (status: number, headers: Map<string, string>): PulledResponse => ({
      status,
      headers,
      body: { [Symbol.asyncIterator]: chunks },
      async text(max) {
        const parts: Buffer[] = [];
        let n = 0;
        for await (const c of chunks()) {
          parts.push(Buffer.from(c.subarray(0, Math.min(c.length, max - n))));
          n += parts.at(-1)!.length;
          if (n >= max) break;
        }
        return Buffer.concat(parts).toString('utf8');
      },
      close() {
        if (!ended && !failure) {
          ended = true;
          socket.destroy();
          notify();
        }
      },
    });
  });
}

function abortReason(signal: AbortSignal): Error {
  const r = signal.reason as unknown;
  return r instanceof Error ? r : new Error('the download was aborted');
}
