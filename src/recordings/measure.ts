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
 * audio or holds no frames. `sniffed`: what Mp3Sniffer saw while the blob was written — for a plain
 * constant-bitrate file (no tags, no Xing/Info header: what Twilio serves) the same figure
 * music-metadata computes, without opening the file again.
 */
export async function measureMp3(
  store: BlobStore,
  key: string,
  bytes: number,
  sniffed?: Mp3Sniffer,
): Promise<number | null> {
  const fast = sniffed?.duration(bytes);
  if (fast !== undefined) return fast;
  try {
    const path = store.localPath(key);
    const meta = path
      ? await parseFile(path, { duration: true })
      : await parseStream(store.read(key), { mimeType: 'audio/mpeg', size: bytes }, { duration: true });
    const { container, duration, numberOfSamples } = meta.format;
    if (container !== 'MPEG' || !numberOfSamples || typeof duration !== 'number') return null;
    return roundedDuration(duration);
  } catch {
    // music-metadata throws on bodies it cannot read at all; for us that is simply "not an MP3".
    return null;
  }
}

const roundedDuration = (duration: number): number | null =>
  !Number.isFinite(duration) || duration <= 0 ? null : Math.round(duration * 1000) / 1000;

/** The head of a file kept for the frame headers: four frames of the largest kind fit. */
const HEAD_BYTES = 8192;
/** ID3v1 sits in the last 128 bytes. */
const TAIL_BYTES = 128;

/**
 * Sees a recording's bytes go by (its first 8 KiB and last 128 bytes, copied; nothing else kept)
 * and answers its duration the way music-metadata's MPEG parser does for a constant-bitrate file
 * read from disk: it reads four frame headers, finds the bitrate constant and computes
 * round(file size / frame size) × samples per frame / sample rate, the frame size that of the
 * fourth frame. Anything else — an ID3v2 or ID3v1 tag, a Xing/Info/LAME header, a CRC, another
 * layer, a changing bitrate, junk before the first frame, a file too short — answers undefined,
 * and measureMp3 asks music-metadata as before (test/recordings/mp3-measure.test.ts holds the two
 * to the same answers).
 */
export class Mp3Sniffer {
  private head = Buffer.alloc(HEAD_BYTES);
  private headLength = 0;
  private tail = Buffer.alloc(TAIL_BYTES);
  private seen = 0;

  push(chunk: Buffer): void {
    if (this.headLength < HEAD_BYTES) {
      const n = chunk.copy(this.head, this.headLength, 0, HEAD_BYTES - this.headLength);
      this.headLength += n;
    }
    // the last TAIL_BYTES of everything seen so far
    if (chunk.length >= TAIL_BYTES) chunk.copy(this.tail, 0, chunk.length - TAIL_BYTES);
    else {
      this.tail.copy(this.tail, 0, chunk.length);
      chunk.copy(this.tail, TAIL_BYTES - chunk.length);
    }
    this.seen += chunk.length;
  }

  /** Seconds (rounded to ms), null for no duration, undefined when only music-metadata can tell. */
  duration(size: number): number | null | undefined {
    if (size !== this.seen || size < HEAD_BYTES + TAIL_BYTES) return undefined;
    if (this.tail.toString('latin1', 0, 3) === 'TAG') return undefined; // ID3v1
    const head = this.head;
    let at = 0;
    let first: FrameHeader | null = null;
    let last: FrameHeader | null = null;
    for (let i = 0; i < 4; i++) {
      const h = frameHeader(head, at);
      if (!h) return undefined;
      if (
        first &&
        (h.bitrate !== first.bitrate || h.sampleRate !== first.sampleRate || h.version !== first.version)
      )
        return undefined;
      // frames 1-3 are read up to their side information, where an Info/Xing/Xtra/LAME tag would be
      if (i < 3) {
        const tag = head.toString('latin1', at + 4 + h.sideInfo, at + 8 + h.sideInfo);
        if (tag === 'Info' || tag === 'Xing' || tag === 'Xtra' || tag === 'LAME') return undefined;
      }
      first ??= h;
      last = h;
      at += h.frameBytes;
      if (at + 4 > head.length) return undefined;
    }
    const f = last!;
    return roundedDuration((Math.round(size / f.frameBytes) * f.samplesPerFrame) / f.sampleRate);
  }
}

