/**
 * Talk metrics of a dual-channel call recording (docs/capture.md "Talk metrics"), from each side's
 * voice activity in fixed frames. Pure: src/recordings/talk-activity.ts decodes the audio into the
 * frames, the transcribe stage stores the result (calls.talk_metrics), the call page shows it.
 *
 * - talk: a side's active frames, with pauses shorter than BRIDGE_SECONDS inside its speech counted
 *   as talk (the gaps between words are not silence);
 * - overlap: both sides talking; silence: neither;
 * - longest monologue: the longest stretch in which one side talks and the other says nothing,
 *   pauses of up to MONOLOGUE_PAUSE_SECONDS included (a breath does not end a monologue, the other
 *   side's first word does).
 */

export type TalkSide = 'agent' | 'customer';

export interface TalkMetrics {
  /** the resolution of every number below, in seconds */
  frame_seconds: number;
  duration_seconds: number;
  agent_seconds: number;
  customer_seconds: number;
  overlap_seconds: number;
  silence_seconds: number;
  longest_monologue: { speaker: TalkSide; start: number; seconds: number } | null;
}

/** Pauses inside a side's speech shorter than this count as talk: gaps between words. */
export const BRIDGE_SECONDS = 0.3;
/** A side's pause of up to this long does not end its monologue. */
export const MONOLOGUE_PAUSE_SECONDS = 1.5;

/** Fills runs of false shorter than `frames` that lie between two true frames. */
export function bridgeGaps(active: readonly boolean[], frames: number): boolean[] {
  const out = [...active];
  let lastTrue = -1;
  for (let i = 0; i < out.length; i++) {
    if (!out[i]) continue;
    if (lastTrue >= 0 && i - lastTrue - 1 > 0 && i - lastTrue - 1 < frames) out.fill(true, lastTrue + 1, i);
    lastTrue = i;
  }
  return out;
}

const round = (seconds: number, frame: number): number => Math.round(seconds / frame) * frame;
const secs = (frames: number, frame: number): number => Number((frames * frame).toFixed(3));

export function talkMetrics(
  agentActive: readonly boolean[],
  customerActive: readonly boolean[],
  frameSeconds: number,
): TalkMetrics {
  const n = Math.max(agentActive.length, customerActive.length);
  const bridge = Math.round(round(BRIDGE_SECONDS, frameSeconds) / frameSeconds);
  const agent = bridgeGaps(agentActive, bridge);
  const customer = bridgeGaps(customerActive, bridge);
  let a = 0;
  let c = 0;
  let both = 0;
  let none = 0;
  const maxPause = Math.round(MONOLOGUE_PAUSE_SECONDS / frameSeconds);
  let run: { side: TalkSide; start: number; last: number } | null = null;
  let best: { side: TalkSide; start: number; frames: number } | null = null;
  for (let i = 0; i < n; i++) {
    const x = agent[i] === true;
    const y = customer[i] === true;
    if (x) a++;
    if (y) c++;
    if (x && y) both++;
    if (!x && !y) none++;
    if (x && y) {
      run = null;
      continue;
    }
    if (!x && !y) {
      if (run && i - run.last > maxPause) run = null;
      continue;
    }
    const side: TalkSide = x ? 'agent' : 'customer';
    if (run && run.side === side && i - run.last - 1 <= maxPause) run.last = i;
    else run = { side, start: i, last: i };
    const frames = run.last - run.start + 1;
    if (!best || frames > best.frames) best = { side, start: run.start, frames };
  }
  return {
    frame_seconds: frameSeconds,
    duration_seconds: secs(n, frameSeconds),
    agent_seconds: secs(a, frameSeconds),
    customer_seconds: secs(c, frameSeconds),
    overlap_seconds: secs(both, frameSeconds),
    silence_seconds: secs(none, frameSeconds),
    longest_monologue: best
      ? {
          speaker: best.side,
          start: secs(best.start, frameSeconds),
          seconds: secs(best.frames, frameSeconds),
        }
      : null,
  };
}

/** The customer's share of the talk time, 0–1; null when nobody talked. */
export function customerShare(m: Pick<TalkMetrics, 'agent_seconds' | 'customer_seconds'>): number | null {
  const total = m.agent_seconds + m.customer_seconds;
  return total > 0 ? m.customer_seconds / total : null;
}

/** A stored talk_metrics value (jsonb) checked into TalkMetrics, or null when it is not one. */
export function talkMetricsOf(v: unknown): TalkMetrics | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const nums = [
    'frame_seconds',
    'duration_seconds',
    'agent_seconds',
    'customer_seconds',
    'overlap_seconds',
    'silence_seconds',
  ] as const;
  if (!nums.every((k) => typeof o[k] === 'number' && Number.isFinite(o[k]))) return null;
  const lm = o.longest_monologue as Record<string, unknown> | null | undefined;
  const monologue =
    lm &&
    (lm.speaker === 'agent' || lm.speaker === 'customer') &&
    typeof lm.start === 'number' &&
    typeof lm.seconds === 'number'
      ? { speaker: lm.speaker as TalkSide, start: lm.start, seconds: lm.seconds }
      : null;
  return { ...(o as unknown as TalkMetrics), longest_monologue: monologue };
}
