import { open } from 'node:fs/promises';
import { endianness } from 'node:os';
import type { Readable } from 'node:stream';
import { chunkOf, decodeInto, giveBackDecoder, takeDecoder } from '../../recordings/decoders.ts';
import { ActivityMeter } from '../../recordings/talk-activity.ts';
import type { ChannelActivity } from './types.ts';
import { ProviderError } from './types.ts';
import { VoiceDetector } from './vad.ts';

export { renewDecoder } from '../../recordings/decoders.ts';

/**
 * Splits a dual-channel MP3 (one side of the call per channel, src/domain/recording-channels.ts)
 * into per-channel 16-bit PCM WAV files, streaming: the MP3 is decoded chunk by chunk (mpg123 in
 * WebAssembly) and each chunk's samples are appended to the current window's two files, so memory
 * holds one decoded chunk, never the recording. A source above 16 kHz is resampled to 16 kHz
 * (MAX_OUTPUT_RATE) on the way. A channel longer than one window is cut into consecutive windows (no overlap);
 * the caller offsets each window's timestamps by its start. Each channel's samples also go through a
 * voice activity detector (vad.ts): a window in which a channel holds no speech is marked so, and is
 * not uploaded (speech-to-text models invent words in silence, hum and hiss).
 */

export const WAV_HEADER_BYTES = 44;

export interface ChannelWindow {
  /** seconds from the start of the recording */
  offset: number;
  /**
   * [agent, customer] file paths; written only for a window not kept in memory (no `wavs`); empty
   * for a window kept in memory when the folder is made on demand (`dir` a function)
   */
  files: [string, string];
  /** [agent, customer] WAV bytes of a window kept in memory (limits.memoryBytes): no file was written */
  wavs?: [Buffer, Buffer];
  /** whether each channel holds speech in this window (vad.ts): only those are uploaded */
  speech: [boolean, boolean];
}

export interface SplitResult {
  /** of the WAV files: the source's, at most MAX_OUTPUT_RATE */
  sampleRate: number;
  /** seconds of audio decoded */
  duration: number;
  windows: ChannelWindow[];
  /** the talk metrics' voice activity of the two channels, measured while decoding (null: none decoded) */
  activity: ChannelActivity | null;
}

interface OpenWindow {
  w: ChannelWindow;
  /** the files, once the window is on disk */
  fhs: [Awaited<ReturnType<typeof open>>, Awaited<ReturnType<typeof open>>] | null;
  /**
   * each channel's WAV so far while the window is in memory (fhs null): room for the header, then
   * the PCM, in a buffer grown by doubling (one copy per chunk, none at the window's end)
   */
  pcm: [Buffer, Buffer];
  samples: number;
}

/**
 * Decodes `mp3` into `dir` (which the caller creates and removes; or a function that makes it, called
 * only when a window is written to disk: a recording whose windows all stay in memory makes no folder). Windows hold at most
 * `maxWindowSeconds` and at most `maxWindowBytes` of WAV each; more than `maxSeconds` of audio in all
 * is refused with ProviderError('too_large'). A source above MAX_OUTPUT_RATE is resampled to it.
 * `memoryBytes`: a window whose WAV stays within it per channel is kept in memory (`wavs`) and never
 * written to disk; one that grows past it is moved to its files then (default 0: always files).
 */
