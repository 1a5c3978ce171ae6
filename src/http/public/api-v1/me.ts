import type { FastifyPluginAsync, preHandlerAsyncHookHandler } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { readQuery } from './query.ts';
import { ok } from './reply.ts';

/** GET /me (getMe): the calling key; a connection test. Needs no scope. */
export function meRoutes(deps: Deps, auth: preHandlerAsyncHookHandler): FastifyPluginAsync {
  return async (app) => {
    app.get('/me', { preHandler: auth, exposeHeadRoute: false }, async (req) => {
      const p = req.principal!;
      readQuery(req.url, {});
      return ok(deps.clock, {
        api_key_id: p.apiKeyId,
        user_id: p.userId,
        organization_id: p.organizationId,
        scopes: p.scopes,
        rate_limit_per_hour: p.rateLimitPerHour,
        environment: p.environment,
      });
    });
  };
}
