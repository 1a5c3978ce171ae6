/**
 * The recording download's GET (src/recordings/pulled-get.ts): the body arrives in a few reused
 * buffers, never more than CHUNK_BYTES per chunk, and the socket stops reading while the consumer
 * (the blob store's write) holds a chunk — the server is held back, not buffered. Framing
 * (Content-Length, chunked, end of connection, a 1xx first), an early end, an error answer, abort
 * and TLS, on loopback servers; and the file store, done with each reused chunk before it asks for
 * the next.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { cappedChunks, MAX_RECORDING_BYTES } from '../../src/recordings/measure.ts';
import { CHUNK_BYTES, pulledGet, QUEUED_CHUNKS } from '../../src/recordings/pulled-get.ts';
import { fileBlobStore } from '../../src/recordings/store.ts';

/** A self-signed certificate for localhost / 127.0.0.1 (P-256, valid until 2126): test only. */
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgGXWST5cvVw0eZzDp
cw+mT+IY0psrFpS3lPG562m/VtahRANCAAQSmRE6T8Mf1TMbMhTO1vYBczXLm+K0
F56aWaOQzhrQFWiER7KYQqymghnRGXQqg38TsRUIjS0VJHDFulbM5DKM
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUQGQFRtj9t9QQ+oqPbxQ+OKu4joIwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNzA0MjQ1MloYDzIxMjYxMTAz
MDQyNDUyWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQSmRE6T8Mf1TMbMhTO1vYBczXLm+K0F56aWaOQzhrQFWiER7KYQqym
ghnRGXQqg38TsRUIjS0VJHDFulbM5DKMo28wbTAdBgNVHQ4EFgQUaNeHhOn8Ece4
eQcDuWuCQTNs8lowHwYDVR0jBBgwFoAUaNeHhOn8Ece4eQcDuWuCQTNs8lowDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSQAwRgIhAP+l2hyvPrABo01jchBc4OzWANHRAs+lqkLa2BvCfB0kAiEA
3Uwg17gYMVte+F0owJsbABugF4i+SeXkYtZCDvvk9Rw=
-----END CERTIFICATE-----
`;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function withServer<T>(handler: Handler, fn: (url: string) => Promise<T>, tls = false): Promise<T> {
  const server = tls ? createHttpsServer({ key: TEST_KEY, cert: TEST_CERT }, handler) : createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    return await fn(`${tls ? 'https' : 'http'}://127.0.0.1:${port}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** A raw TCP server answering every connection with `answer` (bytes as given), then closing. */
async function withRawServer<T>(answer: (s: Socket) => void, fn: (url: string) => Promise<T>): Promise<T> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.once('data', () => answer(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    return await fn(`http://127.0.0.1:${port}`);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** Deterministic bytes: byte i is (i * 7 + i >> 11) & 255. */
function bytesOf(n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + (i >> 11)) & 255;
  return b;
}
const sha = (b: Buffer | Buffer[]) => {
  const h = createHash('sha256');
  for (const x of Array.isArray(b) ? b : [b]) h.update(x);
  return h.digest('hex');
};

/** Reads the whole body, copying each chunk (each is valid only until the next); the chunks' sizes and buffers too. */
async function readAll(body: AsyncIterable<Buffer>) {
  const copies: Buffer[] = [];
  const sizes: number[] = [];
  const buffers = new Set<ArrayBufferLike>();
  for await (const c of body) {
    copies.push(Buffer.from(c));
    sizes.push(c.length);
    buffers.add(c.buffer);
    await new Promise((r) => setImmediate(r)); // a consumer slower than loopback
  }
  return { bytes: Buffer.concat(copies), sizes, buffers };
}

test('a Content-Length body arrives whole in chunks of at most CHUNK_BYTES, from a handful of reused buffers', async () => {
  const data = bytesOf(8 * 1024 * 1024 + 123);
  await withServer(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(data.length) });
      res.end(data);
    },
    async (url) => {
      const res = await pulledGet(new URL(`${url}/r.mp3`), { headers: { accept: 'audio/mpeg' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'audio/mpeg');
      assert.equal(res.headers.get('content-length'), String(data.length));
      const { bytes, sizes, buffers } = await readAll(res.body);
      assert.equal(sha(bytes), sha(data));
      assert.ok(Math.max(...sizes) <= CHUNK_BYTES, `largest chunk ${Math.max(...sizes)}`);
      assert.ok(
        sizes.slice(0, -1).every((n) => n === CHUNK_BYTES),
        'every chunk but the last is full',
      );
      // 129 chunks went by; they came from at most the queued chunks + the one being filled + the
      // one the consumer holds + one read's spill: nothing is allocated per chunk
      assert.ok(buffers.size <= QUEUED_CHUNKS + 3, `${buffers.size} distinct chunk buffers`);
    },
  );
});

