import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { setUserPassword } from '../../accounts/users.ts';
import type { Deps } from '../../deps.ts';
import { notFound, parseInput } from '../../errors.ts';
import { pathId } from './path-id.ts';

const schemas = { setPassword: z.strictObject({ password: z.string() }) };

/**
 * PUT /users/{id}/password `{password}`: an operator sets a user's console password (a user who
 * lost it; `callcap user set-password`, `callcap demo reset-password`). 204; every console session
 * of the user ends. 400 for a password outside the policy (8 to 256 characters), 404 for no such
 * user. The password is never echoed or logged. (Users are listed per organization; this route,
 * like DELETE /api-keys/{id}, addresses one by its own id.)
 */
export function userRoutes(deps: Deps): FastifyPluginAsync {
  const { db } = deps;
  return async (app) => {
    app.put<{ Params: { id: string } }>('/users/:id/password', async (req, reply) => {
      const userId = pathId(req.params.id, 'user');
      const b = parseInput(schemas.setPassword, req.body);
      const { found } = await db.transaction((tx) => setUserPassword(tx, { userId, password: b.password }));
      if (!found) throw notFound(`No user ${req.params.id}.`);
      return reply.code(204).send();
    });
  };
}
