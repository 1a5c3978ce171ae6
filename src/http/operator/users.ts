import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { findUsersByEmail, setUserPassword } from '../../accounts/users.ts';
import type { Deps } from '../../deps.ts';
import { notFound, parseInput } from '../../errors.ts';
import { pathId } from './path-id.ts';

const schemas = {
  setPassword: z.strictObject({ password: z.string() }),
  find: z.strictObject({ email: z.string() }),
};

/**
 * GET /users?email= finds a user of any organization by e-mail (e-mails are unique across the
 * service): 200 `{users: [{user_id, organization_id, email, role, created_at}]}`, empty when nobody
 * has it; `email` is required (there is no service-wide list of users).
 *
 * PUT /users/{id}/password `{password}`: an operator sets a user's console password (a user who
 * lost it; `callcap user set-password`, `callcap demo reset-password`). 204; every console session
 * of the user ends. 400 for a password outside the policy (8 to 256 characters), 404 for no such
 * user. The password is never echoed or logged.
 */
export function userRoutes(deps: Deps): FastifyPluginAsync {
  const { db } = deps;
  return async (app) => {
    app.get('/users', async (req) => {
      const q = parseInput(schemas.find, req.query, 'query');
      return { users: await findUsersByEmail(db, q.email) };
    });

    app.put<{ Params: { id: string } }>('/users/:id/password', async (req, reply) => {
      const userId = pathId(req.params.id, 'user');
      const b = parseInput(schemas.setPassword, req.body);
      const { found } = await db.transaction((tx) => setUserPassword(tx, { userId, password: b.password }));
      if (!found) throw notFound(`No user ${req.params.id}.`);
      return reply.code(204).send();
    });
  };
}
