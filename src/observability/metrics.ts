import client from 'prom-client';

/**
 * This process's Prometheus metrics (prom-client): the process and event-loop defaults, HTTP
 * request durations by listener/route/status, webhook attempts and processing jobs as this process
 * ran them. GET /metrics on the operator listener serves them together with the database-wide
 * gauges (webhook queue depth, delivery log), and METRICS_PORT serves them on an API-only or
 * worker-only node (docs/operations.md "Health and metrics").
 *
 * One registry per process; instruments are created once here and imported where they are
 * observed (services stay free of HTTP: they only call .observe()/.inc()).
 */
export const registry = new client.Registry();

client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });

/** Seconds; fine at the low end (a REST read is 1–5 ms), up to the 10 s where clients give up. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequestDuration = new client.Histogram({
  name: 'callcap_http_request_duration_seconds',
  help: 'HTTP requests served, by listener, method, route pattern and status code.',
  labelNames: ['listener', 'method', 'route', 'status'] as const,
  buckets: HTTP_BUCKETS,
  registers: [registry],
});

export const webhookAttemptDuration = new client.Histogram({
  name: 'callcap_webhook_attempt_duration_seconds',
  help: 'Webhook delivery attempts this process made, by outcome (HTTP status class or error class).',
  labelNames: ['outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const processingJobRuns = new client.Counter({
  name: 'callcap_processing_job_runs_total',
  help: 'Capture processing job runs in this process, by stage and outcome (done, retry, failed).',
  labelNames: ['stage', 'outcome'] as const,
  registers: [registry],
});

/** The outcome label of one delivery attempt: "2xx".."5xx", or the error class when no reply came. */
export function attemptOutcome(
  o: { kind: 'response'; status: number } | { kind: 'error'; errorClass: string },
): string {
  return o.kind === 'response' ? `${Math.floor(o.status / 100)}xx` : o.errorClass;
}

/** The text exposition of this process's metrics. */
export const processMetrics = (): Promise<string> => registry.metrics();
export const METRICS_CONTENT_TYPE = registry.contentType;
