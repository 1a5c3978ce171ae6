import type { BlobStore } from './store.ts';
import type { ChannelActivity } from './talk-activity.ts';

/**
 * Decode once: the transcription's split (src/capture/providers/wav.ts) decodes the stored
 * recording anyway, so it measures the talk metrics' voice activity (talk-activity.ts) on the way
 * and leaves it here for channelActivity, which then neither reads nor decodes the recording again
 * (an MP3 decode and its arrays per call). Same samples, same loop: the same flags.
 *
 * The split is handed a stream, not a key: the store's read() notes which blob a stream reads
 * (noteRead), and the split remembers what it measured under that blob. An entry is taken once,
 * only while the blob still has the size the split read (a blob written since, by this process or
 * another, is measured anew); a write through the store forgets it at once (forgetActivity: the
 * recording silenced by redaction is measured again, after silencing), and entries left over (a
 * transcription that failed after its split) go after MAX_AGE_MS or past MAX_ENTRIES.
 */

const MAX_ENTRIES = 64;
const MAX_AGE_MS = 15 * 60_000;

interface Source {
  store: BlobStore;
  key: string;
}
interface Entry {
  store: BlobStore;
  key: string;
  activity: ChannelActivity;
  bytes: number;
  at: number;
}

const sources = new WeakMap<object, Source>();
/** by key, oldest first (insertion order) */
const entries = new Map<string, Entry[]>();
let count = 0;

/** `stream` reads the whole of blob `key` of `store`. */
export function noteRead(stream: object, store: BlobStore, key: string): void {
  sources.set(stream, { store, key });
}

/** The voice activity measured over all `bytes` bytes of `stream` (a whole blob, noteRead). */
export function rememberActivity(stream: object, activity: ChannelActivity, bytes: number): void {
  const src = sources.get(stream);
  if (!src) return;
  forgetActivity(src.store, src.key);
  const now = Date.now();
  // the oldest go first when full or stale
  for (const [k, list] of entries) {
    if (count < MAX_ENTRIES && now - list[0]!.at < MAX_AGE_MS) break;
    entries.delete(k);
    count -= list.length;
  }
  const list = entries.get(src.key) ?? [];
  list.push({ ...src, activity, bytes, at: now });
  entries.set(src.key, list);
  count++;
}

/** What the split measured of blob `key`, taken (once); null when nothing valid is left. */
export async function takeActivity(store: BlobStore, key: string): Promise<ChannelActivity | null> {
  const list = entries.get(key);
  const e = list?.find((x) => x.store === store);
  if (!list || !e) return null;
  forgetActivity(store, key);
  if (Date.now() - e.at >= MAX_AGE_MS) return null;
  const size = await store.size(key).catch(() => null);
  return size === e.bytes ? e.activity : null;
}

/** Blob `key` of `store` is written or deleted: what was measured of it no longer holds. */
export function forgetActivity(store: BlobStore, key: string): void {
  const list = entries.get(key);
  if (!list) return;
  const kept = list.filter((x) => x.store !== store);
  count -= list.length - kept.length;
  if (kept.length) entries.set(key, kept);
  else entries.delete(key);
}
