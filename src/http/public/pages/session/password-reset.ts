import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { requestPasswordReset, resetLinkIsLive, resetPassword } from '../../../../accounts/password-reset.ts';
import { checkEmail } from '../../../../accounts/users.ts';
import type { Deps } from '../../../../deps.ts';
import { AppError } from '../../../../errors.ts';
import { createMailer } from '../../../../mail/mailer.ts';
import { field, formOf } from '../kit/form.ts';
import { seeOther } from '../kit/guard.ts';
import { html } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';

/**
 * "Forgot password?" (no session needed): GET/POST /app/forgot-password asks for a link by e-mail,
 * GET/POST /app/reset-password?token=… sets the new password (accounts/password-reset.ts says what a
 * link is worth). After a reset the browser goes to the sign-in page with ?done=password_reset.
 *
 * No CSRF token on these two forms: there is no session to protect. A cross-site post of the first
 * can only send the real owner an e-mail (throttled); the second needs the token from that e-mail.
 */

/** A field's error, marked on the field itself: aria-invalid, the message linked by aria-describedby, autofocus. */
interface FieldError {
  field: string;
  text: string;
}

const fieldAttrs = (name: string, err: FieldError | null) =>
  err?.field === name ? { 'aria-invalid': 'true', 'aria-describedby': `${name}-error`, autofocus: true } : {};

const ErrorText = ({ name, err }: { name: string; err: FieldError | null }) =>
  err?.field === name ? html`<p class="field-error" id=${`${name}-error`}>${err.text}</p>` : null;

function ForgotForm(p: { email: string; err: FieldError | null }) {
  return html`<form method="post" action="/app/forgot-password" class="stack" novalidate>
    <p>Enter the e-mail address you sign in with. We will send you a link to choose a new password.</p>
    <div>
      <label for="email">E-mail</label>
      <input type="email" id="email" name="email" autocomplete="username" required value=${p.email}
        ...${fieldAttrs('email', p.err)} />
      <${ErrorText} name="email" err=${p.err} />
    </div>
    <div><button type="submit">Send the link</button></div>
    <p><a href="/app/login">Back to sign in</a></p>
  </form>`;
}

function ResetForm(p: { token: string; err: FieldError | null }) {
  return html`<form method="post" action="/app/reset-password" class="stack" novalidate>
    <input type="hidden" name="token" value=${p.token} />
    <div>
      <label for="password">New password</label>
      <input type="password" id="password" name="password" autocomplete="new-password" required minlength="8"
        ...${fieldAttrs('password', p.err)} />
      <${ErrorText} name="password" err=${p.err} />
    </div>
    <div>
      <label for="confirm">Type it again</label>
      <input type="password" id="confirm" name="confirm" autocomplete="new-password" required
        ...${fieldAttrs('confirm', p.err)} />
      <${ErrorText} name="confirm" err=${p.err} />
    </div>
    <div><button type="submit">Set the new password</button></div>
  </form>`;
}

const deadLink = (reply: FastifyReply) =>
  renderPage(reply, {
    title: 'Reset your password',
    user: null,
    status: 400,
    notice: { kind: 'error', text: 'This reset link has expired or was already used.' },
    body: html`<p><a href="/app/forgot-password">Ask for a new link</a> — a link works once, for one hour.</p>`,
  });

export function passwordResetPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    // One mailer for the listener's life: the link goes out right after the commit.
    const mailer = createMailer(deps);
    app.addHook('onClose', async () => mailer.close());

    const showForgot = (
      reply: FastifyReply,
      p: { email?: string; err?: FieldError; notice?: Notice; status?: number } = {},
    ) =>
      renderPage(reply, {
        title: 'Reset your password',
        user: null,
        status: p.status,
        notice: p.notice ?? (p.err ? { kind: 'error', text: p.err.text } : null),
        body: html`<${ForgotForm} email=${p.email ?? ''} err=${p.err ?? null} />`,
      });

    app.get('/forgot-password', async (_req, reply) => showForgot(reply));

    app.post('/forgot-password', async (req, reply) => {
      const typed = (field(formOf(req.body), 'email') ?? '').trim().slice(0, 254);
      try {
        checkEmail(typed);
      } catch {
        return showForgot(reply, {
          email: typed,
          status: 400,
          err: { field: 'email', text: 'Enter an e-mail address such as name@example.com.' },
        });
      }
      try {
        const { emailId } = await requestPasswordReset(deps.db, {
          ip: req.ip,
          email: typed,
          baseUrl: deps.config.publicBaseUrl,
          now: deps.clock.now(),
        });
        if (emailId) {
          mailer.dispatch(emailId).catch((err: Error) => {
            deps.log.warn({ emailId, err: err.message }, 'password reset e-mail not dispatched');
          });
        }
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== 'RATE_LIMITED') throw err;
        const wait = err.retryAfterSeconds ?? 60;
        reply.header('retry-after', String(wait));
        return showForgot(reply, {
          email: typed,
          status: 429,
          notice: {
            kind: 'error',
            text: `Too many requests for a reset link. Wait ${wait} seconds, then try again.`,
          },
        });
      }
      // The same answer whether or not an account uses the address.
      return renderPage(reply, {
        title: 'Check your e-mail',
        user: null,
        notice: {
          kind: 'ok',
          text: 'If an account uses this address, we have sent it a link to choose a new password.',
        },
        body: html`<p>The link works once, for one hour. Nothing arrived? Check the spam folder, or
          <a href="/app/forgot-password">ask again</a>.</p>
          <p><a href="/app/login">Back to sign in</a></p>`,
      });
    });

    app.get<{ Querystring: { token?: unknown } }>('/reset-password', async (req, reply) => {
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      if (!(await resetLinkIsLive(deps.db, token, deps.clock.now()))) return deadLink(reply);
      return renderPage(reply, {
        title: 'Choose a new password',
        user: null,
        body: html`<${ResetForm} token=${token} err=${null} />`,
      });
    });

    app.post('/reset-password', async (req, reply) => {
      const form = formOf(req.body);
      const token = field(form, 'token') ?? '';
      const password = field(form, 'password') ?? '';
      const showError = (err: FieldError) =>
        renderPage(reply, {
          title: 'Choose a new password',
          user: null,
          status: 400,
          notice: { kind: 'error', text: err.text },
          body: html`<${ResetForm} token=${token} err=${err} />`,
        });
      if (password !== (field(form, 'confirm') ?? '')) {
        if (!(await resetLinkIsLive(deps.db, token, deps.clock.now()))) return deadLink(reply);
        return showError({
          field: 'confirm',
          text: 'The two passwords differ. Type the same password twice.',
        });
      }
      try {
        await resetPassword(deps.db, { token, password, now: deps.clock.now() });
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== 'BAD_REQUEST') throw err;
        if (err.param === 'token') return deadLink(reply);
        return showError({ field: 'password', text: 'Choose a password of 8 to 256 characters.' });
      }
      return seeOther(reply, '/app/login?done=password_reset');
    });
  };
}
