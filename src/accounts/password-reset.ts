import { randomBytes } from 'node:crypto';
import { HOUR } from '../clock.ts';
import type { Db } from '../db/types.ts';
import { AppError } from '../errors.ts';
import { sha256Hex } from '../keys.ts';
import { queueEmail } from '../mail/mailer.ts';
import { type ThrottleKind, takeLoginSlot } from './login-throttle.ts';
import { normalizeEmail, setUserPassword } from './users.ts';

/**
 * Password reset by e-mail — the sign-in page's "Forgot password?" (pages/session/password-reset.ts).
 *
 * - Asking answers the same whether or not the address belongs to a user (the page says "if an
 *   account uses this address, we sent a link"), so the form cannot be used to find out who has an
 *   account. Only a known address gets a row and an e-mail.
 * - The link carries 32 random bytes; only their SHA-256 is stored. It is valid for one hour and
 *   works once: using it sets the new password, spends every other open link of that user, and ends
 *   all the user's sessions (whoever knew the old password is signed out).
 * - Asking is throttled like sign-in, with the same one-minute windows, but tighter caps: a reset
 *   link sends an e-mail, so 5 a minute per (network, address) and 20 per network.
 */
export const RESET_LINK_VALID_MS = HOUR;
export const PASSWORD_RESET: ThrottleKind = {
  bucket: 'pwreset',
  perEmail: 5,
  perNetwork: 20,
  what: 'password reset requests',
};
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface ResetRequest {
  /** the e-mail queued (null when the address has no account): dispatch it after the commit */
  emailId: string | null;
}

/**
 * Records a reset for the user with this e-mail, if any, and queues the e-mail with the link
 * `${baseUrl}/app/reset-password?token=…`. Throws 429 RATE_LIMITED (retryAfterSeconds) at a cap.
 */
export async function requestPasswordReset(
  db: Db,
  r: { ip: string; email: string; baseUrl: string; now: Date },
): Promise<ResetRequest> {
  await takeLoginSlot(db, r.ip, r.email, r.now, PASSWORD_RESET);
  const email = normalizeEmail(r.email);
  return db.transaction(async (tx) => {
    const token = randomBytes(32).toString('base64url');
    const { rows } = await tx.query<{ user_id: string; organization_id: string; email: string }>(
      `WITH u AS (SELECT id, organization_id, email FROM users WHERE lower(email) = $1)
       INSERT INTO password_reset_tokens (token_hash, user_id, created_at, expires_at)
       SELECT $2, u.id, $3, $4 FROM u
       RETURNING user_id, (SELECT organization_id FROM u), (SELECT email FROM u)`,
      [email, sha256Hex(token), r.now, new Date(r.now.getTime() + RESET_LINK_VALID_MS)],
    );
    const user = rows[0];
    if (!user) return { emailId: null };
    const link = `${r.baseUrl}/app/reset-password?token=${token}`;
    const emailId = await queueEmail(
      tx,
      {
        organizationId: user.organization_id,
        to: user.email,
        subject: 'Reset your Call Capture password',
        body: [
          'Someone (we hope you) asked to reset the password of your Call Capture account.',
          '',
          'Choose a new password here (the link works once, for one hour):',
          link,
          '',
          'If you did not ask for this, ignore this e-mail: your password stays as it is.',
        ].join('\n'),
      },
      r.now,
    );
    return { emailId };
  });
}

/** True when the token is a live reset link (shape, not used, not expired) — the form is shown. */
export async function resetLinkIsLive(db: Db, token: string, now: Date): Promise<boolean> {
  if (!TOKEN_SHAPE.test(token)) return false;
  const { rows } = await db.query(
    `SELECT 1 FROM password_reset_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2`,
    [sha256Hex(token), now],
  );
  return rows.length > 0;
}

/**
 * Spends a reset link and sets the user's new password (policy of checkPassword: a 400 BAD_REQUEST
 * naming `password` leaves the link live). A used, expired or unknown link throws 400 with the
 * code BAD_REQUEST and param `token`. Ends every session of the user.
 */
export async function resetPassword(
  db: Db,
  r: { token: string; password: string; now: Date },
): Promise<{ userId: string }> {
  const dead = () =>
    new AppError('BAD_REQUEST', 'This reset link has expired or was already used.', { param: 'token' });
  if (!TOKEN_SHAPE.test(r.token)) throw dead();
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ user_id: string }>(
      `SELECT user_id FROM password_reset_tokens
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
        FOR UPDATE`,
      [sha256Hex(r.token), r.now],
    );
    const link = rows[0];
    if (!link) throw dead();
    await setUserPassword(tx, { userId: link.user_id, password: r.password });
    // This link and every other open link of the user are spent.
    await tx.query('UPDATE password_reset_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [
      link.user_id,
      r.now,
    ]);
    return { userId: link.user_id };
  });
}
