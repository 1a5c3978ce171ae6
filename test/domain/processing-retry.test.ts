import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RETRY_AFTER_MAX_MS, RETRY_CAP_MS, retryVerdict } from '../../src/domain/processing-retry.ts';

const S = 1000;

test('retryVerdict: the table', () => {
  const rows: [Parameters<typeof retryVerdict>[0], ReturnType<typeof retryVerdict>][] = [
    // exponential from 15 s, half fixed and half jitter
    [
      { kind: 'retryable', attempts: 1, maxAttempts: 8, random: 0 },
      { verdict: 'retry', delayMs: 7.5 * S },
    ],
    [
      { kind: 'retryable', attempts: 1, maxAttempts: 8, random: 0.999999 },
      { verdict: 'retry', delayMs: 15 * S },
    ],
    [
      { kind: 'retryable', attempts: 2, maxAttempts: 8, random: 0.5 },
      { verdict: 'retry', delayMs: 22.5 * S },
    ],
    [
      { kind: 'retryable', attempts: 7, maxAttempts: 8, random: 0 },
      { verdict: 'retry', delayMs: 480 * S },
    ],
    // capped at an hour per step
    [
      { kind: 'retryable', attempts: 20, maxAttempts: 50, random: 0.5 },
      { verdict: 'retry', delayMs: 0.75 * RETRY_CAP_MS },
    ],
    // Retry-After longer than the backoff is waited out; shorter is not a reason to come back sooner
    [
      { kind: 'retryable', attempts: 1, maxAttempts: 8, random: 0.5, retryAfterMs: 120 * S },
      { verdict: 'retry', delayMs: 120 * S },
    ],
    [
      { kind: 'retryable', attempts: 1, maxAttempts: 8, random: 0.5, retryAfterMs: 1 * S },
      { verdict: 'retry', delayMs: 11.25 * S },
    ],
    [
      { kind: 'retryable', attempts: 1, maxAttempts: 8, random: 0, retryAfterMs: 48 * 3600 * S },
      { verdict: 'retry', delayMs: RETRY_AFTER_MAX_MS },
    ],
    // the cap: the last allowed run failing is final, Retry-After or not
    [
      { kind: 'retryable', attempts: 8, maxAttempts: 8, random: 0, retryAfterMs: 5 * S },
      { verdict: 'failed' },
    ],
    [{ kind: 'retryable', attempts: 1, maxAttempts: 1, random: 0 }, { verdict: 'failed' }],
    // no retry for what cannot get better by waiting
    [{ kind: 'fatal', attempts: 1, maxAttempts: 8, random: 0 }, { verdict: 'failed' }],
    [{ kind: 'too_large', attempts: 1, maxAttempts: 8, random: 0 }, { verdict: 'failed' }],
    [{ kind: 'answer_too_large', attempts: 1, maxAttempts: 8, random: 0 }, { verdict: 'failed' }],
    [{ kind: 'invalid_output', attempts: 1, maxAttempts: 8, random: 0 }, { verdict: 'needs_review' }],
  ];
  for (const [input, expected] of rows)
    assert.deepEqual(retryVerdict(input), expected, JSON.stringify(input));
});
