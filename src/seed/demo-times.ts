/**
 * Line times for a demo transcript (calls.transcript_times), so that the demo's call pages play
 * from a line as a transcribed call's do. The demo recordings are silent (demo-audio.ts) and its
 * transcripts written by hand, so the times are an estimate: the recording's length shared among
 * the lines by their word counts, with a short pause between turns. Demo data only; real calls get
 * their times from the speech-to-text segments (capture/providers/transcript.ts lineTimes).
 */
const PAUSE_SECONDS = 0.6;

export function demoLineTimes(transcript: string, seconds: number): [number, number][] {
  const lines = transcript.split('\n').filter((l) => l.trim());
  if (lines.length === 0 || seconds <= 0) return [];
  const words = lines.map((l) => Math.max(1, l.trim().split(/\s+/).length - 1));
  const speaking = Math.max(0, seconds - PAUSE_SECONDS * (lines.length + 1));
  const perWord = speaking / words.reduce((a, b) => a + b, 0);
  const out: [number, number][] = [];
  let t = PAUSE_SECONDS;
  const r = (x: number) => Math.round(x * 10) / 10;
  for (const w of words) {
    const end = t + w * perWord;
    out.push([r(t), r(end)]);
    t = end + PAUSE_SECONDS;
  }
  return out;
}