export async function splitStereoMp3(
  provider: string,
  mp3: Readable,
  dir: string | (() => Promise<string>),
  limits: { maxWindowSeconds: number; maxWindowBytes: number; maxSeconds: number; memoryBytes?: number },
): Promise<SplitResult> {
  const memoryBytes = limits.memoryBytes ?? 0;
  const decoder = await takeDecoder();
  let decoderHealthy = false;
  const windows: ChannelWindow[] = [];
  let cur: OpenWindow | null = null;
  let sourceRate = 0;
  let sampleRate = 0;
  let windowSamples = 0;
  let total = 0;
  let resamplers: [AreaResampler, AreaResampler] | null = null;
  let detectors: [VoiceDetector, VoiceDetector] | null = null;
  const scratch = takeScratch();
  // decoded into reused arrays; the talk metrics' voice activity measured on the way (decode once)
  const pcm = chunkOf(decoder);
  const meter = new ActivityMeter();

  const closeWindow = async (o: OpenWindow) => {
    for (const ch of [0, 1] as const) o.w.speech[ch] = detectors?.[ch].endWindow().speech ?? false;
    if (!o.fhs) {
      const header = wavHeader(sampleRate, o.samples);
      const end = WAV_HEADER_BYTES + o.samples * 2;
      for (const ch of [0, 1] as const) {
        if (o.pcm[ch].length < end) o.pcm[ch] = grown(o.pcm[ch], end, end, o.samples);
        header.copy(o.pcm[ch], 0);
      }
      o.w.wavs = [o.pcm[0].subarray(0, end), o.pcm[1].subarray(0, end)];
      return;
    }
    for (const ch of [0, 1] as const) {
      await o.fhs[ch].write(wavHeader(sampleRate, o.samples), 0, WAV_HEADER_BYTES, 0);
      await o.fhs[ch].close();
    }
  };
  /** Moves a window kept in memory to its files (it outgrew memoryBytes), or opens them. */
  const filesOf = (i: number, d: string): [string, string] => [
    `${d}/agent-${i}.wav`,
    `${d}/customer-${i}.wav`,
  ];
  const toDisk = async (o: OpenWindow) => {
    if (typeof dir !== 'string') o.w.files = filesOf(windows.indexOf(o.w), await dir());
    const fhs = [await open(o.w.files[0], 'w'), await open(o.w.files[1], 'w')] as NonNullable<
      OpenWindow['fhs']
    >;
    o.fhs = fhs;
    for (const ch of [0, 1] as const) {
      // room for the header, written when the window closes and its length is known
      await fhs[ch].write(Buffer.alloc(WAV_HEADER_BYTES));
      if (o.samples > 0) await fhs[ch].write(o.pcm[ch], WAV_HEADER_BYTES, o.samples * 2);
      o.pcm[ch] = EMPTY;
    }
  };
  const openWindow = async (): Promise<OpenWindow> => {
    const i = windows.length;
    const files: [string, string] = typeof dir === 'string' ? filesOf(i, dir) : ['', ''];
    const w: ChannelWindow = { offset: (i * windowSamples) / sampleRate, files, speech: [false, false] };
    windows.push(w);
    const o: OpenWindow = { w, fhs: null, pcm: [EMPTY, EMPTY], samples: 0 };
    if (memoryBytes <= WAV_HEADER_BYTES) await toDisk(o);
    return o;
  };
  /** Appends the `n` output samples of both channels (in scratch) to the windows. */
  const append = async (n: number) => {
    let at = 0;
    while (at < n) {
      cur ??= await openWindow();
      const k = Math.min(n - at, windowSamples - cur.samples);
      if (!cur.fhs && WAV_HEADER_BYTES + (cur.samples + k) * 2 > memoryBytes) await toDisk(cur);
      for (const ch of [0, 1] as const) {
        const fhs = cur.fhs as OpenWindow['fhs'];
        if (fhs) await fhs[ch].write(scratch[ch].bytes, at * 2, k * 2);
        // a copy: the scratch buffer is reused by the next chunk
        else {
          const end = WAV_HEADER_BYTES + (cur.samples + k) * 2;
          if (cur.pcm[ch].length < end) cur.pcm[ch] = grown(cur.pcm[ch], end, memoryBytes, cur.samples);
          scratch[ch].bytes.copy(cur.pcm[ch], WAV_HEADER_BYTES + cur.samples * 2, at * 2, (at + k) * 2);
        }
      }
      // both channels' detectors side by side: their frames end together (vad.ts pushBoth)
      if (detectors)
        VoiceDetector.pushBoth(detectors[0], detectors[1], scratch[0].int16(), scratch[1].int16(), at, k);
      cur.samples += k;
      at += k;
      if (cur.samples === windowSamples) {
        const done = cur;
        cur = null;
        await closeWindow(done);
      }
    }
  };

  try {
    for await (const chunk of mp3) {
      const samplesDecoded = decodeInto(decoder, chunk as Uint8Array, pcm);
      if (samplesDecoded === 0) continue;
      const rate = pcm.sampleRate;
      if (sourceRate === 0) {
        sourceRate = rate;
        sampleRate = Math.min(rate, MAX_OUTPUT_RATE);
        if (sampleRate !== rate)
          resamplers = [new AreaResampler(rate / sampleRate), new AreaResampler(rate / sampleRate)];
        detectors = [await VoiceDetector.create(sampleRate), await VoiceDetector.create(sampleRate)];
        const byBytes = Math.floor((limits.maxWindowBytes - WAV_HEADER_BYTES) / 2);
        windowSamples = Math.min(Math.floor(limits.maxWindowSeconds * sampleRate), byBytes);
      } else if (rate !== sourceRate) {
        throw new ProviderError(
          provider,
          'fatal',
          `the recording changes its sample rate (${sourceRate} → ${rate} Hz)`,
        );
      }
      total += samplesDecoded;
      if (total / sourceRate > limits.maxSeconds)
        throw new ProviderError(
          provider,
          'too_large',
          `the recording is longer than ${limits.maxSeconds} seconds, the longest this service transcribes`,
        );
      if (!resamplers && LITTLE_ENDIAN) {
        // the talk metrics' levels and the 16-bit PCM in one pass over the decoded chunk
        meter.pushAndConvert(
          pcm.left,
          pcm.right,
          samplesDecoded,
          rate,
          scratch[0].reserve(samplesDecoded),
          scratch[1].reserve(samplesDecoded),
        );
        await append(samplesDecoded);
        continue;
      }
      meter.push(pcm.left, pcm.right, samplesDecoded, rate);
      let n = 0;
      for (const ch of [0, 1] as const) {
        const samples = (ch === 0 ? pcm.left : pcm.right).subarray(0, samplesDecoded);
        n = resamplers ? scratch[ch].fillResampled(samples, resamplers[ch]) : scratch[ch].fill(samples);
      }
      await append(n);
    }
    if (resamplers) {
      let n = 0;
      for (const ch of [0, 1] as const) n = scratch[ch].fillFlushed(resamplers[ch]);
      await append(n);
    }
    if (cur) {
      const done = cur;
      cur = null;
      await closeWindow(done);
    }
    decoderHealthy = true;
  } catch (err) {
    // a read error of the stored audio or a full disk is not the provider's: it goes up as it is
    const left = cur as OpenWindow | null; // assigned in append(): TypeScript cannot see it
    if (left?.fhs) await Promise.allSettled(left.fhs.map((fh) => fh.close()));
    throw err;
  } finally {
    giveBackScratch(scratch);
    giveBackDecoder(decoder, decoderHealthy);
    if (detectors) for (const d of detectors) d.close();
  }
  if (sampleRate === 0)
    throw new ProviderError(provider, 'fatal', 'the recording holds no MP3 audio that could be decoded');
  return { sampleRate, duration: total / sourceRate, windows, activity: meter.result() };
}

