import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { can, ROLE_WORDS, ROLES, type UserRole } from '../../../../accounts/roles.ts';
import { stashSecret, takeSecret } from '../../../../accounts/secret-reveals.ts';
import {
  type Actor,
  changeRole,
  INVITATION_VALID_MS,
  inviteMember,
  listMembers,
  listOpenInvitations,
  type Member,
  removeMember,
  revokeInvitation,
} from '../../../../accounts/team.ts';
import { DAY } from '../../../../clock.ts';
import type { Deps } from '../../../../deps.ts';
import { notFound } from '../../../../errors.ts';
import { isUuid } from '../../../../ids.ts';
import { createMailer } from '../../../../mail/mailer.ts';
import { ErrorText, type FieldError, fieldAttrs, fieldError } from '../kit/field-errors.ts';
import { field, formOf } from '../kit/form.ts';
import { type PageUser, requireCan, scopeOf, seeOther } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { route } from '../kit/paths.ts';
import { CopyButton, CsrfField, PostButton, Time } from '../kit/ui.ts';

/**
 * /app/settings/team (owners and admins; accounts/roles.ts `manage_team`): the members with their
 * roles, a role change per member, removal after a confirmation page (their sessions end at once),
 * the open invitations (withdraw), and the invite form (e-mail and role; the link goes out by e-mail
 * through SMTP_URL, or is kept in email_outbox and logged). accounts/team.ts holds the rules.
 *
 * Without SMTP_URL nobody receives the e-mail, so the sender is shown the link once, to pass on
 * themselves: kept for the redirect's page like a new API key (accounts/secret-reveals.ts), never
 * in the address.
 */
export const TEAM_PAGE_PATH = '/app/settings/team';

const DONE: Record<string, string> = {
  invited: `Invitation sent. The link in the e-mail works once, for ${INVITATION_VALID_MS / DAY} days.`,
  role_changed: 'Role changed. It applies from the member’s next click.',
  removed: 'Member removed: they were signed out everywhere and can no longer sign in.',
  invitation_withdrawn: 'Invitation withdrawn: its link no longer works.',
  kept: 'Invitation made. No mail server is set up (SMTP_URL), so the e-mail was not sent: pass the link below on yourself.',
};

/** The invitation link shown once to its sender when no e-mail goes out. */
function KeptLink({ link }: { link: string }): VNode {
  return html`<section class="secret-once" aria-labelledby="kept-link-title">
    <h2 id="kept-link-title">The invitation link</h2>
    <p><strong>Send it to the person you invited: it is shown only this once.</strong> It works once, for 7 days.</p>
    <p><code id="invitation-link" class="secret">${link}</code> <${CopyButton} target="invitation-link" label="Copy link" /></p>
  </section>`;
}

const actorOf = (user: PageUser): Actor => ({ userId: user.session.userId, role: user.role });

/** The roles this user may hand out (owners only by an owner). */
const grantable = (user: PageUser): UserRole[] =>
  ROLES.filter((r) => r !== 'owner' || can(user, 'manage_owners'));

function RoleForm({ user, m }: { user: PageUser; m: Member }): VNode {
  const who = m.name ?? m.email;
  if (m.role === 'owner' && !can(user, 'manage_owners'))
    return html`<span class="muted">Only an owner can change it</span>`;
  return html`<form method="post" action=${`${TEAM_PAGE_PATH}/members/${m.user_id}/role`} class="inline">
    <${CsrfField} user=${user} />
    <label class="sr-only" for=${`role-${m.user_id}`}>Role of ${who}</label>
    <select id=${`role-${m.user_id}`} name="role">
      ${grantable(user).map((r) => html`<option value=${r} selected=${r === m.role}>${ROLE_WORDS[r].label}</option>`)}
    </select>
    <button type="submit" aria-label=${`Change the role of ${who}`}>Change</button>
  </form>`;
}

