import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.ts';
import { recordingOperatorRoutes } from '../recordings/operator-routes.ts';
import { webhookMetricsRoutes } from '../webhooks/metrics.ts';
import { ingestionRoutes } from './ingestion.ts';
import { operatorAuth } from './operator-auth.ts';
import { provisioningRoutes } from './provisioning.ts';

/** Operator listener routes: /healthz (no auth), /metrics and /admin/v1 (Bearer ADMIN_TOKEN). */
export function operatorRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', async () => {
      await deps.db.query('SELECT 1');
      return { status: 'ok' };
    });
    await app.register(webhookMetricsRoutes(deps));
    await app.register(
      async (admin) => {
        admin.addHook('onRequest', operatorAuth(deps));
        await admin.register(provisioningRoutes(deps));
        await admin.register(ingestionRoutes(deps));
        await admin.register(recordingOperatorRoutes(deps));
      },
      { prefix: '/admin/v1' },
    );
  };
}
