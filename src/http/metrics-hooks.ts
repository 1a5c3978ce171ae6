import type { FastifyInstance } from 'fastify';
import { httpRequestDuration } from '../observability/metrics.ts';

/**
 * Times every request of a listener into callcap_http_request_duration_seconds. The route label is
 * Fastify's route pattern (/api/v1/calls/:id), never the raw URL, so ids do not explode the label
 * set; a request no route matched is "unmatched".
 */
export function installHttpMetrics(app: FastifyInstance, listener: 'public' | 'operator' | 'metrics'): void {
  app.addHook('onResponse', async (req, reply) => {
    httpRequestDuration.observe(
      {
        listener,
        method: req.method,
        route: req.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
  });
}
