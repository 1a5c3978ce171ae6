import { createHash } from 'node:crypto';
import { Mp3Encoder } from '@breezystack/lamejs';
import { speakerOfChannel } from '../../../domain/recording-channels.ts';
import { type TimedTurn, timelineSeconds } from '../../../domain/simulated-call.ts';
import type { Direction } from '../../../domain/values.ts';

/**
 * The recording of a simulated call: a real MP3 (MPEG-2 Layer III, 16 kHz), dual-channel like a
 * Twilio `record-from-answer-dual` recording (the leg that placed the call on channel 0: the agent
 * of an outbound call, the caller of an inbound one; domain/recording-channels.ts), mono for a
 * voicemail. No speech synthesiser is bundled (docs/test-mode.md): each turn of the script is a
 * voiced pattern on its speaker's channel — a harmonic tone at a speaking pitch (lower for the
 * agent, higher for the customer), one syllable-like swell per word, a falling contour at the end
 * of the turn — and silence between turns, so the audio is audible, as long as the script's
 * timeline, and each side is heard on its own channel.
 */
export const SAMPLE_RATE = 16_000;
const KBPS = 32;
const PITCH_HZ = { agent: 120, customer: 205 } as const;
/** Amplitude of a voiced sample (of 1.0 full scale). */
const LEVEL = 0.35;

/** An MP3 encoder of PCM channels (one or two, SAMPLE_RATE): lamejs by default, injectable to count. */
export type RecordingEncoder = (channels: Int16Array[]) => Promise<Buffer>;

/**
 * The recording of a simulated call, synthesised anew. Encoding takes a while (lamejs is plain
 * JavaScript: well under a second per minute of stereo audio on an idle core, far more on a busy
 * one): it yields to the event loop between blocks, so the job's lease heartbeat and the rest of the
 * process keep running.
 */
export async function synthesiseRecording(
  turns: readonly TimedTurn[],
  channels: 1 | 2,
  direction: Direction,
  encode: RecordingEncoder = encodeMp3,
): Promise<Buffer> {
  const n = Math.ceil(timelineSeconds(turns) * SAMPLE_RATE);
  const pcm = Array.from({ length: channels }, () => new Int16Array(n));
  for (const turn of turns) {
    const channel = channels === 1 ? 0 : speakerOfChannel(0, direction) === turn.speaker ? 0 : 1;
    voice(pcm[channel]!, turn);
    await yieldToLoop();
  }
  return encode(pcm);
}

/** Recordings a process keeps (at 32 kbps a 5-minute stereo call is 1.2 MB: a few MB at most). */
const CACHED_RECORDINGS = 4;

/**
 * Synthesised recordings kept by content: the same script, timeline, channel count and direction
 * give the same bytes, so a test integration placing the same call again (the magic numbers'
 * default scripts) does not encode it again. A least-recently-used cache of `entries` recordings,
 * keyed by a SHA-256 of what the audio is made of; a synthesis in progress is shared by the calls
 * that ask for it meanwhile, and one that fails is not kept. The buffers handed out are shared:
 * read them, never write to them.
 */
export function cachedRecordings(opts: { entries?: number; encode?: RecordingEncoder } = {}) {
  const entries = opts.entries ?? CACHED_RECORDINGS;
  const cache = new Map<string, Promise<Buffer>>(); // insertion order = least recently used first
  return (turns: readonly TimedTurn[], channels: 1 | 2, direction: Direction): Promise<Buffer> => {
    const key = createHash('sha256')
      .update(JSON.stringify([SAMPLE_RATE, KBPS, channels, direction, turns]))
      .digest('base64');
    const hit = cache.get(key);
    if (hit) {
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const made = synthesiseRecording(turns, channels, direction, opts.encode);
    if (entries <= 0) return made;
    cache.set(key, made);
    made.catch(() => {
      if (cache.get(key) === made) cache.delete(key);
    });
    while (cache.size > entries) cache.delete(cache.keys().next().value!);
    return made;
  };
}

/** The recording of a simulated call (the process's cache of them: cachedRecordings). */
export const simulatedRecording = cachedRecordings();

/** Writes one turn's voiced pattern into a channel. */
function voice(out: Int16Array, turn: TimedTurn): void {
  const from = Math.floor(turn.start * SAMPLE_RATE);
  const to = Math.min(out.length, Math.floor(turn.end * SAMPLE_RATE));
  const length = Math.max(1, to - from);
  const words = Math.max(1, turn.text.split(/\s+/).length);
  const f0 = PITCH_HZ[turn.speaker];
  let phase = 0;
  for (let i = 0; i < length; i++) {
    const x = i / length; // 0..1 through the turn
    // pitch: a slow wobble and a fall over the last fifth of the turn
    const pitch =
      f0 * (1 + 0.06 * Math.sin(2 * Math.PI * 1.3 * x * words * 0.25)) * (x > 0.8 ? 1 - (x - 0.8) * 0.5 : 1);
    phase += (2 * Math.PI * pitch) / SAMPLE_RATE;
    // a few harmonics, weighted like a vowel (stronger 2nd and 3rd)
    const s =
      Math.sin(phase) * 0.5 +
      Math.sin(2 * phase) * 0.35 +
      Math.sin(3 * phase) * 0.25 +
      Math.sin(5 * phase) * 0.1;
    // one swell per word, with short gaps between words; soft edges at the turn's ends
    const syllable = Math.max(0, Math.sin(Math.PI * ((x * words) % 1))) ** 0.6;
    const edge = Math.min(1, i / (0.03 * SAMPLE_RATE), (length - i) / (0.03 * SAMPLE_RATE));
    out[from + i] = Math.round(s * syllable * edge * LEVEL * 32767);
  }
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The lamejs encoder (the default RecordingEncoder). */
export async function encodeMp3(channels: Int16Array[]): Promise<Buffer> {
  const enc = new Mp3Encoder(channels.length, SAMPLE_RATE, KBPS);
  const parts: Uint8Array[] = [];
  const block = 1152 * 8;
  const n = channels[0]!.length;
  for (let i = 0; i < n; i += block) {
    const l = channels[0]!.subarray(i, i + block);
    const r = channels[1]?.subarray(i, i + block);
    parts.push(r ? enc.encodeBuffer(l, r) : enc.encodeBuffer(l));
    await yieldToLoop();
  }
  parts.push(enc.flush());
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}
