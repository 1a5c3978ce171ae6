/**
 * When a processing stage runs again after a failure (src/capture/jobs/, docs/capture.md
 * "Processing jobs"). Pure: the runner passes the attempt count, the provider's Retry-After and a
 * random number, and gets the delay or the verdict that the stage has failed for good.
 */

/** The first retry waits about this long; each further one doubles it. */
export const RETRY_BASE_MS = 15_000;
/** No backoff step waits longer than this (the 8th run of a stage is ~30 min after the first). */
export const RETRY_CAP_MS = 60 * 60_000;
/**
 * A provider's Retry-After is honoured up to this long; a longer one (a provider saying "tomorrow")
 * is cut here, so an operator sees the next attempt within the working day.
 */
export const RETRY_AFTER_MAX_MS = 6 * 60 * 60_000;

export type FailureKind = 'retryable' | 'fatal' | 'too_large' | 'answer_too_large' | 'invalid_output';

export type RetryVerdict =
  | { verdict: 'retry'; delayMs: number }
  | { verdict: 'failed' }
  | { verdict: 'needs_review' };

/**
 * attempts: runs made so far, this one included (1 after the first run). random: [0, 1).
 * Backoff with "equal jitter": half of the exponential step fixed, half random, so a burst of calls
 * failing together does not come back together; a Retry-After longer than that is waited out.
 */
export function retryVerdict(p: {
  kind: FailureKind;
  attempts: number;
  maxAttempts: number;
  retryAfterMs?: number;
  random: number;
}): RetryVerdict {
  if (p.kind === 'invalid_output') return { verdict: 'needs_review' };
  if (p.kind !== 'retryable' || p.attempts >= p.maxAttempts) return { verdict: 'failed' };
  const step = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, p.attempts - 1));
  const jittered = Math.round(step / 2 + (step / 2) * p.random);
  const asked = Math.min(RETRY_AFTER_MAX_MS, Math.max(0, p.retryAfterMs ?? 0));
  return { verdict: 'retry', delayMs: Math.max(jittered, asked) };
}
