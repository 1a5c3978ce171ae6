import { giveBackDecoder, takeDecoder } from './decoders.ts';
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

export interface ChannelActivity {
  frameSeconds: number;
  /** per channel (0 = first, 1 = second), one flag per frame */
  channels: [boolean[], boolean[]];
}

/**
 * The activity of the first two channels; null when the recording cannot be decoded. The caller
 * checks that the recording has two channels (recordings/channels.ts): the decoder answers two for
 * a mono file too.
 */
export async function channelActivity(store: BlobStore, key: string): Promise<ChannelActivity | null> {
  const decoder = await takeDecoder();
  let healthy = false;
  const flags: [boolean[], boolean[]] = [[], []];
  // the frame being summed, per channel: sum of squares and samples so far
  const sum = [0, 0];
  let filled = 0;
  let frameSamples = 0;
  try {
    for await (const chunk of store.read(key)) {
      const { channelData, samplesDecoded, sampleRate } = decoder.decode(chunk as Uint8Array);
      if (samplesDecoded === 0) continue;
      if (frameSamples === 0) frameSamples = Math.round(sampleRate * FRAME_SECONDS);
      const [l, r] = channelData;
      for (let i = 0; i < samplesDecoded; i++) {
        sum[0] += l[i] * l[i];
        sum[1] += r[i] * r[i];
        if (++filled === frameSamples) {
          for (const ch of [0, 1] as const) {
            flags[ch].push(Math.sqrt(sum[ch] / frameSamples) > ACTIVE_RMS);
            sum[ch] = 0;
          }
          filled = 0;
        }
      }
    }
    healthy = true;
  } catch {
    return null;
  } finally {
    giveBackDecoder(decoder, healthy);
  }
  if (frameSamples === 0) return null;
  return { frameSeconds: FRAME_SECONDS, channels: flags };
}