/**
 * The rate the channels are uploaded at, at most: 16 kHz is what speech-to-text models work at
 * (whisper resamples everything to it), so a higher source rate only costs CPU, disk and upload
 * bytes. A lower one (8 kHz telephone audio) is kept as it is, never upsampled.
 */
export const MAX_OUTPUT_RATE = 16_000;

/**
 * Downsampling by area averaging: each output sample is the mean of the source samples (and
 * fractions of samples) it covers — a box filter before decimation, enough against aliasing for
 * speech. Streaming: the partial output sample carries over from one chunk to the next.
 */
export class AreaResampler {
  private sum = 0;
  /** source samples (fractional) accumulated into the pending output sample */
  private filled = 0;
  /** source samples per output sample, > 1 */
  private readonly ratio: number;
  constructor(ratio: number) {
    this.ratio = ratio;
  }

  /** Writes the output samples `input` completes into `out` from 0; answers how many. */
  push(input: Float32Array, out: Float32Array): number {
    const r = this.ratio;
    let sum = this.sum;
    let filled = this.filled;
    let n = 0;
    for (let i = 0; i < input.length; i++) {
      const x = input[i]!;
      let w = 1;
      while (filled + w >= r) {
        const take = r - filled;
        out[n++] = (sum + x * take) / r;
        sum = 0;
        filled = 0;
        w -= take;
      }
      sum += x * w;
      filled += w;
    }
    this.sum = sum;
    this.filled = filled;
    return n;
  }

  /** The pending partial output sample (the end of the recording), when it covers half a sample or more. */
  flush(out: Float32Array): number {
    const n = this.filled >= this.ratio / 2 ? 1 : 0;
    if (n) out[0] = this.sum / this.filled;
    this.sum = 0;
    this.filled = 0;
    return n;
  }

  /** Output samples `inputLength` source samples can complete, at most. */
  capacity(inputLength: number): number {
    return Math.ceil((inputLength + this.filled) / this.ratio) + 1;
  }
}

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * One channel's 16-bit PCM of the current chunk, in a buffer reused from chunk to chunk (each write
 * is awaited before the next chunk is converted), so the conversion allocates nothing per chunk.
 */
export class PcmScratch {
  bytes = Buffer.alloc(0);
  private samples = new Int16Array(0);
  private floats = new Float32Array(0);

  private ensure(n: number): void {
    if (this.samples.length >= n) return;
    const size = Math.max(n, this.samples.length * 2, 4096);
    // not zeroed: fill writes samples 0..n before anything reads them, and nothing reads past n
    this.bytes = Buffer.allocUnsafe(size * 2);
    this.samples = new Int16Array(this.bytes.buffer, this.bytes.byteOffset, size);
  }