function MemberList({ user, members }: { user: PageUser; members: Member[] }): VNode {
  return html`<table class="members">
    <thead>
      <tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Member since</th>
        <th scope="col">Change role</th><th scope="col"><span class="sr-only">Remove</span></th></tr>
    </thead>
    <tbody>
      ${members.map((m) => {
        const you = m.user_id === user.session.userId;
        const who = m.name ?? m.email;
        return html`<tr data-user-id=${m.user_id}>
          <td data-label="Name">${m.name ?? html`<span class="muted">(no name yet)</span>`}${you ? ' (you)' : ''}</td>
          <td data-label="E-mail">${m.email}</td>
          <td data-label="Role">${ROLE_WORDS[m.role].label}</td>
          <td data-label="Member since"><${Time} at=${m.created_at} /></td>
          <td data-label="Change role"><${RoleForm} user=${user} m=${m} /></td>
          <td>
            ${
              m.role === 'owner' && !can(user, 'manage_owners')
                ? ''
                : html`<a href=${`${TEAM_PAGE_PATH}/members/${m.user_id}/remove`} aria-label=${`Remove ${who}`}>Remove…</a>`
            }
          </td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

interface InviteValues {
  email: string;
  role: string;
}

function InviteForm({ user, v, err }: { user: PageUser; v: InviteValues; err: FieldError | null }): VNode {
  return html`<form method="post" action=${`${TEAM_PAGE_PATH}/invitations`} class="stack" id="invite" novalidate>
    <${CsrfField} user=${user} />
    <div>
      <label for="email">E-mail</label>
      <input type="email" id="email" name="email" autocomplete="off" required maxlength="254" value=${v.email}
        ...${fieldAttrs('email', err, 'email-hint')} />
      <p class="muted" id="email-hint">We send this address a link to join (it works once, for 7 days).</p>
      <${ErrorText} name="email" err=${err} />
    </div>
    <fieldset ...${fieldAttrs('role', err)}>
      <legend>Role</legend>
      ${grantable(user).map(
        (r) => html`<label class="check">
          <input type="radio" name="role" value=${r} checked=${v.role === r} />
          ${ROLE_WORDS[r].label} — ${ROLE_WORDS[r].text}
        </label>`,
      )}
      <${ErrorText} name="role" err=${err} />
    </fieldset>
    <div><button type="submit">Send invitation</button></div>
  </form>`;
}

async function render(
  deps: Deps,
  reply: FastifyReply,
  user: PageUser,
  o: {
    notice?: Notice | null;
    status?: number;
    invite?: InviteValues;
    err?: FieldError | null;
    keptLink?: string | null;
  } = {},
): Promise<FastifyReply> {
  const scope = scopeOf(user);
  const [members, invitations] = await Promise.all([
    listMembers(deps.db, scope),
    listOpenInvitations(deps.db, scope, deps.clock.now()),
  ]);
  return renderPage(reply, {
    title: 'Team',
    user,
    nav: 'team',
    notice: o.notice ?? null,
    status: o.status,
    body: html`
      ${o.keptLink && html`<${KeptLink} link=${o.keptLink} />`}
      <section aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <p>Owners can do everything; admins manage integrations, settings and the team; agents work calls and
          contacts and keep their own profile. A change applies from the member’s next click.</p>
        <${MemberList} user=${user} members=${members} />
      </section>
      <section aria-labelledby="invitations-title">
        <h2 id="invitations-title">Open invitations</h2>
        ${
          invitations.length === 0
            ? html`<p class="muted">No open invitations.</p>`
            : html`<table class="invitations">
                <thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Sent</th>
                  <th scope="col">Link valid until</th><th scope="col"><span class="sr-only">Withdraw</span></th></tr></thead>
                <tbody>
                  ${invitations.map(
                    (i) => html`<tr>
                      <td data-label="E-mail">${i.email}</td>
                      <td data-label="Role">${ROLE_WORDS[i.role].label}</td>
                      <td data-label="Sent"><${Time} at=${i.created_at} /></td>
                      <td data-label="Link valid until"><${Time} at=${i.expires_at} /></td>
                      <td>${
                        i.role === 'owner' && !can(user, 'manage_owners')
                          ? ''
                          : html`<${PostButton} user=${user} action=${`${TEAM_PAGE_PATH}/invitations/${i.invitation_id}/revoke`}
                              label="Withdraw" />`
                      }</td>
                    </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </section>
      <section aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <${InviteForm} user=${user} v=${o.invite ?? { email: '', role: 'agent' }} err=${o.err ?? null} />
      </section>`,
  });
}

type IdParams = { Params: { id: string } };

export function teamPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    // One mailer for the listener's life: the invitation goes out right after the commit.
    const mailer = createMailer(deps);
    app.addHook('onClose', async () => mailer.close());

    app.get<{ Querystring: { reveal?: unknown } }>(route(TEAM_PAGE_PATH), async (req, reply) => {
      const user = requireCan(req, 'manage_team');
      const reveal = req.query.reveal;
      const keptLink =
        typeof reveal === 'string'
          ? await takeSecret(deps.db, deps.keys, {
              sessionId: user.session.sessionId,
              kind: 'invitation_link',
              id: reveal,
              now: deps.clock.now(),
            })
          : null;
      return render(deps, reply, user, { notice: doneNotice(req, DONE), keptLink });
    });

    app.post(route(`${TEAM_PAGE_PATH}/invitations`), async (req, reply) => {
      const user = requireCan(req, 'manage_team');
      const form = formOf(req.body);
      const v: InviteValues = { email: (field(form, 'email') ?? '').trim(), role: field(form, 'role') ?? '' };
      let reveal: string | null = null;
      try {
        const { emailId, link } = await inviteMember(deps.db, {
          scope: scopeOf(user),
          actor: actorOf(user),
          email: v.email,
          role: v.role,
          baseUrl: deps.config.publicBaseUrl,
          now: deps.clock.now(),
        });
        mailer.dispatch(emailId).catch((err: Error) => {
          deps.log.warn({ emailId, err: err.message }, 'invitation e-mail not dispatched');
        });
        if (!deps.config.SMTP_URL) {
          reveal = await stashSecret(deps.db, deps.keys, {
            sessionId: user.session.sessionId,
            kind: 'invitation_link',
            secret: link,
            now: deps.clock.now(),
          });
        }
      } catch (err) {
        const e = fieldError(err);
        // A 409 (the address has an account) is about the e-mail field too.
        const marked = e.err ?? (e.status === 409 ? { field: 'email', text: e.notice.text } : null);
        if (marked?.field === 'email' && e.status === 400) {
          marked.text = 'Enter an e-mail address such as name@example.com.';
          e.notice.text = marked.text;
        }
        return render(deps, reply, user, { status: e.status, notice: e.notice, err: marked, invite: v });
      }
      return seeOther(
        reply,
        reveal
          ? `${TEAM_PAGE_PATH}?done=kept&reveal=${reveal}#kept-link-title`
          : `${TEAM_PAGE_PATH}?done=invited`,
      );
    });

    app.post<IdParams>(route(`${TEAM_PAGE_PATH}/invitations/:id/revoke`), async (req, reply) => {
      const user = requireCan(req, 'manage_team');
      if (!isUuid(req.params.id)) throw notFound('No open invitation with this id in your organization.');
      await revokeInvitation(deps.db, {
        scope: scopeOf(user),
        actor: actorOf(user),
        invitationId: req.params.id,
        now: deps.clock.now(),
      });
      return seeOther(reply, `${TEAM_PAGE_PATH}?done=invitation_withdrawn`);
    });

    app.post<IdParams>(route(`${TEAM_PAGE_PATH}/members/:id/role`), async (req, reply) => {
      const user = requireCan(req, 'manage_team');
      if (!isUuid(req.params.id)) throw notFound('No member with this id in your organization.');
      try {
        await changeRole(deps.db, {
          scope: scopeOf(user),
          actor: actorOf(user),
          userId: req.params.id,
          role: field(formOf(req.body), 'role') ?? '',
        });
      } catch (err) {
        const e = fieldError(err);
        if (e.status === 403 || e.status === 404) throw err;
        return render(deps, reply, user, { status: e.status, notice: e.notice });
      }
      return seeOther(reply, `${TEAM_PAGE_PATH}?done=role_changed`);
    });

    app.get<IdParams>(route(`${TEAM_PAGE_PATH}/members/:id/remove`), async (req, reply) => {
      const user = requireCan(req, 'manage_team');
      const members = await listMembers(deps.db, scopeOf(user));
      const m = members.find((x) => x.user_id === req.params.id);
      if (!m) throw notFound('No member with this id in your organization.');
      const who = m.name ?? m.email;
      return renderPage(reply, {
        title: 'Remove a member',
        user,
        nav: 'team',
        body: html`<section class="danger-zone">
          <h2>Remove ${who}?</h2>
          <p>${who} (${m.email}, ${ROLE_WORDS[m.role].label.toLowerCase()}) is signed out everywhere at once and can no
            longer sign in. The calls they took and the API keys they created stay; revoke a key on the integrations page
            if they may have kept a copy.</p>
          <form method="post" action=${`${TEAM_PAGE_PATH}/members/${m.user_id}/remove`} class="actions">
            <${CsrfField} user=${user} />
            <button type="submit" class="danger">Remove ${who}</button>
            <a href=${TEAM_PAGE_PATH}>Cancel</a>
          </form>
        </section>`,
      });
    });

    app.post<IdParams>(route(`${TEAM_PAGE_PATH}/members/:id/remove`), async (req, reply) => {
      const user = requireCan(req, 'manage_team');
      if (!isUuid(req.params.id)) throw notFound('No member with this id in your organization.');
      try {
        await removeMember(deps.db, {
          scope: scopeOf(user),
          actor: actorOf(user),
          userId: req.params.id,
          now: deps.clock.now(),
        });
      } catch (err) {
        const e = fieldError(err);
        if (e.status === 403 || e.status === 404) throw err;
        return render(deps, reply, user, { status: e.status, notice: e.notice });
      }
      // Removing oneself ends this session too: the next page is the sign-in page.
      return seeOther(
        reply,
        req.params.id === user.session.userId ? '/app/login' : `${TEAM_PAGE_PATH}?done=removed`,
      );
    });
  };
}
