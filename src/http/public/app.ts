import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.ts';
import { frameworkErrors, installErrorHandling } from '../error-handler.ts';
import { installRequestIds, requestIdOptions } from '../request-id.ts';
import { apiRoutes } from './api-v1/routes.ts';
import { consoleRoutes } from './console/routes.ts';

/** The public listener: /api/v1 (REST + recording downloads), the console. server.ts only listens. */
export async function buildPublicApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    ...requestIdOptions(),
    trustProxy: deps.config.trustProxy,
    frameworkErrors: frameworkErrors(deps.clock),
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
  });
  installRequestIds(app);
  installErrorHandling(app, deps.clock);
  await app.register(cookie);
  await app.register(apiRoutes(deps), { prefix: '/api/v1' });
  await app.register(consoleRoutes(deps), { prefix: '/app' });
  return app;
}
