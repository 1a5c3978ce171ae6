import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import type { StageHandlers } from '../../capture/jobs/types.ts';
import type { Deps } from '../../deps.ts';
import { installConnectionDrain } from '../connection-drain.ts';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from '../error-handler.ts';
import { healthRoutes } from '../health.ts';
import { installJsonParser, JSON_BODY_LIMIT } from '../json-body.ts';
import { installHttpMetrics } from '../metrics-hooks.ts';
import { installNulGuard } from '../nul-guard.ts';
import { installRequestIds, requestIdOptions } from '../request-id.ts';
import { apiRoutes } from './api-v1/routes.ts';
import { appApiRoutes } from './app-api/routes.ts';
import { pagesRoutes } from './pages/routes.ts';
import { telephonyRoutes } from './telephony/routes.ts';

/**
 * The public listener: /api/v1 (REST + recording downloads), the console (JSON API and pages),
 * /telephony/twilio (Twilio's callbacks), /healthz and /readyz. server.ts only listens.
 * chainStages: in a process that runs the worker role too, the processing stages a downloaded
 * recording goes on through in this process (src/worker.ts workerStageHandlers), as the download's chain.
 */
export async function buildPublicApp(
  deps: Deps,
  opts: { chainStages?: StageHandlers } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    ...requestIdOptions(),
    trustProxy: deps.config.trustProxy,
    frameworkErrors: frameworkErrors(deps.clock),
    clientErrorHandler: clientErrorHandler(deps.clock),
    bodyLimit: JSON_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
  });
  installRequestIds(app);
  installHttpMetrics(app, 'public');
  installErrorHandling(app, deps.clock);
  installJsonParser(app);
  installNulGuard(app);
  installConnectionDrain(app);
  await app.register(cookie);
  await app.register(healthRoutes(deps));
  await app.register(apiRoutes(deps), { prefix: '/api/v1' });
  await app.register(appApiRoutes(deps), { prefix: '/app' });
  await app.register(pagesRoutes(deps), { prefix: '/app' });
  await app.register(telephonyRoutes(deps, { chainStages: opts.chainStages }), {
    prefix: '/telephony/twilio',
  });
  // A person who types the service's address lands in the web app; a browser's default icon request
  // gets the app's icon.
  app.get('/', async (_req, reply) => reply.redirect('/app', 302));
  app.get('/favicon.ico', async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=86400').redirect('/app/assets/favicon.svg', 301),
  );
  return app;
}
