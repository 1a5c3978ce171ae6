import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { clearedSessionCookie, endSession, sessionCookie } from '../../../accounts/sessions.ts';
import { signIn } from '../../../accounts/sign-in.ts';
import type { Deps } from '../../../deps.ts';
import { parseInput } from '../../../errors.ts';
import { requireSession } from './auth.ts';

const loginBody = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(1024),
});

export const isSecureOrigin = (deps: Deps) => deps.config.publicBaseUrl.startsWith('https:');

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
      return {
        user_id: s.userId,
        organization_id: s.organizationId,
        environment: s.environment,
        csrf_token: s.csrfToken,
      };
    });

    app.post('/logout', async (req, reply) => {
      await endSession(deps.db, requireSession(req).sessionId);
      reply.header('set-cookie', clearedSessionCookie(isSecureOrigin(deps)));
      return reply.code(204).send();
    });
  };
}
