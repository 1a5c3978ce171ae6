import { PassThrough, Readable, Transform } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { BlobStore } from './store.ts';

/**
 * Recordings on S3-compatible object storage (AWS S3, MinIO, Ceph RGW, R2, …), behind the same
 * BlobStore interface as the local directory, so every API node and worker sees every recording.
 *
 * Nothing is held whole in memory: put() streams through a multipart upload (5 MiB parts, two in
 * flight: at most ~10 MiB buffered per upload, whatever the recording's size); read() streams the
 * object's body, asking S3 for the byte range itself (`Range: bytes=a-b`), so a seek in a player
 * costs one ranged GET. An object appears only when its upload completes: readers never see a
 * partial recording, as with the file store's rename.
 */
export interface S3StoreOptions {
  bucket: string;
  region: string;
  /** Custom endpoint (MinIO, Ceph, a local test server); AWS when absent. */
  endpoint?: string;
  /** Path-style addressing (http://host/bucket/key), which most non-AWS servers need. */
  forcePathStyle?: boolean;
  /** Static credentials; without them the AWS SDK's default chain (env, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Prepended to every blob key, e.g. "recordings/". */
  prefix?: string;
}

/** Multipart part size: S3's minimum; also the upload's memory bound per in-flight part. */
export const S3_PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

export interface S3BlobStore extends BlobStore {
  /** Closes the client's sockets (tests, shutdown). */
  destroy(): void;
}

export function s3BlobStore(opts: S3StoreOptions): S3BlobStore {
  const clientConfig: S3ClientConfig = {
    region: opts.region,
    forcePathStyle: opts.forcePathStyle ?? false,
    // A recording read is one GET; the SDK's own retries would re-send a half-streamed body.
    maxAttempts: 3,
  };
  if (opts.endpoint) clientConfig.endpoint = opts.endpoint;
  if (opts.credentials) clientConfig.credentials = opts.credentials;
  const client = new S3Client(clientConfig);
  const prefix = opts.prefix ?? '';
  const keyOf = (key: string) => {
    if (!/^[A-Za-z0-9/_.-]+$/.test(key) || key.includes('..')) throw new Error('invalid blob key');
    return `${prefix}${key}`;
  };

  return {
    async put(key, source) {
      // chunks valid only until the next is asked for (the download's) are copied: the multipart
      // upload holds them until its part is full
      const body =
        source instanceof Readable
          ? source
          : Readable.from(
              (async function* () {
                for await (const chunk of source) yield Buffer.from(chunk);
              })(),
            );
      let bytes = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          bytes += chunk.length;
          cb(null, chunk);
        },
      });
      // The source's own error (e.g. the recording cap's 413) is what the caller must see, even when
      // the server then refuses to abort the multipart upload.
      let sourceError: unknown;
      body.on('error', (err) => {
        sourceError = err;
        counter.destroy(err);
      });
      const upload = new Upload({
        client,
        params: { Bucket: opts.bucket, Key: keyOf(key), Body: body.pipe(counter), ContentType: 'audio/mpeg' },
        partSize: S3_PART_BYTES,
        queueSize: PARTS_IN_FLIGHT,
        leavePartsOnError: false,
      });
      try {
        await upload.done();
      } catch (err) {
        // A failed source (e.g. the 413 cap) aborts the multipart upload: nothing half-written stays.
        await upload.abort().catch(() => {});
        throw sourceError ?? err;
      }
      return { bytes };
    },

    async size(key) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: opts.bucket, Key: keyOf(key) }));
        return head.ContentLength ?? null;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },

    read(key, range) {
      const out = new PassThrough();
      const input = {
        Bucket: opts.bucket,
        Key: keyOf(key),
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      };
      client
        .send(new GetObjectCommand(input), { abortSignal: abortOn(out) })
        .then((res) => {
          const src = res.Body;
          if (!(src instanceof Readable)) throw new Error('S3 answered without a body stream');
          src.on('error', (err) => out.destroy(err));
          src.pipe(out);
        })
        .catch((err) => out.destroy(err instanceof Error ? err : new Error(String(err))));
      return out;
    },

    localPath: () => null,

    async delete(key) {
      // S3's DELETE succeeds on a missing key: deleting twice is harmless, as with the file store.
      await client.send(new DeleteObjectCommand({ Bucket: opts.bucket, Key: keyOf(key) }));
    },

    destroy() {
      client.destroy();
    },
  };
}

/** Aborts the GET when the reader goes away (a client that closed the download mid-way). */
function abortOn(stream: PassThrough): AbortSignal {
  const ac = new AbortController();
  stream.once('close', () => {
    if (!stream.readableEnded) ac.abort();
  });
  return ac.signal;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}
