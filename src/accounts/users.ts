import { DatabaseError, type Queryable } from '../db/types.ts';
import { AppError, badRequest, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.ts';
import type { UserRole } from './roles.ts';

export type { UserRole } from './roles.ts';

/** Deliberately loose: one @, no spaces, a dot in the domain. Deliverability is not ours to judge. */
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const EMAIL_MAX_LENGTH = 254;

/** E-mails are stored trimmed and lower-cased; the unique index is on lower(email) as well. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export function checkEmail(email: string, field = 'email'): string {
  const e = normalizeEmail(email);
  if (!EMAIL_RE.test(e) || e.length > EMAIL_MAX_LENGTH) {
    throw badRequest(`Field "${field}" must be an e-mail address such as name@example.com.`, field);
  }
  return e;
}

export function checkPassword(password: string, field = 'password'): void {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw badRequest(
      `Field "${field}" must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long.`,
      field,
    );
  }
}

const emailTaken = () =>
  new AppError('CONFLICT', 'A user with this e-mail already exists; choose another e-mail address.');

export const isUniqueViolation = (err: unknown): boolean =>
  err instanceof DatabaseError && (err.cause as { code?: string } | undefined)?.code === '23505';

/**
 * Creates a user of an existing organization, an admin unless told (roles.ts). E-mails are unique
 * across the whole service (case-insensitively): a second user with the same e-mail answers 409 CONFLICT.
 */
export async function createUser(
  tx: Queryable,
  u: {
    organizationId: string;
    email: string;
    password: string;
    role?: UserRole;
    name?: string | null;
    now: Date;
  },
): Promise<{ user_id: string }> {
  const email = checkEmail(u.email);
  checkPassword(u.password);
  const org = await tx.query('SELECT 1 FROM organizations WHERE id = $1', [u.organizationId]);
  if (org.rowCount === 0) throw notFound(`No organization ${u.organizationId}.`);
  const taken = await tx.query('SELECT 1 FROM users WHERE lower(email) = $1', [email]);
  if (taken.rowCount > 0) throw emailTaken();
  const id = newId();
  const passwordHash = await hashPassword(u.password);
  try {
    await tx.query(
      `INSERT INTO users (id, organization_id, email, password_hash, role, name, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [id, u.organizationId, email, passwordHash, u.role ?? 'admin', u.name ?? null, u.now],
    );
  } catch (err) {
    // Two requests racing for the same e-mail: the unique index decides.
    if (isUniqueViolation(err)) throw emailTaken();
    throw err;
  }
  return { user_id: id };
}

export interface UserSummary {
  user_id: string;
  email: string;
  role: UserRole;
  created_at: string;
}

/** Every user of the organization (removed members not), owners first, then oldest first (never a password hash). */
export async function listUsers(q: Queryable, organizationId: string): Promise<UserSummary[]> {
  const { rows } = await q.query<Omit<UserSummary, 'created_at'> & { created_at: Date }>(
    `SELECT id AS user_id, email, role, created_at FROM users WHERE organization_id = $1 AND removed_at IS NULL
      ORDER BY (role = 'owner') DESC, created_at, id`,
    [organizationId],
  );
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
}

/**
 * The user with this e-mail (e-mails are unique across the service, compared case-insensitively), in
 * a list of zero or one: the operator's look-up (`GET /admin/v1/users?email=`). 400 for a value that
 * is not an e-mail address.
 */
export async function findUsersByEmail(
  q: Queryable,
  email: string,
): Promise<(UserSummary & { organization_id: string })[]> {
  const e = checkEmail(email);
  const { rows } = await q.query<
    Omit<UserSummary, 'created_at'> & { organization_id: string; created_at: Date }
  >(
    'SELECT id AS user_id, organization_id, email, role, created_at FROM users WHERE lower(email) = $1 AND removed_at IS NULL',
    [e],
  );
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
}

/** The organization's owner (the first one when there are several), or null. */
export async function findOwner(q: Queryable, organizationId: string): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM users WHERE organization_id = $1 AND role = 'owner' ORDER BY created_at, id LIMIT 1`,
    [organizationId],
  );
  return rows[0]?.id ?? null;
}

export async function userBelongsTo(q: Queryable, userId: string, organizationId: string): Promise<boolean> {
  const { rowCount } = await q.query('SELECT 1 FROM users WHERE id = $1 AND organization_id = $2', [
    userId,
    organizationId,
  ]);
  return rowCount > 0;
}

/**
 * Gives a user a new console password (the operator's reset: `PUT /admin/v1/users/{id}/password`)
 * and ends every console session the user has, so whoever held the old password is signed out.
 * Answers false when there is no such user.
 */
export async function setUserPassword(
  tx: Queryable,
  u: { userId: string; password: string },
): Promise<{ found: boolean; sessionsEnded: number }> {
  checkPassword(u.password);
  const passwordHash = await hashPassword(u.password);
  const updated = await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [
    u.userId,
    passwordHash,
  ]);
  if (updated.rowCount === 0) return { found: false, sessionsEnded: 0 };
  const ended = await tx.query('DELETE FROM sessions WHERE user_id = $1', [u.userId]);
  return { found: true, sessionsEnded: ended.rowCount };
}