test('the socket stops reading while the consumer holds a chunk: the server is held back, then the rest arrives', async () => {
  const total = 256 * 1024 * 1024;
  let produced = 0;
  const piece = bytesOf(64 * 1024);
  await withServer(
    (_req, res) => {
      res.writeHead(200, { 'content-length': String(total) });
      // produced only as the socket drains (pipe's backpressure)
      Readable.from(
        (function* () {
          while (produced < total) {
            produced += piece.length;
            yield piece;
          }
        })(),
      ).pipe(res);
    },
    async (url) => {
      const res = await pulledGet(new URL(url), { headers: {} });
      const it = res.body[Symbol.asyncIterator]();
      const first = await it.next();
      assert.equal(first.done, false);
      // the consumer holds the first chunk (a store write pending): wait until the server stops producing
      let last = -1;
      while (produced !== last) {
        last = produced;
        await new Promise((r) => setTimeout(r, 100));
      }
      // what stopped it is the client: the chunks it keeps, the kernel's socket buffers and the
      // server's stream buffers — far below the body (without backpressure all 256 MB go at once)
      assert.ok(
        produced < 64 * 1024 * 1024,
        `the server produced ${produced} bytes while the consumer waited`,
      );
      let n = first.value!.length;
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        assert.ok(r.value.length <= CHUNK_BYTES);
        n += r.value.length;
      }
      assert.equal(n, total);
      assert.equal(produced, total);
    },
  );
});

test('a chunked body (chunk sizes across reads, extensions, trailers) arrives whole', async () => {
  const data = bytesOf(700_000);
  await withServer(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' }); // no length: Node sends it chunked
      let at = 0;
      const sizes = [1, 2, 100, 65_535, 65_536, 65_537, 3, 200_000];
      const step = () => {
        if (at >= data.length) return res.end();
        const n = sizes[at % sizes.length]!;
        res.write(data.subarray(at, at + n));
        at += n;
        setImmediate(step);
      };
      step();
    },
    async (url) => {
      const res = await pulledGet(new URL(url), { headers: {} });
      assert.equal(res.headers.get('transfer-encoding'), 'chunked');
      const { bytes, sizes } = await readAll(res.body);
      assert.equal(sha(bytes), sha(data));
      assert.ok(Math.max(...sizes) <= CHUNK_BYTES);
    },
  );
  await withRawServer(
    (s) =>
      s.end(
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
          '5;name=value\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: 1\r\n\r\n',
      ),
    async (url) => {
      const res = await pulledGet(new URL(url), { headers: {} });
      assert.equal((await readAll(res.body)).bytes.toString(), 'hello world');
    },
  );
});

test('a body without length ends with the connection; a 100 Continue head is skipped', async () => {
  await withRawServer(
    (s) =>
      s.end(
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\n\r\nID3 and the rest',
      ),
    async (url) => {
      const res = await pulledGet(new URL(url), { headers: {} });
      assert.equal(res.status, 200);
      assert.equal((await readAll(res.body)).bytes.toString(), 'ID3 and the rest');
    },
  );
});

