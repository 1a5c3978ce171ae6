import { join } from 'node:path';
import type { Config } from '../config.ts';
import { s3BlobStore } from './s3-store.ts';
import { type BlobStore, fileBlobStore } from './store.ts';

/** The recordings store the settings choose (RECORDINGS_STORE): the local directory, or a shared S3 bucket. */
export function blobStoreFromConfig(config: Config): BlobStore {
  if (config.RECORDINGS_STORE === 'file') return fileBlobStore(join(config.DATA_DIR, 'recordings'));
  return s3BlobStore({
    bucket: config.S3_BUCKET as string,
    region: config.S3_REGION,
    ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT } : {}),
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    ...(config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY
      ? {
          credentials: { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY },
        }
      : {}),
    prefix: config.S3_PREFIX,
  });
}
