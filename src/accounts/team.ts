import { randomBytes } from 'node:crypto';
import { DAY } from '../clock.ts';
import type { Db, Queryable } from '../db/types.ts';
import type { TenantScope } from '../domain/tenant.ts';
import { AppError, badRequest, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { sha256Hex } from '../keys.ts';
import { queueEmail } from '../mail/mailer.ts';
import { type Capability, can, isRole, refusal, type UserRole } from './roles.ts';
import { checkEmail, checkPassword, createUser } from './users.ts';

/**
 * The team of an organization (/app/settings/team): its members, invitations by e-mail, role
 * changes and removals. Every command takes the acting user and checks their role here
 * (roles.ts `can`), whatever the page showed.
 *
 * - An invitation link carries 32 random bytes (only their SHA-256 is stored), works once, for
 *   INVITATION_VALID_MS; a new invitation to the same address replaces the open one.
 * - Accepting creates the user with the invitation's role, the name and password typed on the page.
 * - Removing a member ends their sessions at once (the rows are deleted in the same transaction),
 *   spends their reset links, frees their e-mail (the row stays, renamed, so the calls they took
 *   and the keys they made still name someone) and leaves a password nobody can type.
 * - The last owner can be neither removed nor made an admin or agent: 409 CONFLICT, in words.
 */
export const INVITATION_VALID_MS = 7 * DAY;
export const NAME_MAX_LENGTH = 100;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Who acts: the signed-in user (their organization is the scope). */
export interface Actor {
  userId: string;
  role: UserRole;
}

export interface Member {
  user_id: string;
  email: string;
  name: string | null;
  role: UserRole;
  created_at: Date;
}

export interface OpenInvitation {
  invitation_id: string;
  email: string;
  role: UserRole;
  created_at: Date;
  expires_at: Date;
}

function demand(actor: Actor, capability: Capability): void {
  if (!can(actor, capability)) throw new AppError('FORBIDDEN', refusal(actor.role, capability));
}

function checkRole(role: string, field = 'role'): UserRole {
  if (!isRole(role)) throw badRequest('Choose a role: owner, admin or agent.', field);
  return role;
}

/** A display name: trimmed, 1 to NAME_MAX_LENGTH characters. */
export function checkName(name: string, field = 'name'): string {
  const n = name.trim();
  if (n.length === 0 || n.length > NAME_MAX_LENGTH) {
    throw badRequest(`Enter a name of 1 to ${NAME_MAX_LENGTH} characters.`, field);
  }
  return n;
}

/** The organization's members (removed ones not), owners first, then admins, then agents, oldest first. */
export async function listMembers(q: Queryable, scope: TenantScope): Promise<Member[]> {
  const { rows } = await q.query<Member>(
    `SELECT id AS user_id, email, name, role, created_at FROM users
      WHERE organization_id = $1 AND removed_at IS NULL
      ORDER BY array_position(ARRAY['owner','admin','agent'], role), created_at, id`,
    [scope.organizationId],
  );
  return rows;
}

/** Invitations not yet accepted, revoked or expired, newest first. */
export async function listOpenInvitations(
  q: Queryable,
  scope: TenantScope,
  now: Date,
): Promise<OpenInvitation[]> {
  const { rows } = await q.query<OpenInvitation>(
    `SELECT id AS invitation_id, email, role, created_at, expires_at FROM invitations
      WHERE organization_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2
      ORDER BY created_at DESC, id`,
    [scope.organizationId, now],
  );
  return rows;
}

/**
 * Invites `email` with `role` and queues the e-mail with the link `${baseUrl}/app/invitation?token=…`
 * (dispatch it after the commit: emailId). 409 when the address already has an account; 403 when the
 * actor may not manage the team, or invites an owner without being one.
 */
export async function inviteMember(
  db: Db,
  i: { scope: TenantScope; actor: Actor; email: string; role: string; baseUrl: string; now: Date },
): Promise<{ invitationId: string; emailId: string; link: string }> {
  demand(i.actor, 'manage_team');
  const email = checkEmail(i.email);
  const role = checkRole(i.role);
  if (role === 'owner') demand(i.actor, 'manage_owners');
  return db.transaction(async (tx) => {
    const taken = await tx.query('SELECT 1 FROM users WHERE lower(email) = $1', [email]);
    if (taken.rowCount > 0) {
      throw new AppError('CONFLICT', `${email} already has a Call Capture account; invite another address.`);
    }
    await tx.query(
      `UPDATE invitations SET revoked_at = $3
        WHERE organization_id = $1 AND lower(email) = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
      [i.scope.organizationId, email, i.now],
    );
    const token = randomBytes(32).toString('base64url');
    const id = newId();
    const { rows } = await tx.query<{ org_name: string; inviter: string }>(
      `WITH ins AS (
         INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       )
       SELECT o.name AS org_name, coalesce(u.name, u.email) AS inviter
         FROM organizations o JOIN users u ON u.id = $6 AND u.organization_id = o.id
        WHERE o.id = $2`,
      [
        id,
        i.scope.organizationId,
        email,
        role,
        sha256Hex(token),
        i.actor.userId,
        i.now,
        new Date(i.now.getTime() + INVITATION_VALID_MS),
      ],
    );
    const names = rows[0];
    if (!names) throw notFound('Your organization no longer exists.');
    const link = `${i.baseUrl}/app/invitation?token=${token}`;
    const emailId = await queueEmail(
      tx,
      {
        organizationId: i.scope.organizationId,
        to: email,
        subject: `${names.inviter} invited you to ${names.org_name} on Call Capture`,
        body: [
          `${names.inviter} invited you to join ${names.org_name} on Call Capture as an ${role}.`,
          '',
          'Choose your name and password here (the link works once, for 7 days):',
          link,
          '',
          'If you did not expect this, ignore this e-mail: nothing happens without you.',
        ].join('\n'),
      },
      i.now,
    );
    return { invitationId: id, emailId, link };
  });
}

/** A live invitation (shape, not used, not revoked, not expired) with what its page shows, or null. */
export async function readInvitation(
  q: Queryable,
  token: string,
  now: Date,
): Promise<{ email: string; role: UserRole; organizationName: string } | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const { rows } = await q.query<{ email: string; role: UserRole; org_name: string }>(
    `SELECT i.email, i.role, o.name AS org_name FROM invitations i JOIN organizations o ON o.id = i.organization_id
      WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > $2`,
    [sha256Hex(token), now],
  );
  const r = rows[0];
  return r ? { email: r.email, role: r.role, organizationName: r.org_name } : null;
}

/**
 * Spends an invitation: creates its user with the name and password given (400 naming `name` or
 * `password` leaves the link live). A used, revoked, expired or unknown link: 400 with param `token`.
 */
export async function acceptInvitation(
  db: Db,
  a: { token: string; name: string; password: string; now: Date },
): Promise<{ userId: string; organizationId: string }> {
  const dead = () =>
    new AppError('BAD_REQUEST', 'This invitation has expired, was replaced or was already used.', {
      param: 'token',
    });
  if (!TOKEN_SHAPE.test(a.token)) throw dead();
  const name = checkName(a.name);
  checkPassword(a.password);
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string; organization_id: string; email: string; role: UserRole }>(
      `SELECT id, organization_id, email, role FROM invitations
        WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2
        FOR UPDATE`,
      [sha256Hex(a.token), a.now],
    );
    const inv = rows[0];
    if (!inv) throw dead();
    const user = await createUser(tx, {
      organizationId: inv.organization_id,
      email: inv.email,
      password: a.password,
      role: inv.role,
      name,
      now: a.now,
    });
    await tx.query('UPDATE invitations SET accepted_at = $2 WHERE id = $1', [inv.id, a.now]);
    return { userId: user.user_id, organizationId: inv.organization_id };
  });
}

/** Withdraws an open invitation of the organization: its link stops working. 404 when there is none. */
export async function revokeInvitation(
  db: Db,
  r: { scope: TenantScope; actor: Actor; invitationId: string; now: Date },
): Promise<void> {
  demand(r.actor, 'manage_team');
  const { rows } = await db.query<{ role: UserRole }>(
    `SELECT role FROM invitations WHERE id = $1 AND organization_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
    [r.invitationId, r.scope.organizationId],
  );
  if (!rows[0]) throw notFound('No open invitation with this id in your organization.');
  if (rows[0].role === 'owner') demand(r.actor, 'manage_owners');
  await db.query('UPDATE invitations SET revoked_at = $2 WHERE id = $1', [r.invitationId, r.now]);
}

/**
 * The member in the organization, locked for the change, with the organization's owners locked too
 * (two owners demoting each other at once: the second sees one owner left and is refused).
 */
async function lockMember(
  tx: Queryable,
  scope: TenantScope,
  userId: string,
): Promise<{ role: UserRole; email: string; owners: number }> {
  const { rows } = await tx.query<{ id: string; role: UserRole; email: string }>(
    `SELECT id, role, email FROM users
      WHERE organization_id = $1 AND removed_at IS NULL AND (id = $2 OR role = 'owner')
      ORDER BY id FOR UPDATE`,
    [scope.organizationId, userId],
  );
  const member = rows.find((r) => r.id === userId);
  if (!member) throw notFound('No member with this id in your organization.');
  return {
    role: member.role,
    email: member.email,
    owners: rows.filter((r) => r.role === 'owner').length,
  };
}

const lastOwner = (what: string) =>
  new AppError(
    'CONFLICT',
    `You cannot ${what} the last owner: make another member an owner first, then try again.`,
  );

/** Gives a member another role. 409 for the last owner's demotion; 403 where owners are concerned and the actor is none. */
export async function changeRole(
  db: Db,
  c: { scope: TenantScope; actor: Actor; userId: string; role: string },
): Promise<{ changed: boolean }> {
  demand(c.actor, 'manage_team');
  const role = checkRole(c.role);
  return db.transaction(async (tx) => {
    const m = await lockMember(tx, c.scope, c.userId);
    if (m.role === role) return { changed: false };
    if (m.role === 'owner' || role === 'owner') demand(c.actor, 'manage_owners');
    if (m.role === 'owner' && m.owners <= 1) throw lastOwner('demote');
    await tx.query('UPDATE users SET role = $2 WHERE id = $1', [c.userId, role]);
    return { changed: true };
  });
}

/**
 * Removes a member: their sessions end at once, their reset links are spent, their e-mail is freed
 * and their password made unusable; the row stays (calls, keys and invitations still name it).
 * Answers how many sessions ended.
 */
export async function removeMember(
  db: Db,
  r: { scope: TenantScope; actor: Actor; userId: string; now: Date },
): Promise<{ sessionsEnded: number; email: string }> {
  demand(r.actor, 'manage_team');
  return db.transaction(async (tx) => {
    const m = await lockMember(tx, r.scope, r.userId);
    if (m.role === 'owner') demand(r.actor, 'manage_owners');
    if (m.role === 'owner' && m.owners <= 1) throw lastOwner('remove');
    await tx.query(
      `UPDATE users SET removed_at = $2, password_hash = '!removed', phone_e164 = NULL,
              email = email || ' (removed ' || left(id::text, 8) || ')'
        WHERE id = $1`,
      [r.userId, r.now],
    );
    await tx.query('DELETE FROM password_reset_tokens WHERE user_id = $1', [r.userId]);
    const ended = await tx.query('DELETE FROM sessions WHERE user_id = $1', [r.userId]);
    return { sessionsEnded: ended.rowCount, email: m.email };
  });
}
