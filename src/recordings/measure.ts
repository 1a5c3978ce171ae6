import { type Readable, Transform } from 'node:stream';
import { parseFile, parseStream } from 'music-metadata';
import { AppError } from '../errors.ts';
import type { BlobStore } from './store.ts';

/**
 * Largest recording accepted by PUT /admin/v1/calls/{id}/recording. 200 MB of 128 kbps MP3 is
 * about 3.5 hours, well beyond any phone call; it is that route's bodyLimit (every other operator
 * route takes at most 1 MiB).
 */
export const MAX_RECORDING_BYTES = 200 * 1024 * 1024;

/**
 * Recording length in seconds, measured from the stored audio by scanning its MPEG frames
 * (music-metadata with duration: true), rounded to milliseconds. null when the blob is not MPEG
 * audio or holds no frames.
 */
export async function measureMp3(store: BlobStore, key: string, bytes: number): Promise<number | null> {
  try {
    const path = store.localPath(key);
    const meta = path
      ? await parseFile(path, { duration: true })
      : await parseStream(store.read(key), { mimeType: 'audio/mpeg', size: bytes }, { duration: true });
    const { container, duration, numberOfSamples } = meta.format;
    if (container !== 'MPEG' || !numberOfSamples || typeof duration !== 'number') return null;
    if (!Number.isFinite(duration) || duration <= 0) return null;
    return Math.round(duration * 1000) / 1000;
  } catch {
    // music-metadata throws on bodies it cannot read at all; for us that is simply "not an MP3".
    return null;
  }
}

/** Passes the request body through, failing with 413 once it exceeds max bytes (never buffers). */
export function capped(source: Readable, max: number): Readable {
  let seen = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > max) cb(tooLarge(max));
      else cb(null, chunk);
    },
  });
  source.on('error', (err) => limiter.destroy(err));
  return source.pipe(limiter);
}

export const tooLarge = (max: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `The recording exceeds ${max} bytes; upload a smaller MP3 file.`);
