import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sessionCookie } from '../../../../accounts/sessions.ts';
import { signIn } from '../../../../accounts/sign-in.ts';
import type { Deps } from '../../../../deps.ts';
import { AppError } from '../../../../errors.ts';
import { sha256Hex } from '../../../../keys.ts';
import { isSecureOrigin } from '../../app-api/session.ts';
import { field, formOf } from '../kit/form.ts';
import { CSRF_FIELD, loadPageUser, seeOther } from '../kit/guard.ts';
import { html } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { safeNext } from '../kit/next-path.ts';
import { doneNotice } from '../kit/notices.ts';

const DONE = { password_reset: 'Your password was changed. Sign in with your new password.' } as const;

/**
 * The sign-in form has no session to bind a CSRF token to, so it uses a double-submit token: a
 * random value in a cookie scoped to /app/login and the same value in the form's hidden field. A
 * cross-site page can make a browser post the form but can neither read nor set the cookie, so it
 * cannot sign a victim into an attacker's account (login CSRF).
 */
const LOGIN_CSRF_COOKIE = 'cc_login_csrf';

const loginCsrfCookie = (value: string, secure: boolean) =>
  `${LOGIN_CSRF_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/app/login${secure ? '; Secure' : ''}`;

const sameToken = (a: string | undefined, b: string | undefined): boolean =>
  !!a && !!b && timingSafeEqual(Buffer.from(sha256Hex(a), 'hex'), Buffer.from(sha256Hex(b), 'hex'));

function LoginForm(p: { next: string; email: string; token: string }) {
  return html`<form method="post" action="/app/login" class="stack">
    <input type="hidden" name=${CSRF_FIELD} value=${p.token} />
    <input type="hidden" name="next" value=${p.next} />
    <div>
      <label for="email">E-mail</label>
      <input type="email" id="email" name="email" autocomplete="username" required value=${p.email} />
    </div>
    <div>
      <label for="password">Password</label>
      <input type="password" id="password" name="password" autocomplete="current-password" required />
    </div>
    <div><button type="submit">Sign in</button></div>
    <p><a href="/app/forgot-password">Forgot your password?</a></p>
  </form>`;
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

function showLogin(
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  p: { next: string; email?: string; notice?: Notice; status?: number },
) {
  // The browser's current token is kept (two open sign-in tabs both work); a new one otherwise.
  const had = req.cookies?.[LOGIN_CSRF_COOKIE];
  const token = had && TOKEN_SHAPE.test(had) ? had : randomBytes(32).toString('base64url');
  reply.header('set-cookie', loginCsrfCookie(token, isSecureOrigin(deps)));
  return renderPage(reply, {
    title: 'Sign in',
    user: null,
    status: p.status,
    notice: p.notice,
    body: html`<${LoginForm} next=${p.next} email=${p.email ?? ''} token=${token} />`,
  });
}

/** GET and POST /app/login (no session needed). */
export function loginPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Querystring: { next?: string } }>('/login', async (req, reply) => {
      const next = safeNext(req.query.next);
      // Already signed in: straight on to the page asked for.
      if (await loadPageUser(deps, req)) return seeOther(reply, next);
      return showLogin(deps, req, reply, { next, notice: doneNotice(req, DONE) ?? undefined });
    });

    app.post('/login', async (req, reply) => {
      const form = formOf(req.body);
      const next = safeNext(field(form, 'next'));
      const email = (field(form, 'email') ?? '').trim();
      const password = field(form, 'password') ?? '';
      if (!sameToken(req.cookies?.[LOGIN_CSRF_COOKIE], field(form, CSRF_FIELD))) {
        return showLogin(deps, req, reply, {
          next,
          email,
          status: 403,
          notice: { kind: 'error', text: 'The sign-in form had expired. Please sign in again.' },
        });
      }
      if (email === '' || password === '' || email.length > 254 || password.length > 1024) {
        return showLogin(deps, req, reply, {
          next,
          email: email.slice(0, 254),
          status: 400,
          notice: { kind: 'error', text: 'Enter your e-mail address and your password.' },
        });
      }
      try {
        const s = await signIn(deps, req.ip, email, password);
        const secure = isSecureOrigin(deps);
        reply.header('set-cookie', [
          sessionCookie(s.cookieValue, secure),
          `${LOGIN_CSRF_COOKIE}=; HttpOnly; SameSite=Lax; Path=/app/login; Max-Age=0${secure ? '; Secure' : ''}`,
        ]);
        return seeOther(reply, next);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.code === 'UNAUTHORIZED') {
          return showLogin(deps, req, reply, {
            next,
            email,
            status: 401,
            notice: { kind: 'error', text: 'Wrong e-mail or password. Check both and try again.' },
          });
        }
        if (err.code === 'RATE_LIMITED') {
          const wait = err.retryAfterSeconds ?? 60;
          reply.header('retry-after', String(wait));
          return showLogin(deps, req, reply, {
            next,
            email,
            status: 429,
            notice: {
              kind: 'error',
              text: `Too many sign-in attempts. For your account's safety, wait ${wait} seconds, then try again.`,
            },
          });
        }
        throw err;
      }
    });
  };
}
