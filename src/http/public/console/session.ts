import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { releaseLoginSlot, takeLoginSlot } from '../../../accounts/login-throttle.ts';
import { verifyPassword } from '../../../accounts/passwords.ts';
import {
  clearedSessionCookie,
  createSession,
  endSession,
  sessionCookie,
} from '../../../accounts/sessions.ts';
import type { Deps } from '../../../deps.ts';
import { parseInput, unauthorized } from '../../../errors.ts';
import { requireSession } from './auth.ts';

/**
 * A valid scrypt hash of a password nobody knows, at the production cost: an unknown e-mail costs
 * the same scrypt run as a wrong password, so timing does not tell which e-mails exist.
 */
const DUMMY_HASH = 'scrypt$32768$8$1$PrEAYw5WNNxdiitrplCrdw$JiJUraql75Yiz90mVYhzCfYFlnfvah0knEER5fdg_04';
const WRONG_CREDENTIALS = 'Wrong e-mail or password.';

const loginBody = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(1024),
});

export const isSecureOrigin = (deps: Deps) => deps.config.publicBaseUrl.startsWith('https:');

/**
 * Checks an e-mail and password under the login throttle and opens a session: the one sign-in of
 * the JSON console and the sign-in page. Throws 429 RATE_LIMITED (with retryAfterSeconds) at a
 * throttle cap, 401 UNAUTHORIZED for a wrong e-mail or password (one message for both).
 */
export async function signIn(
  deps: Deps,
  ip: string,
  email: string,
  password: string,
): Promise<{ userId: string; organizationId: string; cookieValue: string; csrfToken: string }> {
  const now = deps.clock.now();
  // The attempt takes its slot before the password is checked (login-throttle.ts): 429 at a cap.
  const slot = await takeLoginSlot(deps.db, ip, email, now);
  const { rows } = await deps.db.query<{ id: string; organization_id: string; password_hash: string }>(
    'SELECT id, organization_id, password_hash FROM users WHERE lower(email) = $1',
    [email.trim().toLowerCase()],
  );
  const user = rows[0];
  const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
  if (!user || !ok) throw unauthorized(WRONG_CREDENTIALS);
  await releaseLoginSlot(deps.db, slot);
  const s = await createSession(deps.db, { userId: user.id, organizationId: user.organization_id, now });
  return {
    userId: user.id,
    organizationId: user.organization_id,
    cookieValue: s.cookieValue,
    csrfToken: s.csrfToken,
  };
}

/** POST /login (no session needed) — registered outside the session hook. */
export function loginRoute(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.post('/login', async (req, reply) => {
      const { email, password } = parseInput(loginBody, req.body ?? {});
      const s = await signIn(deps, req.ip, email, password);
      reply.header('set-cookie', sessionCookie(s.cookieValue, isSecureOrigin(deps)));
      return { user_id: s.userId, organization_id: s.organizationId, csrf_token: s.csrfToken };
    });
  };
}

/** GET /session and POST /logout (behind the session hook). */
export function sessionRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/session', async (req) => {
      const s = requireSession(req);
      return { user_id: s.userId, organization_id: s.organizationId, csrf_token: s.csrfToken };
    });

    app.post('/logout', async (req, reply) => {
      await endSession(deps.db, requireSession(req).sessionId);
      reply.header('set-cookie', clearedSessionCookie(isSecureOrigin(deps)));
      return reply.code(204).send();
    });
  };
}