  /**
   * Room for `n` samples, to be written from 0 by the caller (ActivityMeter.pushAndConvert, with
   * fill's conversion) on a little-endian machine: the samples' array, the bytes' view.
   */
  reserve(n: number): Int16Array {
    this.ensure(n);
    return this.samples;
  }

  /** Converts float samples in [-1, 1] (clamped) to 16-bit PCM at 0..n; answers n. */
  fill(input: Float32Array): number {
    const n = input.length;
    this.ensure(n);
    if (LITTLE_ENDIAN) {
      const out = this.samples;
      for (let i = 0; i < n; i++) {
        const x = input[i]!;
        // Math.floor(y + 0.5) is Math.round(y) here, bit for bit: y is a float32 times 32767, exact in
        // a double with room to spare, so adding 0.5 rounds nothing (a -0 stores as 0 either way). It
        // is ~4× faster than Math.round in V8 on this loop (16-bit PCM of every decoded sample).
        out[i] = Math.floor((x > 1 ? 1 : x < -1 ? -1 : x) * 32767 + 0.5);
      }
    } else {
      for (let i = 0; i < n; i++) {
        const x = input[i]!;
        this.bytes.writeInt16LE(Math.round((x > 1 ? 1 : x < -1 ? -1 : x) * 32767), i * 2);
      }
    }
    return n;
  }

  fillResampled(input: Float32Array, r: AreaResampler): number {
    const cap = r.capacity(input.length);
    if (this.floats.length < cap) this.floats = new Float32Array(Math.max(cap, this.floats.length * 2));
    const n = r.push(input, this.floats);
    return this.fill(this.floats.subarray(0, n));
  }

  fillFlushed(r: AreaResampler): number {
    if (this.floats.length < 1) this.floats = new Float32Array(1);
    const n = r.flush(this.floats);
    return this.fill(this.floats.subarray(0, n));
  }

  /** The samples as numbers (on a big-endian machine, read from the little-endian bytes). */
  int16(): Int16Array {
    if (LITTLE_ENDIAN) return this.samples;
    const out = new Int16Array(this.samples.length);
    for (let i = 0; i < out.length; i++) out[i] = this.bytes.readInt16LE(i * 2);
    return out;
  }
}

/**
 * Scratch pairs of the splits done, reused by the next ones (a split running at the same time takes
 * its own): a fresh pair per split had the kernel map and zero new pages for each decoded chunk's
 * PCM (~0.1 ms per 5-second call). At most MAX_IDLE_SCRATCH pairs wait, each at most
 * MAX_IDLE_SCRATCH_BYTES per channel (the PCM of a ~30-second chunk).
 */
const MAX_IDLE_SCRATCH = 4;
const MAX_IDLE_SCRATCH_BYTES = 1024 * 1024;
const idleScratch: (readonly [PcmScratch, PcmScratch])[] = [];

function takeScratch(): readonly [PcmScratch, PcmScratch] {
  return idleScratch.pop() ?? [new PcmScratch(), new PcmScratch()];
}

function giveBackScratch(s: readonly [PcmScratch, PcmScratch]): void {
  if (
    idleScratch.length < MAX_IDLE_SCRATCH &&
    s[0].bytes.length <= MAX_IDLE_SCRATCH_BYTES &&
    s[1].bytes.length <= MAX_IDLE_SCRATCH_BYTES
  )
    idleScratch.push(s);
}

const EMPTY = Buffer.alloc(0);

/**
 * A window's in-memory WAV with room for `need` bytes (header included), at most `cap` unless more
 * is needed, keeping its first `samples` samples.
 */
function grown(old: Buffer, need: number, cap: number, samples: number): Buffer {
  const size = Math.max(need, Math.min(cap, Math.max(old.length * 2, 64 * 1024)));
  const b = Buffer.allocUnsafe(size);
  if (samples > 0) old.copy(b, WAV_HEADER_BYTES, WAV_HEADER_BYTES, WAV_HEADER_BYTES + samples * 2);
  return b;
}

/** The 44-byte RIFF header of a mono 16-bit PCM WAV of `samples` samples. */
export function wavHeader(sampleRate: number, samples: number): Buffer {
  const h = Buffer.alloc(WAV_HEADER_BYTES);
  const data = samples * 2;
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + data, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16); // fmt chunk size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2, 28); // byte rate
  h.writeUInt16LE(2, 32); // block align
  h.writeUInt16LE(16, 34); // bits per sample
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(data, 40);
  return h;
}
