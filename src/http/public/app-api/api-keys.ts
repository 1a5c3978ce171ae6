import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../../../accounts/api-keys.ts';
import { sessionScope } from '../../../accounts/sessions.ts';
import type { Deps } from '../../../deps.ts';
import { ENVIRONMENTS } from '../../../domain/tenant.ts';
import { notFound, parseInput } from '../../../errors.ts';
import { requireSession } from './auth.ts';
import { isIdParam } from './path-id.ts';

const createBody = z.object({
  name: z.string().nullish(),
  scopes: z.array(z.string()),
  /** live or test; default: the session's environment (live unless switched to test mode) */
  environment: z.enum(ENVIRONMENTS).optional(),
});

/**
 * API keys of the session's organization and environment. The key is shown once, at creation;
 * lists never show it.
 */
export function apiKeyRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/api-keys', async (req) => {
      return { items: await listApiKeys(deps.db, sessionScope(requireSession(req))) };
    });

    app.post('/api-keys', async (req, reply) => {
      const s = requireSession(req);
      const body = parseInput(createBody, req.body ?? {});
      const created = await deps.db.transaction((tx) =>
        createApiKey(tx, {
          organizationId: s.organizationId,
          environment: body.environment ?? s.environment,
          userId: s.userId,
          scopes: body.scopes,
          name: body.name ?? null,
          now: deps.clock.now(),
        }),
      );
      return reply.code(201).send(created);
    });

    app.delete<{ Params: { id: string } }>('/api-keys/:id', async (req, reply) => {
      const s = requireSession(req);
      const id = req.params.id;
      const revoked =
        isIdParam(id) &&
        (await revokeApiKey(deps.db, {
          apiKeyId: id,
          scope: sessionScope(s),
          now: deps.clock.now(),
        }));
      if (!revoked) throw notFound(`No API key ${id} in your organization.`);
      return reply.code(204).send();
    });
  };
}