test('a body that ends before its Content-Length (or its last chunk) is an error, not a short file', async () => {
  await withRawServer(
    (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nonly this'),
    async (url) => {
      const res = await pulledGet(new URL(url), { headers: {} });
      await assert.rejects(readAll(res.body), { message: 'the connection closed before the body ended' });
    },
  );
  await withRawServer(
    (s) => s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'),
    async (url) => {
      const res = await pulledGet(new URL(url), { headers: {} });
      await assert.rejects(readAll(res.body), { message: 'the connection closed before the body ended' });
    },
  );
  await withRawServer(
    (s) => s.end('not http at all\r\n\r\n'),
    async (url) => {
      await assert.rejects(pulledGet(new URL(url), { headers: {} }), {
        message: 'malformed HTTP answer: bad status line',
      });
    },
  );
});

test('an error answer is readable as text; the request carries the given headers and Connection: close', async () => {
  let seen: IncomingMessage['headers'] = {};
  await withServer(
    (req, res) => {
      seen = req.headers;
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 20404, message: 'not found' }));
    },
    async (url) => {
      const res = await pulledGet(new URL(`${url}/a/b.mp3?x=1`), {
        headers: { authorization: 'Basic abc', accept: 'audio/mpeg' },
      });
      assert.equal(res.status, 404);
      assert.deepEqual(JSON.parse(await res.text(4096)), { code: 20404, message: 'not found' });
    },
  );
  assert.equal(seen.authorization, 'Basic abc');
  assert.equal(seen.accept, 'audio/mpeg');
  assert.equal(seen.connection, 'close');
  await assert.rejects(pulledGet(new URL('http://127.0.0.1:1/'), { headers: { 'x-a': 'b\r\nx-b: c' } }), {
    message: 'invalid request header',
  });
});

test('an abort stops the download: before the head, and while the body is read', async () => {
  await withRawServer(
    () => {}, // never answers
    async (url) => {
      const ac = new AbortController();
      const p = pulledGet(new URL(url), { headers: {}, signal: ac.signal });
      setImmediate(() => ac.abort(new Error('lease lost')));
      await assert.rejects(p, { message: 'lease lost' });
    },
  );
  await withServer(
    (_req, res) => {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      res.write(bytesOf(1024 * 1024)); // and never more
    },
    async (url) => {
      const ac = new AbortController();
      const res = await pulledGet(new URL(url), { headers: {}, signal: ac.signal });
      const it = res.body[Symbol.asyncIterator]();
      await it.next();
      ac.abort(new Error('stopping'));
      await assert.rejects(
        (async () => {
          for (;;) if ((await it.next()).done) return;
        })(),
        { message: 'stopping' },
      );
    },
  );
});

test('over TLS, with the certificate checked', async () => {
  const data = bytesOf(3 * 1024 * 1024 + 5);
  await withServer(
    (_req, res) => {
      res.writeHead(200, { 'content-length': String(data.length) });
      res.end(data);
    },
    async (url) => {
      const res = await pulledGet(new URL(url), { headers: {}, tls: { ca: TEST_CERT } });
      const { bytes, sizes } = await readAll(res.body);
      assert.equal(sha(bytes), sha(data));
      assert.ok(Math.max(...sizes) <= CHUNK_BYTES);
      // an unknown certificate is refused
      await assert.rejects(pulledGet(new URL(url), { headers: {} }), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    },
    true,
  );
});

test('the file store writes each reused chunk before it asks for the next; the cap counts them as they pass', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pulled-get-'));
  try {
    const store = fileBlobStore(dir);
    const data = bytesOf(1_000_000);
    // one buffer refilled for every chunk, and overwritten with junk once the next is asked for
    const reused = Buffer.alloc(CHUNK_BYTES);
    async function* source() {
      for (let at = 0; at < data.length; at += CHUNK_BYTES) {
        const n = data.copy(reused, 0, at, at + CHUNK_BYTES);
        yield reused.subarray(0, n);
        reused.fill(0xee);
      }
    }
    const { bytes } = await store.put('recordings/a.mp3', cappedChunks(source(), MAX_RECORDING_BYTES));
    assert.equal(bytes, data.length);
    assert.equal(sha(await readFile(join(dir, 'recordings/a.mp3'))), sha(data));
    await assert.rejects(store.put('recordings/b.mp3', cappedChunks(source(), 500_000)), {
      code: 'PAYLOAD_TOO_LARGE',
    });
    assert.equal(await store.size('recordings/b.mp3'), null, 'nothing is left of a refused body');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
