import { open } from 'node:fs/promises';
import { parseFile, parseStream } from 'music-metadata';
import { sniffChannels } from './measure.ts';
import type { BlobStore } from './store.ts';

/**
 * How many channels a stored MP3 recording has, read from its first frame header (music-metadata
 * without the duration scan: it stops after the headers). A two-channel call recording is the
 * carrier's dual-channel recording — one side of the call per channel, which side is which by
 * src/domain/recording-channels.ts — which speech-to-text transcribes channel by channel. 1 when
 * the file cannot be read (a mono transcription still works).
 */
export async function recordingChannels(store: BlobStore, key: string, bytes: number): Promise<1 | 2> {
  try {
    const path = store.localPath(key);
    // a plain MP3 (four Layer III frames first) tells from its first 8 KiB, as music-metadata would
    if (path && bytes >= 8192) {
      const fh = await open(path, 'r');
      try {
        const head = Buffer.alloc(8192);
        const { bytesRead } = await fh.read(head, 0, 8192, 0);
        const sniffed = bytesRead === 8192 ? sniffChannels(head) : undefined;
        if (sniffed) return sniffed;
      } finally {
        await fh.close();
      }
    }
    const meta = path
      ? await parseFile(path, { duration: false, skipCovers: true })
      : await parseStream(store.read(key), { mimeType: 'audio/mpeg', size: bytes }, { skipCovers: true });
    return meta.format.numberOfChannels === 2 ? 2 : 1;
  } catch {
    return 1;
  }
}
