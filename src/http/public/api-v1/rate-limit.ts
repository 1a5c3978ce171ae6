import { AUTH_FAILURES_PER_MINUTE } from '../../../accounts/api-key-auth.ts';
import { hourWindow, minuteWindow } from '../../../accounts/rate-limit-windows.ts';
import { HOUR, MINUTE } from '../../../clock.ts';

/**
 * Rate limits (spec "Limits"): fixed windows on the UTC hour, counters in rate_limit_windows so
 * that every API node shares them. Every authenticated request counts, whatever its final status.
 * The counting itself happens in the authentication query (auth-query.ts); these are the rules
 * around it, pure; the worker's cleanup of old windows is src/accounts/rate-limit-windows.ts. The
 * limits are per row: api_keys.rate_limit_per_hour (default 1000, accounts/api-keys.ts) and
 * organizations.account_rate_limit_per_hour (all the account's keys together; column default 5000,
 * migration 0001).
 */

export { AUTH_FAILURES_PER_MINUTE };

/** Whole seconds until `reset`, at least 1 (Retry-After). */
export const secondsUntil = (now: Date, reset: Date): number =>
  Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000));

export interface Counted {
  limit: number;
  /** this window's count, including the current request */
  count: number;
}

export interface RateDecision {
  exceeded: boolean;
  /** X-RateLimit-* and, when exceeded, Retry-After */
  headers: Record<string, string>;
}

/**
 * Decides one authenticated request against its key's and its account's counters. The headers show
 * the binding limit: the one with fewer requests remaining (the key's on a tie), so a client that
 * follows X-RateLimit-Remaining never hits the other one first.
 */
export function decideRate(now: Date, key: Counted, account: Counted): RateDecision {
  const keyLeft = key.limit - key.count;
  const accountLeft = account.limit - account.count;
  const binding = accountLeft < keyLeft ? account : key;
  const reset = new Date(hourWindow(now).getTime() + HOUR);
  const exceeded = key.count > key.limit || account.count > account.limit;
  const headers = limitHeaders(binding.limit, binding.limit - binding.count, reset);
  if (exceeded) headers['retry-after'] = String(secondsUntil(now, reset));
  return { exceeded, headers };
}

/** Headers of a 429 from the failed-authentication throttle: its own limit and minute window. */
export function authThrottleHeaders(now: Date): Record<string, string> {
  const reset = new Date(minuteWindow(now).getTime() + MINUTE);
  return {
    ...limitHeaders(AUTH_FAILURES_PER_MINUTE, 0, reset),
    'retry-after': String(secondsUntil(now, reset)),
  };
}

function limitHeaders(limit: number, remaining: number, reset: Date): Record<string, string> {
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(Math.max(0, remaining)),
    'x-ratelimit-reset': reset.toISOString(),
  };
}
