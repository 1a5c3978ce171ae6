/**
 * Demo recordings: silent MP3 built in memory, so a first start has real audio to play and to
 * measure without shipping sound files.
 *
 * Every frame is MPEG-1 Layer III, 44.1 kHz, 128 kbps CBR, no CRC, no padding:
 *   0xFF 0xFB → sync (11 bits) · version 11 = MPEG-1 · layer 01 = Layer III · protection 1 = no CRC
 *   0x90      → bitrate index 1001 = 128 kbps · sample rate 00 = 44100 Hz · padding 0 · private 0
 *   0x64      → channel mode 01 = joint stereo · mode extension 10 · copyright 0 · original 1 · emphasis 00
 * Frame length = floor(144 * 128000 / 44100) + padding = 417 bytes; the rest of the frame (side
 * information and main data) is zero, which decodes as silence. A frame holds 1152 samples.
 */
export const MP3_FRAME_HEADER = Buffer.from([0xff, 0xfb, 0x90, 0x64]);
export const MP3_FRAME_BYTES = 417;
export const MP3_SAMPLES_PER_FRAME = 1152;
export const MP3_SAMPLE_RATE = 44100;

/** A silent MP3 of at least `seconds` (whole frames) and its exact duration in seconds. */
export function silentMp3(seconds: number): { bytes: Buffer; duration: number } {
  const frames = Math.max(1, Math.ceil((seconds * MP3_SAMPLE_RATE) / MP3_SAMPLES_PER_FRAME));
  const bytes = Buffer.alloc(frames * MP3_FRAME_BYTES);
  for (let i = 0; i < frames; i++) MP3_FRAME_HEADER.copy(bytes, i * MP3_FRAME_BYTES);
  return { bytes, duration: (frames * MP3_SAMPLES_PER_FRAME) / MP3_SAMPLE_RATE };
}
