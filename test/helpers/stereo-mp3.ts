/**
 * Real MP3s for the speech-to-text paths, encoded with lamejs: each channel a voiced tone (tone()), so a
 * fake provider can tell the channels apart after decoding (test/helpers/fake-providers.ts maps a
 * tone to a transcript). Who is on which channel is the caller's to say (`left` = channel 0,
 * `right` = channel 1): Twilio records a two-leg call with the PARENT leg on channel 0 and the
 * CHILD leg on channel 1 — the fake Twilio builds its recordings that way (dualChannelRecording in
 * fake-twilio.ts). An inbound call's parent is the caller (the customer); a click-to-call's is the
 * agent: INBOUND_TONES and OUTBOUND_TONES are those layouts, for recordings made without the fake.
 */
import { Mp3Encoder } from '@breezystack/lamejs';

/** The tone of each side; the fake's default transcripts are keyed by these. */
export const AGENT_TONE_HZ = 440;
export const CUSTOMER_TONE_HZ = 1000;
export const VOICEMAIL_TONE_HZ = 700;

export interface ToneOptions {
  seconds: number;
  /** Hz; default 16000 (MPEG-2 Layer III) */
  sampleRate?: number;
  /** kbps; default 64 */
  kbps?: number;
}

/**
 * A tone the speech-to-text gate takes for speech (src/capture/providers/vad.ts): a steady sine is
 * what a voice activity detector is there to refuse (a hum), so the tone carries two weak harmonics
 * (2nd at 0.12, 3rd at 0.08 of the fundamental: still one rising crossing per period for toneOf)
 * and swells and fades four times a second like syllables (0.3 to 1.0; at full swell on every
 * quarter second, where the tests start their spans), peaking near half scale.
 */
function tone(hz: number | null, n: number, rate: number): Int16Array {
  const out = new Int16Array(n);
  if (hz === null) return out;
  for (let i = 0; i < n; i++) {
    const p = (2 * Math.PI * hz * i) / rate;
    const swell = 0.65 + 0.35 * Math.cos((2 * Math.PI * 4 * i) / rate);
    out[i] = Math.round(
      (Math.sin(p) + 0.12 * Math.sin(2 * p) + 0.08 * Math.sin(3 * p)) * swell * 0.5 * 32767,
    );
  }
  return out;
}

function encode(channels: (Int16Array | null)[], rate: number, kbps: number): Buffer {
  const enc = new Mp3Encoder(channels.length, rate, kbps);
  const parts: Uint8Array[] = [];
  const block = 1152 * 8;
  const n = channels[0]?.length ?? 0;
  for (let i = 0; i < n; i += block) {
    const l = channels[0]!.subarray(i, i + block);
    const r = channels[1]?.subarray(i, i + block);
    parts.push(r ? enc.encodeBuffer(l, r) : enc.encodeBuffer(l));
  }
  parts.push(enc.flush());
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

/** Channel 0 (left) and channel 1 (right) of a dual-channel recording: a tone in Hz, null = silence. */
export interface ChannelTones {
  left: number | null;
  right: number | null;
}

/** An inbound call: the caller (customer, the parent leg) on channel 0, the agent rung on channel 1. */
export const INBOUND_TONES: ChannelTones = { left: CUSTOMER_TONE_HZ, right: AGENT_TONE_HZ };
/** A click-to-call: the agent (the parent leg, called first) on channel 0, the customer on channel 1. */
export const OUTBOUND_TONES: ChannelTones = { left: AGENT_TONE_HZ, right: CUSTOMER_TONE_HZ };

/** A stereo MP3: `left` Hz on channel 0, `right` Hz on channel 1; null = silence. */
export function stereoMp3(opts: ToneOptions & ChannelTones): Buffer {
  const rate = opts.sampleRate ?? 16000;
  const n = Math.round(opts.seconds * rate);
  return encode([tone(opts.left, n, rate), tone(opts.right, n, rate)], rate, opts.kbps ?? 64);
}

/** A mono MP3 of one tone (default the voicemail tone). */
export function monoMp3(opts: ToneOptions & { hz?: number } = { seconds: 3 }): Buffer {
  const rate = opts.sampleRate ?? 16000;
  const n = Math.round(opts.seconds * rate);
  return encode([tone(opts.hz ?? VOICEMAIL_TONE_HZ, n, rate)], rate, opts.kbps ?? 32);
}

/**
 * The dominant frequency of PCM samples (floats in -1..1) by zero crossings (good enough for one
 * pure tone), or null for silence.
 */
export function toneOf(samples: ArrayLike<number>, sampleRate: number): number | null {
  let peak = 0;
  for (let i = 0; i < samples.length; i++) if (Math.abs(samples[i]) > peak) peak = Math.abs(samples[i]);
  if (peak < 0.001) return null;
  // rising crossings with hysteresis (from below -t to above +t), so low-level noise does not count
  const t = peak * 0.2;
  let state = 0;
  let first = -1;
  let last = -1;
  let rises = 0;
  for (let i = 0; i < samples.length; i++) {
    const x = samples[i];
    if (x < -t) state = -1;
    else if (x > t && state === -1) {
      state = 1;
      if (first < 0) first = i;
      else rises++;
      last = i;
    }
  }
  if (rises < 1) return null;
  return (rises * sampleRate) / (last - first);
}

/** Spans of a channel that carry a tone, in seconds: [start, end). */
export type ToneSpans = readonly (readonly [number, number])[];

/**
 * A stereo MP3 in which each channel carries its tone only in the given spans and is silent
 * elsewhere: talk with known times, for the talk metrics (src/domain/talk-metrics.ts).
 */
export function stereoSpansMp3(
  opts: ToneOptions & { left: ToneSpans; right: ToneSpans; leftHz?: number; rightHz?: number },
): Buffer {
  const rate = opts.sampleRate ?? 16000;
  const n = Math.round(opts.seconds * rate);
  const gated = (hz: number, spans: ToneSpans) => {
    const full = tone(hz, n, rate);
    const out = new Int16Array(n);
    for (const [s, e] of spans)
      out.set(full.subarray(Math.round(s * rate), Math.round(e * rate)), Math.round(s * rate));
    return out;
  };
  return encode(
    [gated(opts.leftHz ?? CUSTOMER_TONE_HZ, opts.left), gated(opts.rightHz ?? AGENT_TONE_HZ, opts.right)],
    rate,
    opts.kbps ?? 64,
  );
}
