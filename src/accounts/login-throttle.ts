import { MINUTE } from '../clock.ts';
import type { Queryable } from '../db/types.ts';
import { AppError } from '../errors.ts';
import { sha256Hex } from '../keys.ts';

/**
 * Failed console logins are counted per (client address, e-mail) in one-minute windows of the
 * shared rate_limit_windows table, so every API node sees the same count. 20 failures a minute is
 * generous for a person mistyping and still caps guessing at ~29k tries a day per pair; scrypt
 * makes each try cost tens of milliseconds anyway. The e-mail is hashed: the bucket name holds no
 * address.
 */
export const LOGIN_FAILURES_PER_WINDOW = 20;
export const LOGIN_WINDOW_MS = MINUTE;

const bucketFor = (ip: string, email: string) =>
  `consolelogin:${sha256Hex(`${ip}\n${email.trim().toLowerCase()}`)}`;
const windowStart = (now: Date) => new Date(Math.floor(now.getTime() / LOGIN_WINDOW_MS) * LOGIN_WINDOW_MS);

/** Throws 429 RATE_LIMITED with Retry-After when the pair has used up its failures this window. */
export async function checkLoginThrottle(q: Queryable, ip: string, email: string, now: Date): Promise<void> {
  const start = windowStart(now);
  const { rows } = await q.query<{ count: number }>(
    'SELECT count FROM rate_limit_windows WHERE bucket = $1 AND window_start = $2',
    [bucketFor(ip, email), start],
  );
  if ((rows[0]?.count ?? 0) < LOGIN_FAILURES_PER_WINDOW) return;
  const retryAfter = Math.max(1, Math.ceil((start.getTime() + LOGIN_WINDOW_MS - now.getTime()) / 1000));
  throw new AppError(
    'RATE_LIMITED',
    `Too many failed logins for this e-mail; retry in ${retryAfter} seconds.`,
    {
      retryAfterSeconds: retryAfter,
    },
  );
}

export async function recordLoginFailure(q: Queryable, ip: string, email: string, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO rate_limit_windows (bucket, window_start, count) VALUES ($1, $2, 1)
     ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1`,
    [bucketFor(ip, email), windowStart(now)],
  );
}
