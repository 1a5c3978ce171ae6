import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { mintRecordingLink, REST_LINK_TTL_MS } from '../../src/recordings/links.ts';
import type { BlobStore } from '../../src/recordings/store.ts';
import { insertCallWithAudio, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders, errorOf, pathOf } from '../helpers/http.ts';
import { mp3Frames } from '../helpers/mp3.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';

let h: Harness;
let orgId: string;
const audio = mp3Frames(383); // 159 711 bytes, about ten seconds
const size = audio.length;

before(async () => {
  h = await createHarness();
  ({ orgId } = await insertOrg(h.db));
});
after(() => h.close());

async function linkedCall(bytes = audio) {
  const { callId, key } = await insertCallWithAudio(h.deps, orgId, bytes);
  return { callId, key, path: pathOf(mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS).url) };
}

/** Every GET answer is also checked against the OpenAPI document. */
async function get(url: string, headers: Record<string, string> = {}) {
  const res = await h.app.inject({ method: 'GET', url, headers });
  assertMatchesOpenApi('GET', '/calls/{id}/recording.mp3', res);
  return res;
}

test('a valid link downloads the exact bytes as audio/mpeg', async () => {
  const { callId, path } = await linkedCall();
  const res = await get(path);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.rawPayload, audio);
  assert.equal(res.headers['content-type'], 'audio/mpeg');
  assert.equal(res.headers['content-length'], String(size));
  assert.equal(res.headers['accept-ranges'], 'bytes');
  assert.equal(res.headers['cache-control'], 'private, no-store');
  assert.equal(res.headers['content-disposition'], `inline; filename="${callId}.mp3"`);
  assert.equal(res.headers['content-range'], undefined);
});

test('Range bytes=a-b answers 206 with exactly that slice', async () => {
  const { path } = await linkedCall();
  const res = await get(path, { range: 'bytes=100-1099' });
  assert.equal(res.statusCode, 206);
  assert.deepEqual(res.rawPayload, audio.subarray(100, 1100));
  assert.equal(res.headers['content-range'], `bytes 100-1099/${size}`);
  assert.equal(res.headers['content-length'], '1000');
  assert.equal(res.headers['content-type'], 'audio/mpeg');
  assert.equal(res.headers['cache-control'], 'private, no-store');
});

test('Range bytes=a- answers 206 from a to the end', async () => {
  const { path } = await linkedCall();
  const res = await get(path, { range: `bytes=${size - 417}-` });
  assert.equal(res.statusCode, 206);
  assert.deepEqual(res.rawPayload, audio.subarray(size - 417));
  assert.equal(res.headers['content-range'], `bytes ${size - 417}-${size - 1}/${size}`);
});

test('Range bytes=-n answers 206 with the last n bytes', async () => {
  const { path } = await linkedCall();
  const res = await get(path, { range: 'bytes=-500' });
  assert.equal(res.statusCode, 206);
  assert.deepEqual(res.rawPayload, audio.subarray(size - 500));
  assert.equal(res.headers['content-range'], `bytes ${size - 500}-${size - 1}/${size}`);
  assert.equal(res.headers['content-length'], '500');
});

test('a range ending beyond the file is clamped to its last byte', async () => {
  const { path } = await linkedCall();
  const res = await get(path, { range: `bytes=10-${size + 1000}` });
  assert.equal(res.statusCode, 206);
  assert.equal(res.headers['content-range'], `bytes 10-${size - 1}/${size}`);
  assert.deepEqual(res.rawPayload, audio.subarray(10));
});

test('a range starting beyond the file answers 416 with Content-Range bytes */size', async () => {
  const { path } = await linkedCall();
  const res = await get(path, { range: `bytes=${size}-` });
  assert.equal(res.statusCode, 416);
  assert.equal(res.headers['content-range'], `bytes */${size}`);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(res.headers['cache-control'], 'private, no-store');
  const body = res.json();
  assert.equal(body.success, false);
  assert.equal(body.error.code, 'RANGE_NOT_SATISFIABLE');
  assert.match(body.error.message, new RegExp(`file of ${size} bytes`));
});

test('Range bytes=-0 answers 416', async () => {
  const { path } = await linkedCall();
  const res = await get(path, { range: 'bytes=-0' });
  assert.equal(res.statusCode, 416);
  assert.equal(res.headers['content-range'], `bytes */${size}`);
});

