import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ROLE_WORDS } from '../../../../accounts/roles.ts';
import { createSession, sessionCookie } from '../../../../accounts/sessions.ts';
import { acceptInvitation, readInvitation } from '../../../../accounts/team.ts';
import type { Deps } from '../../../../deps.ts';
import { AppError } from '../../../../errors.ts';
import { isSecureOrigin } from '../../app-api/session.ts';
import { ErrorText, type FieldError, fieldAttrs } from '../kit/field-errors.ts';
import { field, formOf } from '../kit/form.ts';
import { seeOther } from '../kit/guard.ts';
import { html } from '../kit/html.ts';
import { renderPage } from '../kit/layout.ts';

/**
 * The invitation link (no session needed): GET /app/invitation?token=… shows whom the link invites,
 * to which organization and as what, and asks for a name and a password; POST /app/invitation
 * creates the member (accounts/team.ts acceptInvitation), signs them in and goes to their profile
 * page, where they can add their phone. No CSRF token: there is no session to protect, and the post
 * needs the token from the e-mail.
 */
export const INVITATION_PATH = '/app/invitation';

interface Invite {
  email: string;
  role: keyof typeof ROLE_WORDS;
  organizationName: string;
}

function AcceptForm(p: { token: string; inv: Invite; name: string; err: FieldError | null }) {
  return html`<form method="post" action=${INVITATION_PATH} class="stack" novalidate>
    <p>You are invited to <strong>${p.inv.organizationName}</strong> as ${ROLE_WORDS[p.inv.role].label.toLowerCase()}${' '}
      (${ROLE_WORDS[p.inv.role].text}). You will sign in as <strong>${p.inv.email}</strong>.</p>
    <input type="hidden" name="token" value=${p.token} />
    <div>
      <label for="name">Your name</label>
      <input type="text" id="name" name="name" autocomplete="name" required maxlength="100" value=${p.name}
        ...${fieldAttrs('name', p.err)} />
      <${ErrorText} name="name" err=${p.err} />
    </div>
    <div>
      <label for="password">Choose a password</label>
      <input type="password" id="password" name="password" autocomplete="new-password" required minlength="8"
        ...${fieldAttrs('password', p.err, 'password-hint')} />
      <p class="muted" id="password-hint">8 to 256 characters.</p>
      <${ErrorText} name="password" err=${p.err} />
    </div>
    <div>
      <label for="confirm">Type it again</label>
      <input type="password" id="confirm" name="confirm" autocomplete="new-password" required
        ...${fieldAttrs('confirm', p.err)} />
      <${ErrorText} name="confirm" err=${p.err} />
    </div>
    <div><button type="submit">Join ${p.inv.organizationName}</button></div>
  </form>`;
}

const deadLink = (reply: FastifyReply) =>
  renderPage(reply, {
    title: 'Join your team',
    user: null,
    status: 400,
    notice: { kind: 'error', text: 'This invitation has expired, was replaced or was already used.' },
    body: html`<p>Ask whoever invited you to send a new invitation — a link works once, for 7 days. Already joined?
      <a href="/app/login">Sign in</a>.</p>`,
  });

export function invitationPages(deps: Deps): FastifyPluginAsync {
  const path = INVITATION_PATH.replace(/^\/app/, '');
  return async (app) => {
    app.get<{ Querystring: { token?: unknown } }>(path, async (req, reply) => {
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      const inv = await readInvitation(deps.db, token, deps.clock.now());
      if (!inv) return deadLink(reply);
      return renderPage(reply, {
        title: 'Join your team',
        user: null,
        body: html`<${AcceptForm} token=${token} inv=${inv} name="" err=${null} />`,
      });
    });

    app.post(path, async (req, reply) => {
      const form = formOf(req.body);
      const token = field(form, 'token') ?? '';
      const name = (field(form, 'name') ?? '').trim();
      const password = field(form, 'password') ?? '';
      const now = deps.clock.now();
      const inv = await readInvitation(deps.db, token, now);
      if (!inv) return deadLink(reply);
      const showError = (err: FieldError) =>
        renderPage(reply, {
          title: 'Join your team',
          user: null,
          status: 400,
          notice: { kind: 'error', text: err.text },
          body: html`<${AcceptForm} token=${token} inv=${inv} name=${name} err=${err} />`,
        });
      if (password !== (field(form, 'confirm') ?? '')) {
        return showError({
          field: 'confirm',
          text: 'The two passwords differ. Type the same password twice.',
        });
      }
      let joined: { userId: string; organizationId: string };
      try {
        joined = await acceptInvitation(deps.db, { token, name, password, now });
      } catch (err) {
        if (!(err instanceof AppError) || (err.code !== 'BAD_REQUEST' && err.code !== 'CONFLICT')) throw err;
        if (err.param === 'token') return deadLink(reply);
        if (err.param === 'name')
          return showError({ field: 'name', text: 'Enter your name (1 to 100 characters).' });
        if (err.code === 'CONFLICT') return showError({ field: 'name', text: err.message });
        return showError({ field: 'password', text: 'Choose a password of 8 to 256 characters.' });
      }
      const s = await createSession(deps.db, { ...joined, now });
      reply.header('set-cookie', sessionCookie(s.cookieValue, isSecureOrigin(deps)));
      return seeOther(reply, '/app/settings/profile?done=welcome');
    });
  };
}
