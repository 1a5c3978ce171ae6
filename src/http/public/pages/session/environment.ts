import type { FastifyPluginAsync } from 'fastify';
import { setSessionEnvironment } from '../../../../accounts/sessions.ts';
import type { Deps } from '../../../../deps.ts';
import { ENVIRONMENTS, type Environment } from '../../../../domain/tenant.ts';
import { badRequest } from '../../../../errors.ts';
import { field, formOf } from '../kit/form.ts';
import { requireUser, seeOther } from '../kit/guard.ts';
import { safeNext } from '../kit/next-path.ts';

/** The form's action (kit/layout.ts shows the switch on every signed-in page). */
export const ENVIRONMENT_SWITCH_PATH = '/app/environment';

/**
 * POST /app/environment (behind the page guard and the CSRF check): the test-mode switch
 * (spec/api-v1-additions.md "Test mode"). The session works in the chosen data environment from the
 * next request on: every page reads and writes that environment only, and keys and subscriptions
 * created there are of it. Answers 303 to `next`, the list page of the section the switch was
 * pressed on (an item page of one environment would be a 404 in the other).
 */
export function environmentSwitch(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.post('/environment', async (req, reply) => {
      const user = requireUser(req);
      const form = formOf(req.body);
      const wanted = field(form, 'environment');
      if (!ENVIRONMENTS.includes(wanted as Environment)) {
        throw badRequest('Choose the environment to work in: live or test.', 'environment');
      }
      await setSessionEnvironment(deps.db, user.session.sessionId, wanted as Environment);
      return seeOther(reply, safeNext(field(form, 'next')));
    });
  };
}