test('several ranges are answered with the whole file and 200', async () => {
  const { path } = await linkedCall();
  const res = await get(path, { range: 'bytes=0-9,20-29' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.rawPayload, audio);
  assert.equal(res.headers['content-range'], undefined);
});

test('a malformed or foreign-unit Range is ignored and the whole file is sent', async () => {
  const { path } = await linkedCall();
  for (const range of ['bytes=9-3', 'bytes=abc', 'items=0-1', 'bytes=-']) {
    const res = await get(path, { range });
    assert.equal(res.statusCode, 200, range);
    assert.equal(res.rawPayload.length, size, range);
  }
});

test('HEAD answers the headers of the download without a body', async () => {
  const { path } = await linkedCall();
  const res = await h.app.inject({ method: 'HEAD', url: path });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-length'], String(size));
  assert.equal(res.headers['content-type'], 'audio/mpeg');
  assert.equal(res.headers['accept-ranges'], 'bytes');
  assert.equal(res.rawPayload.length, 0);
});

test('a call trashed after the link was minted answers 409 RECORDING_WITHHELD', async () => {
  const { callId, path } = await linkedCall();
  await h.db.query('UPDATE calls SET trashed_at = $2 WHERE id = $1', [callId, h.clock.now()]);
  const res = await get(path);
  assert.equal(res.statusCode, 409);
  assert.equal(errorOf(res).code, 'RECORDING_WITHHELD');
  assert.equal(res.headers['cache-control'], 'private, no-store');
  assert.notEqual(res.headers['content-type'], 'audio/mpeg');
});

test('a call scheduled for deletion after minting answers 409 RECORDING_WITHHELD', async () => {
  const { callId, path } = await linkedCall();
  await h.db.query('UPDATE calls SET deletion_scheduled_at = $2, pending_deletion_at = $2 WHERE id = $1', [
    callId,
    new Date('2026-07-15T00:00:00Z'),
  ]);
  const res = await get(path);
  assert.equal(res.statusCode, 409);
  assert.equal(errorOf(res).code, 'RECORDING_WITHHELD');
});

test('a call erased after minting answers 404 NOT_FOUND', async () => {
  const { callId, path } = await linkedCall();
  await h.db.query('UPDATE calls SET erased_at = $2 WHERE id = $1', [callId, h.clock.now()]);
  const res = await get(path);
  assert.equal(res.statusCode, 404);
  assert.equal(errorOf(res).code, 'NOT_FOUND');
});

test('a recording deleted after minting answers 410 RECORDING_DELETED', async () => {
  const { callId, path } = await linkedCall();
  const del = await h.operator.inject({
    method: 'POST',
    url: `/admin/v1/calls/${callId}/recording/delete`,
    headers: adminHeaders,
    payload: { deletion_kind: 'hard_deleted', reason: 'retention_expired' },
  });
  assert.equal(del.statusCode, 204);
  const res = await get(path);
  assert.equal(res.statusCode, 410);
  assert.deepEqual(errorOf(res), {
    code: 'RECORDING_DELETED',
    message: 'The recording is no longer available and will not become available; stop retrying.',
  });
});

test('an organization without an active entitlement gets 402 SUBSCRIPTION_INACTIVE', async () => {
  const { orgId: lapsed } = await insertOrg(h.db, { entitlement: 'inactive' });
  const { callId } = await insertCallWithAudio(h.deps, lapsed, audio);
  const res = await get(pathOf(mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS).url));
  assert.equal(res.statusCode, 402);
  assert.equal(errorOf(res).code, 'SUBSCRIPTION_INACTIVE');
});

test('a 20 MB recording is streamed over a real socket, never read ahead of the client', async () => {
  const big = mp3Frames(48_000); // 20 016 000 bytes
  const { callId } = await insertCallWithAudio(h.deps, orgId, big);
  const opened: Readable[] = [];
  const spy: BlobStore = {
    ...h.deps.store,
    read(key, range) {
      const s = h.deps.store.read(key, range);
      opened.push(s);
      return s;
    },
  };
  const app = await buildPublicApp({ ...h.deps, store: spy });
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const link = mintRecordingLink(h.deps, callId, REST_LINK_TTL_MS);
    // `Connection: close`: the server ends the socket with the response, so `app.close()` below does
    // not wait out the keep-alive (72 s) of a connection still busy when it began closing.
    const res = await fetch(`http://127.0.0.1:${port}${pathOf(link.url)}`, {
      headers: { connection: 'close' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(big.length));
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    assert.ok(first.value && first.value.length > 0);
    // The client has read one chunk and stops: backpressure must keep the server from reading the file.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(opened.length, 1);
    const readSoFar = (opened[0] as Readable & { bytesRead: number }).bytesRead;
    assert.ok(
      readSoFar < big.length / 2,
      `server read ${readSoFar} of ${big.length} bytes ahead of the client`,
    );
    let total = first.value.length;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
    }
    assert.equal(total, big.length);
  } finally {
    await app.close();
  }
});
