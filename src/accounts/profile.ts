import type { Db, Queryable } from '../db/types.ts';
import { normalizePhone } from '../domain/phone.ts';
import type { TenantScope } from '../domain/tenant.ts';
import { AppError, badRequest, notFound } from '../errors.ts';
import { releaseLoginSlot, type ThrottleKind, takeLoginSlot } from './login-throttle.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import type { UserRole } from './roles.ts';
import { checkName } from './team.ts';
import { checkTimeZone } from './time-zones.ts';
import { checkPassword } from './users.ts';

/**
 * A user's own profile (/app/settings/profile): their name, the phone click-to-call rings first
 * (any spelling, read in the organization's country, stored E.164), their time zone (empty = the
 * organization's), and their password (the current one first).
 */
export interface Profile {
  email: string;
  name: string | null;
  role: UserRole;
  phone_e164: string | null;
  time_zone: string | null;
  /** the organization's zone, which applies while time_zone is null */
  organization_time_zone: string;
  country: string | null;
}

export async function getProfile(q: Queryable, scope: TenantScope, userId: string): Promise<Profile> {
  const { rows } = await q.query<Profile>(
    `SELECT u.email, u.name, u.role, u.phone_e164, u.time_zone, o.time_zone AS organization_time_zone, o.country
       FROM users u JOIN organizations o ON o.id = u.organization_id
      WHERE u.id = $1 AND u.organization_id = $2 AND u.removed_at IS NULL`,
    [userId, scope.organizationId],
  );
  if (!rows[0]) throw notFound('Your account no longer exists.');
  return rows[0];
}

/** Saves name, phone and time zone ('' = none: no phone, the organization's zone). 400 naming the field at fault. */
export async function updateProfile(
  q: Queryable,
  scope: TenantScope,
  userId: string,
  p: { name: string; phone: string; timeZone: string },
): Promise<void> {
  const name = checkName(p.name);
  const zone = p.timeZone.trim() === '' ? null : checkTimeZone(p.timeZone);
  let phone: string | null = null;
  if (p.phone.trim() !== '') {
    const { rows } = await q.query<{ country: string | null }>(
      'SELECT country FROM organizations WHERE id = $1',
      [scope.organizationId],
    );
    const parsed = normalizePhone(p.phone, rows[0]?.country ?? null);
    if (!parsed) {
      throw badRequest(
        'Enter a phone number that can be dialled, such as +1 415 555 2671 (with the country code).',
        'phone',
      );
    }
    phone = parsed.e164;
  }
  const r = await q.query(
    `UPDATE users SET name = $3, phone_e164 = $4, time_zone = $5
      WHERE id = $1 AND organization_id = $2 AND removed_at IS NULL`,
    [userId, scope.organizationId, name, phone, zone],
  );
  if (r.rowCount === 0) throw notFound('Your account no longer exists.');
}

/** Checking the current password is throttled like sign-in (a stolen session must not guess it). */
const PASSWORD_CHANGE: ThrottleKind = {
  bucket: 'pwchange',
  perEmail: 5,
  perNetwork: 20,
  what: 'password change attempts',
};

/**
 * Changes the signed-in user's password after checking the current one (400 naming
 * `current_password` when wrong, `new_password` outside the policy). Every other session of the
 * user ends; the one that asked stays signed in.
 */
export async function changePassword(
  db: Db,
  c: { userId: string; sessionId: string; ip: string; current: string; next: string; now: Date },
): Promise<{ sessionsEnded: number }> {
  const { rows } = await db.query<{ email: string; password_hash: string }>(
    'SELECT email, password_hash FROM users WHERE id = $1 AND removed_at IS NULL',
    [c.userId],
  );
  const user = rows[0];
  if (!user) throw notFound('Your account no longer exists.');
  const slot = await takeLoginSlot(db, c.ip, user.email, c.now, PASSWORD_CHANGE);
  if (!(await verifyPassword(c.current, user.password_hash))) {
    throw new AppError('BAD_REQUEST', 'Your current password is not this one; type it again.', {
      param: 'current_password',
    });
  }
  await releaseLoginSlot(db, slot);
  checkPassword(c.next, 'new_password');
  const hash = await hashPassword(c.next);
  return db.transaction(async (tx) => {
    await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [c.userId, hash]);
    const ended = await tx.query('DELETE FROM sessions WHERE user_id = $1 AND id <> $2', [
      c.userId,
      c.sessionId,
    ]);
    return { sessionsEnded: ended.rowCount };
  });
}
