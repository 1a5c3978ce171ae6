import type { TranscriptionProvider, TranscriptSegment } from '../../domain/capture-providers.ts';
import { parseScript, scriptText, timeline } from '../../domain/simulated-call.ts';
import { MAX_RECORDING_BYTES } from '../../recordings/measure.ts';

/**
 * The speech-to-text of a simulated call (test mode: no provider is called): the scenario's
 * script, each turn timed as the simulated recording plays it (domain/simulated-call.ts timeline),
 * its words spread evenly over the turn — so redaction silences a redacted word's time in the
 * recording exactly as it does with a real provider's word times.
 */
export function scriptTranscription(script: string, targetSeconds: number | null): TranscriptionProvider {
  return {
    name: 'simulated',
    maxUploadBytes: MAX_RECORDING_BYTES,
    async transcribe() {
      const turns = parseScript(script) ?? [];
      const timed = timeline(turns, targetSeconds ?? undefined);
      const segments: TranscriptSegment[] = timed.map((t) => {
        const words = t.text.split(/\s+/);
        const step = (t.end - t.start) / words.length;
        return {
          speaker: t.speaker,
          start: t.start,
          end: t.end,
          text: t.text,
          words: words.map((w, i) => ({
            text: w,
            start: Math.round((t.start + i * step) * 1000) / 1000,
            end: Math.round((t.start + (i + 1) * step) * 1000) / 1000,
          })),
        };
      });
      return { text: scriptText(turns), language: null, segments };
    },
  };
}
