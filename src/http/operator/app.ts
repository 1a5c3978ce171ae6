import Fastify, { type FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.ts';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from '../error-handler.ts';
import { healthRoutes } from '../health.ts';
import { installJsonParser, JSON_BODY_LIMIT } from '../json-body.ts';
import { installRequestIds, requestIdOptions } from '../request-id.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { operatorAuth } from './auth.ts';
import { ingestionRoutes } from './calls.ts';
import { contactOperatorRoutes } from './contacts.ts';
import { maintenanceRoutes } from './maintenance.ts';
import { metricsRoutes } from './metrics.ts';
import { organizationRoutes } from './organizations.ts';
import { recordingOperatorRoutes } from './recordings.ts';

/**
 * The operator listener (ADMIN_HOST:ADMIN_PORT), assembled here: /healthz and /readyz (no auth), /metrics and
 * /admin/v1 (Bearer ADMIN_TOKEN): provisioning, call ingestion, contacts, recordings, maintenance.
 */
export async function buildOperatorApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    ...requestIdOptions(),
    // JSON routes only; the audio upload sets its own (recordings.ts).
    bodyLimit: JSON_BODY_LIMIT,
    frameworkErrors: frameworkErrors(deps.clock),
    clientErrorHandler: clientErrorHandler(deps.clock),
    routerOptions: { ignoreTrailingSlash: true },
  });
  installRequestIds(app);
  installErrorHandling(app, deps.clock);
  installJsonParser(app);
  await app.register(healthRoutes(deps));
  await app.register(metricsRoutes(deps));
  await app.register(
    async (admin) => {
      admin.addHook('onRequest', operatorAuth(deps));
      await admin.register(organizationRoutes(deps));
      await admin.register(apiKeyRoutes(deps));
      await admin.register(maintenanceRoutes(deps));
      await admin.register(ingestionRoutes(deps));
      await admin.register(contactOperatorRoutes(deps));
      await admin.register(recordingOperatorRoutes(deps));
    },
    { prefix: '/admin/v1' },
  );
  return app;
}
