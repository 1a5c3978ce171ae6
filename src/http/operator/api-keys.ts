import type { FastifyPluginAsync } from 'fastify';
import { revokeApiKey } from '../../accounts/api-keys.ts';
import type { Deps } from '../../deps.ts';
import { notFound } from '../../errors.ts';
import { pathId } from './path-id.ts';

/** DELETE /api-keys/{id}: revokes a key of any organization (listing and creating are per organization). */
export function apiKeyRoutes(deps: Deps): FastifyPluginAsync {
  const { db, clock } = deps;
  return async (app) => {
    app.delete<{ Params: { id: string } }>('/api-keys/:id', async (req, reply) => {
      const found = await db.transaction((tx) =>
        revokeApiKey(tx, { apiKeyId: pathId(req.params.id, 'API key'), now: clock.now() }),
      );
      if (!found) throw notFound(`No API key ${req.params.id}.`);
      return reply.code(204).send();
    });
  };
}
