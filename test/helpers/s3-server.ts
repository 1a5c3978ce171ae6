import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/**
 * A real S3-protocol server on loopback for tests: s3rver (npm), which speaks the S3 REST API over
 * HTTP — signed requests, multipart uploads, ranged GETs — and keeps objects in a temporary
 * directory. `env` is what the service needs to use it (RECORDINGS_STORE=s3 …).
 */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  /** Where s3rver keeps the objects (to check no partial object stays behind). */
  directory: string;
  close(): Promise<void>;
}

export async function startS3(bucket = 'recordings-test'): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'callcap-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    directory,
    env: {
      RECORDINGS_STORE: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: '1',
      S3_REGION: 'us-east-1',
      // s3rver's fixed credentials; it checks the signature made with them.
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    },
  };
}
