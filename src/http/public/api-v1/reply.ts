import type { Clock } from '../../../clock.ts';

/** The success envelope of every REST answer: {success: true, data, meta: {timestamp}}. */
export const ok = <T>(clock: Clock, data: T) => ({
  success: true as const,
  data,
  meta: { timestamp: clock.now().toISOString() },
});
