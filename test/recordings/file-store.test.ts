import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { fileBlobStore } from '../../src/recordings/store.ts';

/** fileBlobStore.put: the bytes it answers are the bytes written (counted, not read back by a stat). */

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
const fresh = async () => {
  const d = await mkdtemp(join(tmpdir(), 'callcap-file-store-'));
  dirs.push(d);
  return fileBlobStore(d);
};

test('put answers the stored size, from a Readable and from a source of reused chunks, and replaces a blob whole', async () => {
  const store = await fresh();
  const data = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
  assert.deepEqual(
    await store.put('recordings/o/c/a.mp3', Readable.from([data.subarray(0, 70_000), data.subarray(70_000)])),
    {
      bytes: 200_000,
    },
  );
  assert.deepEqual(await readFile(store.localPath('recordings/o/c/a.mp3')!), data);
  const reused = Buffer.alloc(65_536);
  async function* chunks() {
    for (let at = 0; at < data.length; at += reused.length) {
      const n = data.copy(reused, 0, at, at + reused.length);
      yield reused.subarray(0, n);
    }
  }
  assert.deepEqual(await store.put('recordings/o/c/b.mp3', chunks()), { bytes: 200_000 });
  assert.deepEqual(await readFile(store.localPath('recordings/o/c/b.mp3')!), data);
  assert.equal(await store.size('recordings/o/c/b.mp3'), 200_000);
  assert.deepEqual(await store.put('recordings/o/c/b.mp3', Readable.from([Buffer.from('short')])), {
    bytes: 5,
  });
  assert.equal(await store.size('recordings/o/c/b.mp3'), 5);
  assert.deepEqual(await store.put('recordings/o/c/empty.mp3', Readable.from([])), { bytes: 0 });
  assert.deepEqual((await readdir(store.localPath('recordings/o/c')!)).sort(), [
    'a.mp3',
    'b.mp3',
    'empty.mp3',
  ]);
});

test('a body that fails leaves no blob and no temporary file', async () => {
  const store = await fresh();
  async function* failing() {
    yield Buffer.from('abc');
    throw new Error('the download broke');
  }
  await assert.rejects(store.put('recordings/o/c/x.mp3', failing()), /the download broke/);
  await assert.rejects(store.put('recordings/o/c/y.mp3', Readable.from(failing())), /the download broke/);
  assert.deepEqual(await readdir(store.localPath('recordings/o/c')!), []);
  assert.equal(await store.size('recordings/o/c/x.mp3'), null);
});
