import Fastify, { type FastifyInstance } from 'fastify';
import { METRICS_CONTENT_TYPE, processMetrics } from '../observability/metrics.ts';
import { installConnectionDrain } from './connection-drain.ts';
import { installHttpMetrics } from './metrics-hooks.ts';

/**
 * The metrics listener (METRICS_HOST:METRICS_PORT, off unless METRICS_PORT is set): GET /metrics with
 * this process's metrics only, no authentication — for API-only and worker-only nodes, which have no
 * operator listener. Bind it to a private interface (the default is loopback), as node_exporter is.
 */
export function buildMetricsApp(): FastifyInstance {
  const app = Fastify({ logger: false });
  installHttpMetrics(app, 'metrics');
  installConnectionDrain(app);
  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', METRICS_CONTENT_TYPE).header('cache-control', 'no-store');
    return processMetrics();
  });
  return app;
}
