import Fastify, { type FastifyInstance } from 'fastify';
import { createJobRunner } from '../../capture/jobs/runner.ts';
import { captureStageHandlers } from '../../capture/jobs/stages/index.ts';
import type { StageHandlers } from '../../capture/jobs/types.ts';
import type { Deps } from '../../deps.ts';
import { installConnectionDrain } from '../connection-drain.ts';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from '../error-handler.ts';
import { healthRoutes } from '../health.ts';
import { installJsonParser, JSON_BODY_LIMIT } from '../json-body.ts';
import { installHttpMetrics } from '../metrics-hooks.ts';
import { installNulGuard } from '../nul-guard.ts';
import { installRequestIds, requestIdOptions } from '../request-id.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { operatorAuth } from './auth.ts';
import { callProcessingRoutes } from './call-processing.ts';
import { ingestionRoutes } from './calls.ts';
import { contactOperatorRoutes } from './contacts.ts';
import { maintenanceRoutes } from './maintenance.ts';
import { metricsRoutes } from './metrics.ts';
import { organizationRoutes } from './organizations.ts';
import { outboundCallRoutes } from './outbound-calls.ts';
import { recordingOperatorRoutes } from './recordings.ts';
import { telephonyOperatorRoutes } from './telephony.ts';
import { userRoutes } from './users.ts';

/**
 * The operator listener (ADMIN_HOST:ADMIN_PORT), assembled here: /healthz and /readyz (no auth), /metrics and
 * /admin/v1 (Bearer ADMIN_TOKEN): provisioning (organizations, users and their passwords, keys), call
 * ingestion, contacts, recordings, maintenance.
 */
export async function buildOperatorApp(
  deps: Deps,
  opts: { stageHandlers?: StageHandlers } = {},
): Promise<FastifyInstance> {
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
  installHttpMetrics(app, 'operator');
  installErrorHandling(app, deps.clock);
  installJsonParser(app);
  installNulGuard(app);
  installConnectionDrain(app);
  // Runs the processing jobs this listener's requests enqueue, right after their response; closing
  // the app waits for them. The worker role runs everything else (src/worker.ts).
  const jobs = createJobRunner(deps, { handlers: { ...captureStageHandlers(), ...opts.stageHandlers } });
  app.addHook('onClose', () => jobs.stop());
  await app.register(healthRoutes(deps));
  await app.register(metricsRoutes(deps));
  await app.register(
    async (admin) => {
      admin.addHook('onRequest', operatorAuth(deps));
      await admin.register(organizationRoutes(deps));
      await admin.register(apiKeyRoutes(deps));
      await admin.register(userRoutes(deps));
      await admin.register(maintenanceRoutes(deps));
      await admin.register(ingestionRoutes(deps, { jobs }));
      await admin.register(callProcessingRoutes(deps, { jobs }));
      await admin.register(contactOperatorRoutes(deps));
      await admin.register(recordingOperatorRoutes(deps, { jobs }));
      await admin.register(telephonyOperatorRoutes(deps));
      await admin.register(outboundCallRoutes(deps));
    },
    { prefix: '/admin/v1' },
  );
  return app;
}
