import type { ChannelActivity } from '../domain/capture-providers.ts';
import { chunkOf, decodeInto, giveBackDecoder, takeDecoder } from './decoders.ts';
import type { BlobStore } from './store.ts';

/**
 * Voice activity per channel of a stored dual-channel MP3 recording, in frames of FRAME_SECONDS:
 * the recording is decoded as it streams from the store (mpg123, one decoded chunk in memory), and a
 * frame of a channel is active when its RMS level is above ACTIVE_RMS. The talk metrics
 * (src/domain/talk-metrics.ts) are computed from these frames (docs/capture.md "Talk metrics").
 * An energy gate, not a voice model: on a carrier's recording each channel holds one person's
 * line, so the level above the line's noise floor is that person talking; steady noise louder than
 * ACTIVE_RMS would count as talk.
 */

/** Every talk metric's resolution: 20 ms frames, the usual voice-activity frame. */
export const FRAME_SECONDS = 0.02;
/** A frame is talk when its RMS is above this (full scale = 1): -40 dBFS, far above a phone line's hiss. */
export const ACTIVE_RMS = 0.01;

export type { ChannelActivity };

/**
 * The flags of a recording's frames, fed decoded chunks in order (channelActivity, and the
 * transcription's split, which decodes the same recording and hands its result on).
 */
export class ActivityMeter {
  private readonly flags: [boolean[], boolean[]] = [[], []];
  // the frame being summed, per channel: sum of squares and samples so far
  private sum0 = 0;
  private sum1 = 0;
  private filled = 0;
  private frameSamples = 0;

  /** The first `n` samples of both channels, at `sampleRate`. */
  push(l: Float32Array, r: Float32Array, n: number, sampleRate: number): void {
    if (n === 0) return;
    if (this.frameSamples === 0) this.frameSamples = Math.round(sampleRate * FRAME_SECONDS);
    const frameSamples = this.frameSamples;
    const [f0, f1] = this.flags;
    let s0 = this.sum0;
    let s1 = this.sum1;
    let filled = this.filled;
    // frame by frame: no call inside the loop over the samples, so V8 keeps the arrays' bounds and
    // buffers out of it (a push inside it made the loop ~1.7x slower)
    for (let i = 0; i < n; ) {
      const stop = Math.min(n, i + frameSamples - filled);
      filled += stop - i;
      for (; i < stop; i++) {
        const a = l[i]!;
        const b = r[i]!;
        s0 += a * a;
        s1 += b * b;
      }
      if (filled === frameSamples) {
        f0.push(Math.sqrt(s0 / frameSamples) > ACTIVE_RMS);
        f1.push(Math.sqrt(s1 / frameSamples) > ACTIVE_RMS);
        s0 = 0;
        s1 = 0;
        filled = 0;
      }
    }
    this.sum0 = s0;
    this.sum1 = s1;
    this.filled = filled;
  }

  /**
   * push(), and in the same pass over the samples each one as 16-bit PCM into `outL`/`outR` from 0:
   * Math.floor(clamped × 32767 + 0.5), wav.ts PcmScratch.fill's conversion, number for number (the
   * transcription's split at a rate it keeps: one pass instead of three over the decoded chunk).
   */
  pushAndConvert(
    l: Float32Array,
    r: Float32Array,
    n: number,
    sampleRate: number,
    outL: Int16Array,
    outR: Int16Array,
  ): void {
    if (n === 0) return;
    if (this.frameSamples === 0) this.frameSamples = Math.round(sampleRate * FRAME_SECONDS);
    const frameSamples = this.frameSamples;
    const [f0, f1] = this.flags;
    let s0 = this.sum0;
    let s1 = this.sum1;
    let filled = this.filled;
    for (let i = 0; i < n; ) {
      const stop = Math.min(n, i + frameSamples - filled);
      filled += stop - i;
      for (; i < stop; i++) {
        const a = l[i]!;
        const b = r[i]!;
        s0 += a * a;
        s1 += b * b;
        outL[i] = Math.floor((a > 1 ? 1 : a < -1 ? -1 : a) * 32767 + 0.5);
        outR[i] = Math.floor((b > 1 ? 1 : b < -1 ? -1 : b) * 32767 + 0.5);
      }
      if (filled === frameSamples) {
        f0.push(Math.sqrt(s0 / frameSamples) > ACTIVE_RMS);
        f1.push(Math.sqrt(s1 / frameSamples) > ACTIVE_RMS);
        s0 = 0;
        s1 = 0;
        filled = 0;
      }
    }
    this.sum0 = s0;
    this.sum1 = s1;
    this.filled = filled;
  }

  /** null when nothing was decoded */
  result(): ChannelActivity | null {
    if (this.frameSamples === 0) return null;
    return { frameSeconds: FRAME_SECONDS, channels: this.flags };
  }
}

/**
 * The activity of the first two channels; null when the recording cannot be decoded. The caller
 * checks that the recording has two channels (recordings/channels.ts): the decoder answers two for
 * a mono file too. (The transcribe stage decodes only when the transcription did not measure it:
 * TranscriptionResult.channelActivity.)
 */
export async function channelActivity(store: BlobStore, key: string): Promise<ChannelActivity | null> {
  const decoder = await takeDecoder();
  let healthy = false;
  const meter = new ActivityMeter();
  const pcm = chunkOf(decoder);
  try {
    for await (const chunk of store.read(key)) {
      const n = decodeInto(decoder, chunk as Uint8Array, pcm);
      meter.push(pcm.left, pcm.right, n, pcm.sampleRate);
    }
    healthy = true;
  } catch {
    return null;
  } finally {
    giveBackDecoder(decoder, healthy);
  }
  return meter.result();
}
