import type { FastifyPluginAsync } from 'fastify';
import { clearedSessionCookie, endSession } from '../../../../accounts/sessions.ts';
import type { Deps } from '../../../../deps.ts';
import { isSecureOrigin } from '../../app-api/session.ts';
import { requireUser, seeOther } from '../kit/guard.ts';

/** POST /app/logout (behind the page guard and the CSRF check): ends the session. */
export function logoutPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.post('/logout', async (req, reply) => {
      await endSession(deps.db, requireUser(req).session.sessionId);
      reply.header('set-cookie', clearedSessionCookie(isSecureOrigin(deps)));
      return seeOther(reply, '/app/login');
    });
  };
}