/**
 * The channel count music-metadata reports (without the duration scan) for a file whose first 8 KiB
 * are `head`: when the file starts with four plain Layer III frames of one channel mode, that mode's
 * (mono 1, else 2); undefined for anything else (ask music-metadata).
 */
export function sniffChannels(head: Buffer): 1 | 2 | undefined {
  let at = 0;
  let mono: boolean | null = null;
  for (let i = 0; i < 4; i++) {
    const h = frameHeader(head, at);
    if (!h || (mono !== null && h.mono !== mono)) return undefined;
    if (i < 3) {
      const tag = head.toString('latin1', at + 4 + h.sideInfo, at + 8 + h.sideInfo);
      if (tag === 'Info' || tag === 'Xing' || tag === 'Xtra' || tag === 'LAME') return undefined;
    }
    mono = h.mono;
    at += h.frameBytes;
    if (at + 4 > head.length) return undefined;
  }
  return mono ? 1 : 2;
}

interface FrameHeader {
  mono: boolean;
  version: 1 | 2 | 2.5;
  bitrate: number;
  sampleRate: number;
  samplesPerFrame: number;
  sideInfo: number;
  frameBytes: number;
}

/** MPEG-1: kbps by index, Layer III; MPEG-2 and 2.5 share one table. */
const BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2_L3 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES: Record<number, number[]> = {
  1: [44100, 48000, 32000],
  2: [22050, 24000, 16000],
  2.5: [11025, 12000, 8000],
};

/** A Layer III frame header without CRC at `at`, or null (anything else goes to music-metadata). */
function frameHeader(b: Buffer, at: number): FrameHeader | null {
  if (b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return null;
  const version = ([2.5, null, 2, 1] as const)[(b[at + 1]! >> 3) & 3];
  const layer = (b[at + 1]! >> 1) & 3; // 01 = Layer III
  const crc = (b[at + 1]! & 1) === 0;
  if (version === null || version === undefined || layer !== 1 || crc) return null;
  const bitrateIndex = b[at + 2]! >> 4;
  const rateIndex = (b[at + 2]! >> 2) & 3;
  if (bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const kbps = (version === 1 ? BITRATES_V1_L3 : BITRATES_V2_L3)[bitrateIndex]!;
  const sampleRate = SAMPLE_RATES[version]![rateIndex]!;
  const padding = (b[at + 2]! >> 1) & 1;
  const mono = b[at + 3]! >> 6 === 3;
  const samplesPerFrame = version === 1 ? 1152 : 576;
  const frameBytes = Math.floor(((samplesPerFrame / 8) * kbps * 1000) / sampleRate + padding);
  const sideInfo = version === 1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  return { mono, version, bitrate: kbps, sampleRate, samplesPerFrame, sideInfo, frameBytes };
}

/**
 * Passes the request body through, failing with 413 once it exceeds max bytes (never buffers);
 * `sniffer` sees every chunk on the way (measureMp3 reads the duration from it).
 */
export function capped(source: Readable, max: number, sniffer?: Mp3Sniffer): Readable {
  let seen = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > max) return cb(tooLarge(max));
      sniffer?.push(chunk);
      cb(null, chunk);
    },
  });
  source.on('error', (err) => limiter.destroy(err));
  return source.pipe(limiter);
}

/**
 * capped() for a source of chunks that are valid only until the next is asked for (pulled-get.ts):
 * each chunk is passed on as is, after the sniffer saw it; a consumer asks for the next one only
 * once it is done with the last (BlobStore.put writes each before it asks), so nothing is queued or
 * copied here. Throws 413 once the chunks exceed max bytes; stopping early closes the source.
 */
export async function* cappedChunks(
  source: AsyncIterable<Buffer>,
  max: number,
  sniffer?: Mp3Sniffer,
): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of source) {
    seen += chunk.length;
    if (seen > max) throw tooLarge(max);
    sniffer?.push(chunk);
    yield chunk;
  }
}

export const tooLarge = (max: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `The recording exceeds ${max} bytes; upload a smaller MP3 file.`);
