import Fastify, { type FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { frameworkErrors, installErrorHandling } from '../http/error-handler.ts';
import { operatorRoutes } from './routes.ts';

/** The operator listener (ADMIN_HOST:ADMIN_PORT): provisioning, ingestion, /healthz, /metrics. */
export async function buildOperatorApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: 200 * 1024 * 1024,
    frameworkErrors: frameworkErrors(deps.clock),
    routerOptions: { ignoreTrailingSlash: true },
  });
  installErrorHandling(app, deps.clock);
  await app.register(operatorRoutes(deps));
  return app;
}
