import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Recordings are blobs behind this small interface; the default keeps files under DATA_DIR/recordings. */
export interface BlobStore {
  /**
   * Streams body into the blob at key (atomic: readers never see a partial file). A body that is not
   * a Readable is a source of chunks each valid only until the next is asked for (the recording
   * download's reused buffers, src/recordings/pulled-get.ts): the store is done with a chunk (written,
   * or copied) before it asks for the next.
   */
  put(key: string, body: Readable | AsyncIterable<Buffer>): Promise<{ bytes: number }>;
  /** Size in bytes, or null when missing. */
  size(key: string): Promise<number | null>;
  /** A stream of bytes [start, end] inclusive (whole blob when no range). */
  read(key: string, range?: { start: number; end: number }): Readable;
  /** Local path for readers that parse the file (duration measurement); null for remote stores. */
  localPath(key: string): string | null;
  delete(key: string): Promise<void>;
}

export function fileBlobStore(root: string): BlobStore {
  const pathOf = (key: string) => {
    if (!/^[A-Za-z0-9/_.-]+$/.test(key) || key.includes('..')) throw new Error('invalid blob key');
    return join(root, key);
  };
  const store: BlobStore = {
    async put(key, body) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
      let bytes: number;
      try {
        if (body instanceof Readable) {
          const file = createWriteStream(tmp);
          await pipeline(body, file);
          bytes = file.bytesWritten;
        } else bytes = await writeChunks(tmp, body);
        await rename(tmp, path);
      } catch (err) {
        await rm(tmp, { force: true });
        throw err;
      }
      // the bytes written, counted (the file is this put's alone until renamed): no stat of it
      return { bytes };
    },
    async size(key) {
      try {
        return (await stat(pathOf(key))).size;
      } catch {
        return null;
      }
    },
    read(key, range) {
      if (range) return createReadStream(pathOf(key), { start: range.start, end: range.end });
      return createReadStream(pathOf(key));
    },
    localPath: pathOf,
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
  return store;
}

/** Each chunk written whole before the next is asked for: one write in flight, nothing queued. Answers the bytes written. */
async function writeChunks(path: string, body: AsyncIterable<Buffer>): Promise<number> {
  const file = await open(path, 'wx');
  let bytes = 0;
  try {
    for await (const chunk of body) {
      let at = 0;
      while (at < chunk.length) at += (await file.write(chunk, at, chunk.length - at)).bytesWritten;
      bytes += at;
    }
  } finally {
    await file.close();
  }
  return bytes;
}
