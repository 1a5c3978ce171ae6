import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import { apiRoutes } from './api/routes.ts';
import { consoleRoutes } from './console/routes.ts';
import type { Deps } from './deps.ts';
import { frameworkErrors, installErrorHandling, safeRequestSerializer } from './http/error-handler.ts';

/** The public listener: /api/v1 (REST + recording downloads), the console. server.ts only listens. */
export async function buildPublicApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    trustProxy: deps.config.trustProxy,
    frameworkErrors: frameworkErrors(deps.clock),
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
  });
  installErrorHandling(app, deps.clock);
  await app.register(cookie);
  await app.register(apiRoutes(deps), { prefix: '/api/v1' });
  await app.register(consoleRoutes(deps), { prefix: '/app' });
  return app;
}

export { safeRequestSerializer };
