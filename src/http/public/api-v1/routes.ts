import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { notFound } from '../../../errors.ts';
import { maintenanceGate } from '../../../maintenance.ts';
import { authenticate } from './auth.ts';
import { callRoutes } from './calls.ts';
import { meRoutes } from './me.ts';
import { methodNotAllowed } from './method-not-allowed.ts';
import { buildOpenApiDocument } from './openapi/document.ts';
import { recordingRoutes } from './recordings.ts';

/**
 * Everything under /api/v1. The REST routes and the recording routes share one encapsulation, so the
 * hooks below apply to all of them. Order of checks (docs/decisions.md): 503 maintenance (onRequest)
 * → routing 404/405 → 429 failed-authentication throttle → 401 → rate-limit count/429 → 402 (the
 * authenticate preHandler) → 403 scope → 400 query → 404 resource → 409/410 (the handlers).
 */
export function apiRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    const gate = maintenanceGate(deps);
    app.addHook('onClose', async () => gate.dispose());
    app.addHook('onRequest', async (_req, reply) => {
      // Authenticated answers are private and change with every request: never cached (routes may override).
      reply.header('cache-control', 'no-store');
      await gate.check();
    });
    app.setNotFoundHandler(async (req) => {
      throw notFound(
        `No operation ${req.method} ${req.url.split('?')[0]}; the operations are listed in ${deps.config.publicBaseUrl}/api/v1/openapi.json.`,
      );
    });

    const allow = methodNotAllowed(app);
    allow.track();
    const auth = authenticate(deps);
    await app.register(meRoutes(deps, auth));
    await app.register(callRoutes(deps, auth));
    await app.register(recordingRoutes(deps));

    const openapi = JSON.stringify(buildOpenApiDocument({ publicBaseUrl: deps.config.publicBaseUrl }));
    app.get('/openapi.json', { exposeHeadRoute: false }, async (_req, reply) => {
      reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8');
      return openapi;
    });
    allow.answer();
  };
}
