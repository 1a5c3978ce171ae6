/**
 * The cost of the talk metrics (docs/capture.md "Talk metrics"): decoding a stored dual-channel
 * recording and measuring each side's talk, as the transcribe stage does once per call. Prints the
 * median and fastest of 5 runs for a 5-second and a 5-minute call at telephone and wideband rates.
 *
 *   ./node_modules/.bin/node bench/talk-metrics.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { talkMetrics } from '../src/domain/talk-metrics.ts';
import { fileBlobStore } from '../src/recordings/store.ts';
import { channelActivity } from '../src/recordings/talk-activity.ts';
import { stereoSpansMp3 } from '../test/helpers/stereo-mp3.ts';

const dir = mkdtempSync(join(tmpdir(), 'talk-bench-'));
const store = fileBlobStore(dir);
/** Turns of 4 s, the sides alternating every 5 s. */
const spans = (seconds: number, offset: number) =>
  Array.from(
    { length: Math.floor(seconds / 10) || 1 },
    (_, i) => [i * 10 + offset, i * 10 + offset + 4] as const,
  );
try {
  for (const seconds of [5, 300]) {
    for (const [rate, kbps] of [
      [8000, 32],
      [16000, 64],
    ] as const) {
      const mp3 = stereoSpansMp3({
        seconds,
        sampleRate: rate,
        kbps,
        left: spans(seconds, 0),
        right: seconds < 10 ? [] : spans(seconds, 5),
      });
      const key = `${seconds}-${rate}.mp3`;
      await store.put(key, Readable.from([mp3]));
      const runs: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const a = await channelActivity(store, key);
        if (!a) throw new Error('not decoded');
        talkMetrics(a.channels[0], a.channels[1], a.frameSeconds);
        runs.push(performance.now() - t);
      }
      runs.sort((x, y) => x - y);
      console.log(
        `${seconds} s stereo, ${rate} Hz ${kbps} kbps (${mp3.length} bytes): median ${runs[2].toFixed(1)} ms, fastest ${runs[0].toFixed(1)} ms`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
