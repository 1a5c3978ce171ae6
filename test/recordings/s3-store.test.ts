import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { type S3BlobStore, s3BlobStore } from '../../src/recordings/s3-store.ts';
import { blobStoreFromConfig } from '../../src/recordings/store-from-config.ts';
import { testDeps } from '../helpers/deps.ts';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders, bearer, pathOf } from '../helpers/http.ts';
import { mp3Frames } from '../helpers/mp3.ts';
import { startS3, type TestS3 } from '../helpers/s3-server.ts';

let s3: TestS3;
let store: S3BlobStore;

before(async () => {
  s3 = await startS3();
  store = s3BlobStore({
    bucket: s3.bucket,
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
});
after(async () => {
  store.destroy();
  await s3.close();
});

/** Deterministic bytes, so any slice can be checked without keeping the whole thing around. */
const byteAt = (i: number) => (i * 31 + (i >> 13)) & 0xff;
function pattern(start: number, end: number): Buffer {
  const b = Buffer.alloc(end - start);
  for (let i = start; i < end; i++) b[i - start] = byteAt(i);
  return b;
}
/** A stream of n pattern bytes in 64 KiB chunks, generated as read (never held whole). */
function patternStream(n: number, failAt?: number): Readable {
  let at = 0;
  return new Readable({
    read() {
      if (failAt !== undefined && at >= failAt) {
        this.destroy(new Error('source broke'));
        return;
      }
      if (at >= n) {
        this.push(null);
        return;
      }
      const end = Math.min(n, at + 65536);
      this.push(pattern(at, end));
      at = end;
    },
  });
}
async function collect(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

test('put streams a multipart upload; size, whole and ranged reads return the exact bytes', async () => {
  const n = 12 * 1024 * 1024 + 12345; // three parts of 5 MiB
  const { bytes } = await store.put('recordings/o/c/a.mp3', patternStream(n));
  assert.equal(bytes, n);
  assert.equal(await store.size('recordings/o/c/a.mp3'), n);
  const whole = await collect(store.read('recordings/o/c/a.mp3'));
  assert.equal(whole.length, n);
  assert.ok(whole.equals(pattern(0, n)));
  const slice = await collect(
    store.read('recordings/o/c/a.mp3', { start: 5 * 1024 * 1024 - 10, end: 5 * 1024 * 1024 + 9 }),
  );
  assert.ok(slice.equals(pattern(5 * 1024 * 1024 - 10, 5 * 1024 * 1024 + 10)));
  const tail = await collect(store.read('recordings/o/c/a.mp3', { start: n - 1, end: n - 1 }));
  assert.deepEqual([...tail], [byteAt(n - 1)]);
});

test('a missing key has size null; delete removes an object and is harmless twice', async () => {
  assert.equal(await store.size('recordings/o/c/missing.mp3'), null);
  await store.put('recordings/o/c/d.mp3', Readable.from([Buffer.from('abc')]));
  assert.equal(await store.size('recordings/o/c/d.mp3'), 3);
  await store.delete('recordings/o/c/d.mp3');
  assert.equal(await store.size('recordings/o/c/d.mp3'), null);
  await store.delete('recordings/o/c/d.mp3');
});

test('reading a missing object fails the stream (the caller answers; nothing hangs)', async () => {
  await assert.rejects(text(store.read('recordings/o/c/never.mp3')), (err: Error) => {
    assert.match(err.name, /NoSuchKey|NotFound/);
    return true;
  });
});

test('a source that breaks mid-upload rejects put and leaves no object behind', async () => {
  await assert.rejects(
    store.put('recordings/o/c/broken.mp3', patternStream(11 * 1024 * 1024, 7 * 1024 * 1024)),
    /source broke/,
  );
  assert.equal(await store.size('recordings/o/c/broken.mp3'), null);
});

test('keys outside the recordings alphabet are refused before any request', async () => {
  await assert.rejects(store.put('../etc/passwd', Readable.from([Buffer.from('x')])), /invalid blob key/);
  assert.throws(() => store.read('a b'), /invalid blob key/);
});

test('a 64 MiB upload holds no more than a few parts in memory', async () => {
  // A counting proxy in front of the S3 server: the bytes the store has pulled from its source but
  // not yet sent on are what it holds in memory. (Heap sampling would also count the S3 server,
  // which runs in this process.)
  let forwarded = 0;
  const target = new URL(s3.endpoint);
  const proxy = createServer((req, res) => {
    const up = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    req.on('data', (c: Buffer) => {
      forwarded += c.length;
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const viaProxy = s3BlobStore({
    bucket: s3.bucket,
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  const n = 64 * 1024 * 1024;
  let produced = 0;
  let peak = 0;
  const source = patternStream(n);
  source.on('data', (c: Buffer) => {
    produced += c.length;
    peak = Math.max(peak, produced - forwarded);
  });
  try {
    assert.equal((await viaProxy.put('recordings/o/c/big.mp3', source)).bytes, n);
  } finally {
    viaProxy.destroy();
    await new Promise<void>((r) => proxy.close(() => r()));
  }
  // Two 5 MiB parts in flight plus the one being filled; the whole 64 MiB would be far above.
  assert.ok(peak <= 16 * 1024 * 1024, `held up to ${Math.round(peak / 1048576)} MiB`);
  assert.equal(await store.size('recordings/o/c/big.mp3'), n);
});

test('settings: RECORDINGS_STORE=s3 needs S3_BUCKET; credentials come in pairs', () => {
  assert.throws(() => loadConfig({ RECORDINGS_STORE: 's3' }), /S3_BUCKET: required when RECORDINGS_STORE=s3/);
  assert.throws(
    () => loadConfig({ RECORDINGS_STORE: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k' }),
    /S3_ACCESS_KEY_ID \/ S3_SECRET_ACCESS_KEY: set both or neither/,
  );
  assert.throws(() => loadConfig({ RECORDINGS_STORE: 'disk' }), /RECORDINGS_STORE/);
  assert.equal(loadConfig({}).RECORDINGS_STORE, 'file');
});

test('two API nodes on one database and one bucket: ingested through one, downloaded through the other', async () => {
  const h: Harness = await createHarness(s3.env);
  let other: FastifyInstance | undefined;
  const otherDeps = testDeps(h.db, join(h.dataDir, 'node-b'), s3.env);
  try {
    other = await buildPublicApp(otherDeps);
    const org = await insertOrg(h.db);
    const { key } = await insertApiKey(h.db, {
      orgId: org.orgId,
      userId: org.ownerId,
      scopes: ['read.calls', 'read.recordings'],
    });
    const audio = mp3Frames(383);
    const callId = await insertCall(h.db, { orgId: org.orgId });
    const put = await h.operator.inject({
      method: 'PUT',
      url: `/admin/v1/calls/${callId}/recording`,
      headers: { ...adminHeaders, 'content-type': 'audio/mpeg' },
      payload: audio,
    });
    assert.equal(put.statusCode, 204);
    const row = (
      await h.db.query<{ duration: number; recording_key: string }>(
        'SELECT duration, recording_key FROM calls WHERE id = $1',
        [callId],
      )
    ).rows[0];
    assert.equal(row.duration, 10.005, 'the duration is measured from the object (no local file)');
    // Node A's disk has no copy: the bytes live only in the bucket.
    assert.deepEqual(await readdir(h.dataDir).then((d) => d.filter((x) => x === 'recordings')), []);

    const link = await other.inject({
      method: 'GET',
      url: `/api/v1/calls/${callId}/recording-url`,
      headers: bearer(key),
    });
    assert.equal(link.statusCode, 200);
    const url = pathOf(JSON.parse(link.body).data.url);
    const whole = await other.inject({ method: 'GET', url });
    assert.equal(whole.statusCode, 200);
    assert.ok(whole.rawPayload.equals(audio));
    const ranged = await other.inject({ method: 'GET', url, headers: { range: 'bytes=1000-1999' } });
    assert.equal(ranged.statusCode, 206);
    assert.equal(ranged.headers['content-range'], `bytes 1000-1999/${audio.length}`);
    assert.ok(ranged.rawPayload.equals(audio.subarray(1000, 2000)));

    const viaFactory = blobStoreFromConfig(otherDeps.config);
    assert.equal(await viaFactory.size(row.recording_key), audio.length);
  } finally {
    await other?.close();
    await h.close();
  }
});
