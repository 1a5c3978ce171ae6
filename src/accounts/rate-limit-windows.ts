import { HOUR, MINUTE } from '../clock.ts';
import type { Queryable } from '../db/types.ts';

/**
 * rate_limit_windows holds fixed-window counters shared by every node: the REST API's hourly key and
 * account counts and per-minute failed authentications (src/http/public/api-v1/rate-limit.ts), and
 * failed console logins (login-throttle.ts).
 */
export const hourWindow = (now: Date): Date => new Date(Math.floor(now.getTime() / HOUR) * HOUR);
export const minuteWindow = (now: Date): Date => new Date(Math.floor(now.getTime() / MINUTE) * MINUTE);

/**
 * Deletes windows that can no longer count: everything that started before the previous UTC hour
 * (one spare hour absorbs clock skew between nodes). The worker calls this periodically.
 * Returns the number of rows removed.
 */
export async function deleteExpiredRateLimitWindows(db: Queryable, now: Date): Promise<number> {
  const before = new Date(hourWindow(now).getTime() - HOUR);
  const r = await db.query('DELETE FROM rate_limit_windows WHERE window_start < $1', [before]);
  return r.rowCount;
}
