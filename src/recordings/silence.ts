import { Readable } from 'node:stream';
import { Mp3Encoder } from '@breezystack/lamejs';
import { MPEGDecoder } from 'mpg123-decoder';
import type { BlobStore } from './store.ts';

/**
 * Silences time spans of a stored MP3 recording, per channel, and stores it again under the same key
 * (the store's put is atomic): what redaction took out of a transcript is then not in the audio
 * either (docs/capture.md "Redaction"). The recording is decoded (mpg123, streaming), the spans'
 * samples set to zero, and each decoded chunk encoded again (lamejs, constant bit rate) as it comes:
 * memory holds one decoded chunk and the encoded result.
 */

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
  const decoder = new MPEGDecoder();
  await decoder.ready;
  const parts: Buffer[] = [];
  let encoder: Mp3Encoder | null = null;
  let channels = 0;
  let rate = 0;
  let at = 0; // samples decoded so far (per channel)
  let silenced = 0;
  try {
    for await (const chunk of store.read(key)) {
      const { channelData, samplesDecoded, sampleRate } = decoder.decode(chunk as Uint8Array);
      if (samplesDecoded === 0) continue;
      if (!encoder) {
        rate = sampleRate;
        channels = Math.min(2, channelData.length);
        encoder = new Mp3Encoder(channels, rate, kbpsFor(rate, channels));
      }
      const data = channelData.slice(0, channels).map((c) => c.subarray(0, samplesDecoded));
      for (const s of spans) {
        const from = Math.max(at, Math.floor(s.start * rate));
        const to = Math.min(at + samplesDecoded, Math.ceil(s.end * rate));
        if (from >= to) continue;
        const targets = channels === 1 ? [0] : [s.channel];
        for (const ch of targets) data[ch].fill(0, from - at, to - at);
        silenced += (to - from) / rate;
      }
      const pcm = data.map(toInt16);
      const out = channels === 2 ? encoder.encodeBuffer(pcm[0], pcm[1]) : encoder.encodeBuffer(pcm[0]);
      if (out.length) parts.push(Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      at += samplesDecoded;
    }
    if (!encoder) return { bytes: (await store.size(key)) ?? 0, silencedSeconds: 0 };
    const end = encoder.flush();
    if (end.length) parts.push(Buffer.from(end.buffer, end.byteOffset, end.byteLength));
  } finally {
    decoder.free();
  }
  const { bytes } = await store.put(key, Readable.from(parts));
  return { bytes, silencedSeconds: silenced };
}
