import { Readable } from 'node:stream';
import { Mp3Encoder } from '@breezystack/lamejs';
import { chunkOf, decodeInto, giveBackDecoder, takeDecoder } from './decoders.ts';
import type { BlobStore } from './store.ts';

/**
 * Silences time spans of a stored MP3 recording, per channel, and stores it again under the same key
 * (the store's put is atomic): what redaction took out of a transcript is then not in the audio
 * either (docs/capture.md "Redaction"). The recording is decoded (mpg123, streaming), the spans'
 * samples set to zero, and each decoded chunk encoded again (lamejs, constant bit rate) as it comes:
 * memory holds one decoded chunk and the encoded result.
 *
 * Times stay where they were: encoding and decoding an MP3 again delays its audio by
 * REENCODE_SHIFT_SAMPLES (LAME's 576-sample encoder delay and the 529-sample delay of MP3's
 * synthesis filter bank), so that many samples are dropped from the start of what is encoded. A
 * word said at 12.3 s in the carrier's file is at 12.3 s in ours, where the transcript's times, the
 * silenced spans and the evidence times (docs/capture.md) place it.
 */

/** How far a decode → lamejs encode → decode round trip delays audio, in samples at any rate (measured: test/recordings/silence.test.ts). */
export const REENCODE_SHIFT_SAMPLES = 1105;

export interface ChannelSpan {
  /** 0 = left / first channel, 1 = right; a mono recording silences its one channel for either */
  channel: 0 | 1;
  /** seconds from the start of the recording */
  start: number;
  end: number;
}

/** Bit rate of the re-encoded file: telephone audio at 8 kHz needs little. */
function kbpsFor(rate: number, channels: number): number {
  if (rate <= 12_000) return channels === 2 ? 32 : 24;
  if (rate <= 24_000) return channels === 2 ? 64 : 48;
  return channels === 2 ? 128 : 64;
}

const toInt16 = (f: Float32Array): Int16Array => {
  const out = new Int16Array(f.length);
  for (let i = 0; i < f.length; i++) {
    const v = Math.max(-1, Math.min(1, f[i]));
    out[i] = v < 0 ? v * 0x8000 : v * 0x7fff;
  }
  return out;
};

export async function silenceRecording(
  store: BlobStore,
  key: string,
  spans: readonly ChannelSpan[],
): Promise<{ bytes: number; silencedSeconds: number }> {
  const decoder = await takeDecoder();
  let healthy = false;
  const parts: Buffer[] = [];
  let encoder: Mp3Encoder | null = null;
  let channels = 0;
  let rate = 0;
  let at = 0; // samples decoded so far (per channel)
  let silenced = 0;
  let skip = REENCODE_SHIFT_SAMPLES; // samples still to drop from the start of the encoder's input
  const decoded = chunkOf(decoder); // reused from chunk to chunk
  try {
    for await (const chunk of store.read(key)) {
      const samplesDecoded = decodeInto(decoder, chunk as Uint8Array, decoded);
      if (samplesDecoded === 0) continue;
      if (!encoder) {
        rate = decoded.sampleRate;
        channels = 2; // mpg123-decoder answers two channels, a mono file's twice
        encoder = new Mp3Encoder(channels, rate, kbpsFor(rate, channels));
      }
      const data = [decoded.left.subarray(0, samplesDecoded), decoded.right.subarray(0, samplesDecoded)];
      for (const s of spans) {
        const from = Math.max(at, Math.floor(s.start * rate));
        const to = Math.min(at + samplesDecoded, Math.ceil(s.end * rate));
        if (from >= to) continue;
        const targets = channels === 1 ? [0] : [s.channel];
        for (const ch of targets) data[ch].fill(0, from - at, to - at);
        silenced += (to - from) / rate;
      }
      at += samplesDecoded;
      const drop = Math.min(skip, samplesDecoded);
      skip -= drop;
      if (drop === samplesDecoded) continue;
      const pcm = data.map((c) => toInt16(c.subarray(drop)));
      const out = channels === 2 ? encoder.encodeBuffer(pcm[0], pcm[1]) : encoder.encodeBuffer(pcm[0]);
      if (out.length) parts.push(Buffer.from(out.buffer, out.byteOffset, out.byteLength));
    }
    if (!encoder) return { bytes: (await store.size(key)) ?? 0, silencedSeconds: 0 };
    const end = encoder.flush();
    if (end.length) parts.push(Buffer.from(end.buffer, end.byteOffset, end.byteLength));
    healthy = true;
  } finally {
    giveBackDecoder(decoder, healthy);
  }
  const { bytes } = await store.put(key, Readable.from(parts));
  return { bytes, silencedSeconds: silenced };
}
