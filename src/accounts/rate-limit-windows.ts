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

/**
 * Takes one slot of a fixed one-minute window of `bucket` unless it already holds `cap`; the slot is
 * taken and the cap decided in one statement (the upsert locks the row, so concurrent takers queue
 * and exactly `cap` get through). Returns whether a slot was taken and the window's end.
 */
export async function takeMinuteSlot(
  q: Queryable,
  bucket: string,
  cap: number,
  now: Date,
): Promise<{ taken: boolean; count: number; reset: Date }> {
  const start = minuteWindow(now);
  const { rows } = await q.query<{ count: number }>(
    `INSERT INTO rate_limit_windows AS w (bucket, window_start, count) VALUES ($1, $2, 1)
     ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < $3::int
     RETURNING w.count`,
    [bucket, start, cap],
  );
  return {
    taken: rows.length === 1,
    count: rows[0]?.count ?? cap,
    reset: new Date(start.getTime() + MINUTE),
  };
}

/** Gives back a slot takeMinuteSlot took (the action it was taken for did not happen). */
export async function returnMinuteSlot(q: Queryable, bucket: string, now: Date): Promise<void> {
  await q.query(
    'UPDATE rate_limit_windows SET count = count - 1 WHERE bucket = $1 AND window_start = $2 AND count > 0',
    [bucket, minuteWindow(now)],
  );
}
