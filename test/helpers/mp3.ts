/**
 * A valid MP3 built in memory, so tests know the exact duration the service must measure.
 *
 * Every frame is MPEG-1 Layer III, 44.1 kHz, 128 kbps, no CRC, no padding:
 *   0xFF 0xFB → sync (11 bits) · version 11 = MPEG-1 · layer 01 = Layer III · protection 1 = no CRC
 *   0x90      → bitrate index 1001 = 128 kbps · sample rate 00 = 44100 Hz · padding 0 · private 0
 *   0x64      → channel mode 01 = joint stereo · mode extension 10 · copyright 0 · original 1 · emphasis 00
 * Frame length = floor(144 * 128000 / 44100) + padding = 417 bytes; the rest of the frame (side
 * information and main data) is zero, which decodes as silence. A frame holds 1152 samples, i.e.
 * 1152 / 44100 s ≈ 26.122 ms, so 383 frames ≈ 10.005 s.
 */
export const FRAME_HEADER = Buffer.from([0xff, 0xfb, 0x90, 0x64]);
export const FRAME_BYTES = 417;
export const SAMPLES_PER_FRAME = 1152;
export const SAMPLE_RATE = 44100;
export const FRAME_SECONDS = SAMPLES_PER_FRAME / SAMPLE_RATE;

/** Number of frames for (at least) the given duration. */
export const framesFor = (seconds: number): number => Math.ceil(seconds / FRAME_SECONDS);

/** Exact duration of an MP3 of n frames, in seconds. */
export const durationOf = (frames: number): number => (frames * SAMPLES_PER_FRAME) / SAMPLE_RATE;

/** An MP3 of exactly `frames` frames (frames * 417 bytes). */
export function mp3Frames(frames: number): Buffer {
  const buf = Buffer.alloc(frames * FRAME_BYTES);
  for (let i = 0; i < frames; i++) FRAME_HEADER.copy(buf, i * FRAME_BYTES);
  return buf;
}

/** An MP3 lasting about `seconds` (rounded up to whole frames); durationOf(frames) is the exact value. */
export function mp3(seconds: number): { bytes: Buffer; frames: number; duration: number } {
  const frames = framesFor(seconds);
  return { bytes: mp3Frames(frames), frames, duration: durationOf(frames) };
}
