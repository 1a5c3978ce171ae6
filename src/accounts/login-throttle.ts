import { isIPv6 } from 'node:net';
import { MINUTE } from '../clock.ts';
import type { Queryable } from '../db/types.ts';
import { AppError } from '../errors.ts';
import { sha256Hex } from '../keys.ts';

/**
 * Console login throttle, in one-minute windows of the shared rate_limit_windows table (every node
 * sees the same counts). Two caps, both checked before the password is:
 *
 * - per (client network, e-mail): 20 attempts a minute. Generous for a person mistyping, and still
 *   caps guessing at ~29k tries a day per pair; scrypt makes each try cost tens of milliseconds.
 * - per client network, across all e-mails: 100 attempts a minute, so one address cannot try one
 *   password against any number of accounts. An office behind one NAT address does not mistype
 *   100 passwords in a minute.
 *
 * Attempts are counted, not failures: an attempt takes a slot before its password is checked, so
 * concurrent attempts cannot all slip past the cap (the slot is taken and the cap decided in one
 * statement). A successful login gives its slot back: it resets the pair's count and returns its
 * one slot to the network's count. A refused attempt (429) takes no slot of the network's count.
 *
 * The client network is the IPv4 address, or the /64 of an IPv6 address (one host usually holds a
 * whole /64). The e-mail is hashed: the bucket name holds no address.
 */
export const LOGIN_ATTEMPTS_PER_EMAIL = 20;
export const LOGIN_ATTEMPTS_PER_ADDRESS = 100;
export const LOGIN_WINDOW_MS = MINUTE;

/** The network a client address is counted under: IPv4 as is, IPv6 as its /64. */
export function clientNetwork(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1] as string;
  const bare = ip.split('%')[0] as string;
  if (!isIPv6(bare)) return ip;
  const [head = '', tail] = bare.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const zeros = Array.from({ length: 8 - left.length - right.length }, () => '0');
  // An embedded IPv4 tail (…:1.2.3.4) lies in the last 64 bits, which are dropped anyway.
  const prefix = [...left, ...zeros, ...right].slice(0, 4);
  return `${prefix.map((g) => Number.parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/** What a throttle counts: its buckets' name, its two caps a minute, and its name in the 429 message. */
export interface ThrottleKind {
  bucket: string;
  perEmail: number;
  perNetwork: number;
  what: string;
}

export const SIGN_IN: ThrottleKind = {
  bucket: 'consolelogin',
  perEmail: LOGIN_ATTEMPTS_PER_EMAIL,
  perNetwork: LOGIN_ATTEMPTS_PER_ADDRESS,
  what: 'login attempts',
};

export interface LoginSlot {
  pairBucket: string;
  networkBucket: string;
  windowStart: Date;
}

const windowStart = (now: Date) => new Date(Math.floor(now.getTime() / LOGIN_WINDOW_MS) * LOGIN_WINDOW_MS);

/**
 * One statement takes a slot and decides: +1 on the pair's bucket unless it is at its cap, then
 * +1 on the network's bucket unless that is at its cap (only when the pair had room). Each upsert
 * locks its row, so concurrent attempts queue on it and see each other's counts: exactly cap
 * attempts get through. When the network refuses after the pair took a slot, that slot stays
 * taken; it cannot matter, as the network refuses that pair's attempts for the rest of the same
 * minute (only a success from the same network could free one network slot).
 */
const TAKE_SLOT = `
WITH pair AS (
  INSERT INTO rate_limit_windows AS w (bucket, window_start, count) VALUES ($1::text, $3::timestamptz, 1)
  ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < $4::int
  RETURNING w.count
), network AS (
  INSERT INTO rate_limit_windows AS w (bucket, window_start, count)
  SELECT $2::text, $3::timestamptz, 1 FROM pair
  ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < $5::int
  RETURNING w.count
)
SELECT EXISTS (SELECT 1 FROM pair) AS pair_ok, EXISTS (SELECT 1 FROM network) AS network_ok`;

/**
 * Takes a login slot, or throws 429 RATE_LIMITED with Retry-After (seconds until the minute ends)
 * naming the cap that refused. Call before the password is checked.
 */
export async function takeLoginSlot(
  q: Queryable,
  ip: string,
  email: string,
  now: Date,
  kind: ThrottleKind = SIGN_IN,
): Promise<LoginSlot> {
  const network = clientNetwork(ip);
  const slot: LoginSlot = {
    pairBucket: `${kind.bucket}:${sha256Hex(`${network}\n${email.trim().toLowerCase()}`)}`,
    networkBucket: `${kind.bucket}net:${network}`,
    windowStart: windowStart(now),
  };
  const { rows } = await q.query<{ pair_ok: boolean; network_ok: boolean }>(
    TAKE_SLOT,
    [slot.pairBucket, slot.networkBucket, slot.windowStart, kind.perEmail, kind.perNetwork],
    { name: 'console_login_slot_v1' },
  );
  const r = rows[0];
  if (r?.pair_ok && r.network_ok) return slot;
  const retryAfter = Math.max(
    1,
    Math.ceil((slot.windowStart.getTime() + LOGIN_WINDOW_MS - now.getTime()) / 1000),
  );
  const which = r?.pair_ok
    ? `from your address (at most ${kind.perNetwork} a minute)`
    : `for this e-mail from your address (at most ${kind.perEmail} a minute)`;
  throw new AppError('RATE_LIMITED', `Too many ${kind.what} ${which}; retry in ${retryAfter} seconds.`, {
    retryAfterSeconds: retryAfter,
  });
}

/** After a successful login: the pair's count starts again, and the network gets its slot back. */
export async function releaseLoginSlot(q: Queryable, slot: LoginSlot): Promise<void> {
  await q.query(
    `WITH reset AS (
       DELETE FROM rate_limit_windows WHERE bucket = $1::text AND window_start = $3::timestamptz
     )
     UPDATE rate_limit_windows SET count = count - 1
      WHERE bucket = $2::text AND window_start = $3::timestamptz AND count > 0`,
    [slot.pairBucket, slot.networkBucket, slot.windowStart],
    { name: 'console_login_release_v1' },
  );
}
