import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { MPEGDecoder } from 'mpg123-decoder';
import { ProviderError } from './types.ts';

/**
 * Splits a dual-channel MP3 (one side of the call per channel, src/domain/recording-channels.ts)
 * into per-channel 16-bit PCM WAV files, streaming: the MP3 is decoded chunk by chunk (mpg123 in
 * WebAssembly) and each chunk's samples are appended to the current window's two files, so memory
 * holds one decoded chunk, never the recording. A channel longer than one window is cut into consecutive windows (no overlap);
 * the caller offsets each window's timestamps by its start. A window in which a channel stays below
 * SILENCE_PEAK is marked silent, so it is not uploaded (speech-to-text models invent words in silence).
 */

export const WAV_HEADER_BYTES = 44;
/** Peak below which a window counts as silence: -60 dBFS. */
const SILENCE_PEAK = 0.001;

export interface ChannelWindow {
  /** seconds from the start of the recording */
  offset: number;
  /** [agent, customer] file paths */
  files: [string, string];
  /** whether each channel has anything above SILENCE_PEAK in this window */
  audible: [boolean, boolean];
}

export interface SplitResult {
  sampleRate: number;
  /** seconds of audio decoded */
  duration: number;
  windows: ChannelWindow[];
}

interface OpenWindow {
  w: ChannelWindow;
  fhs: [Awaited<ReturnType<typeof open>>, Awaited<ReturnType<typeof open>>];
  peaks: [number, number];
  samples: number;
}

/**
 * Decodes `mp3` into `dir` (which the caller creates and removes). Windows hold at most
 * `maxWindowSeconds` and at most `maxWindowBytes` of WAV each; more than `maxSeconds` of audio in all
 * is refused with ProviderError('too_large').
 */
export async function splitStereoMp3(
  provider: string,
  mp3: Readable,
  dir: string,
  limits: { maxWindowSeconds: number; maxWindowBytes: number; maxSeconds: number },
): Promise<SplitResult> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  const windows: ChannelWindow[] = [];
  let cur: OpenWindow | null = null;
  let sampleRate = 0;
  let windowSamples = 0;
  let total = 0;

  const closeWindow = async (o: OpenWindow) => {
    for (const ch of [0, 1] as const) {
      await o.fhs[ch].write(wavHeader(sampleRate, o.samples), 0, WAV_HEADER_BYTES, 0);
      await o.fhs[ch].close();
      o.w.audible[ch] = o.peaks[ch] >= SILENCE_PEAK;
    }
  };
  const openWindow = async (): Promise<OpenWindow> => {
    const i = windows.length;
    const files: [string, string] = [`${dir}/agent-${i}.wav`, `${dir}/customer-${i}.wav`];
    const w: ChannelWindow = { offset: (i * windowSamples) / sampleRate, files, audible: [false, false] };
    windows.push(w);
    const fhs = [await open(files[0], 'w'), await open(files[1], 'w')] as OpenWindow['fhs'];
    // room for the header, written when the window closes and its length is known
    for (const fh of fhs) await fh.write(Buffer.alloc(WAV_HEADER_BYTES));
    return { w, fhs, peaks: [0, 0], samples: 0 };
  };

  try {
    for await (const chunk of mp3) {
      const { channelData, samplesDecoded, sampleRate: rate } = decoder.decode(chunk as Uint8Array);
      if (samplesDecoded === 0) continue;
      if (sampleRate === 0) {
        sampleRate = rate;
        const byBytes = Math.floor((limits.maxWindowBytes - WAV_HEADER_BYTES) / 2);
        windowSamples = Math.min(Math.floor(limits.maxWindowSeconds * rate), byBytes);
      } else if (rate !== sampleRate) {
        throw new ProviderError(
          provider,
          'fatal',
          `the recording changes its sample rate (${sampleRate} → ${rate} Hz)`,
        );
      }
      total += samplesDecoded;
      if (total / sampleRate > limits.maxSeconds)
        throw new ProviderError(
          provider,
          'too_large',
          `the recording is longer than ${limits.maxSeconds} seconds, the longest this service transcribes`,
        );
      let at = 0;
      while (at < samplesDecoded) {
        cur ??= await openWindow();
        const n = Math.min(samplesDecoded - at, windowSamples - cur.samples);
        for (const ch of [0, 1] as const) {
          const { pcm, peak } = toPcm16(channelData[ch] ?? channelData[0], at, n);
          await cur.fhs[ch].write(pcm);
          if (peak > cur.peaks[ch]) cur.peaks[ch] = peak;
        }
        cur.samples += n;
        at += n;
        if (cur.samples === windowSamples) {
          const done = cur;
          cur = null;
          await closeWindow(done);
        }
      }
    }
    if (cur) {
      const done = cur;
      cur = null;
      await closeWindow(done);
    }
  } catch (err) {
    // a read error of the stored audio or a full disk is not the provider's: it goes up as it is
    if (cur) await Promise.allSettled(cur.fhs.map((fh) => fh.close()));
    throw err;
  } finally {
    decoder.free();
  }
  if (sampleRate === 0)
    throw new ProviderError(provider, 'fatal', 'the recording holds no MP3 audio that could be decoded');
  return { sampleRate, duration: total / sampleRate, windows };
}

function toPcm16(samples: Float32Array, from: number, n: number): { pcm: Buffer; peak: number } {
  const pcm = Buffer.allocUnsafe(n * 2);
  let peak = 0;
  for (let i = 0; i < n; i++) {
    const x = samples[from + i];
    const a = Math.abs(x);
    if (a > peak) peak = a;
    const c = x > 1 ? 1 : x < -1 ? -1 : x;
    pcm.writeInt16LE(Math.round(c * 32767), i * 2);
  }
  return { pcm, peak };
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
