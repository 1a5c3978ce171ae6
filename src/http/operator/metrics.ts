import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../deps.ts';
import { renderWebhookMetrics } from '../../webhooks/delivery/metrics.ts';
import { operatorAuth } from './auth.ts';

/** GET /metrics (operator bearer token): the webhook delivery metrics, Prometheus text format 0.0.4. */
export function metricsRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/metrics', { onRequest: operatorAuth(deps) }, async (_req, reply) => {
      const text = await renderWebhookMetrics(deps.db, deps.clock.now());
      reply
        .header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
        .header('cache-control', 'no-store');
      return text;
    });
  };
}
