import type { FastifyPluginAsync } from 'fastify';
import { renderProcessingMetrics } from '../../capture/jobs/metrics.ts';
import type { Deps } from '../../deps.ts';
import { METRICS_CONTENT_TYPE, processMetrics } from '../../observability/metrics.ts';
import { renderWebhookMetrics } from '../../webhooks/delivery/metrics.ts';
import { operatorAuth } from './auth.ts';

/**
 * GET /metrics (operator bearer token), Prometheus text format 0.0.4: this process's metrics
 * (prom-client: process and event-loop defaults, HTTP request histograms of both listeners, webhook
 * attempts, processing jobs) followed by the database-wide gauges (webhook queue and delivery log,
 * processing jobs by stage and state and their runs by outcome), which are right whichever process
 * did the work.
 */
export function metricsRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/metrics', { onRequest: operatorAuth(deps) }, async (_req, reply) => {
      const now = deps.clock.now();
      const [own, shared, processing] = await Promise.all([
        processMetrics(),
        renderWebhookMetrics(deps.db, now),
        renderProcessingMetrics(deps.db, now),
      ]);
      reply.header('content-type', METRICS_CONTENT_TYPE).header('cache-control', 'no-store');
      return `${own.trimEnd()}\n${shared}${processing}`;
    });
  };
}
