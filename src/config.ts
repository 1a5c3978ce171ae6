import { z } from 'zod';

/**
 * Typed, validated environment. Every setting has a default, a type and a line of documentation.
 * Fails fast at boot with a message naming the variable.
 */
const bool = z
  .enum(['0', '1', 'true', 'false', ''])
  .transform((v) => v === '1' || v === 'true')
  .default(false);

const schema = z.object({
  /** Public listener: REST, recording downloads, console, telephony callbacks. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Interface the public listener binds to. */
  HOST: z.string().default('0.0.0.0'),
  /** Operator listener (provisioning, ingestion, /metrics, /healthz). */
  ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  /** Operator listener interface; loopback by default so it is never exposed by accident. */
  ADMIN_HOST: z.string().default('127.0.0.1'),
  /** Bearer token of the operator API; generated into DATA_DIR/admin-token when unset. */
  ADMIN_TOKEN: z.string().min(16).optional(),
  /** Embedded database, recordings and generated keys. */
  DATA_DIR: z.string().default('./data'),
  /** Use this PostgreSQL (15+) instead of the embedded PGlite. */
  DATABASE_URL: z.string().url().optional(),
  /** Most PostgreSQL connections one process's pool opens (LISTEN connections come on top; docs/operations.md). */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(20),
  /**
   * PostgreSQL statement_timeout of the pool's connections, in ms (0 = none): a statement running
   * longer is cancelled and its request answers 500 DATABASE_ERROR. Migrations run without it.
   */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  /** Origin links are built on; the REST {base_url} is this + /api/v1. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Let webhook subscriptions target loopback/private addresses (local development, tests). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool,
  /** In-flight webhook requests per worker process (docs/webhooks.md). */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  /** Reconciliation looks this many hours back for deliveries a concurrent activation missed. */
  WEBHOOK_RECONCILE_WINDOW_HOURS: z.coerce.number().int().min(1).max(720).default(72),
  /** 32-byte master key (hex or base64) for secrets at rest and link signing; generated into DATA_DIR when unset. */
  MASTER_KEY: z.string().optional(),
  /** SMTP server for operator e-mail (auto-pause notices); without it mail is kept in the outbox table. */
  SMTP_URL: z.string().optional(),
  /** Sender address of service e-mail. */
  MAIL_FROM: z.string().default('Call Capture <no-reply@callcap.local>'),
  /**
   * Which proxies to trust for the client address (rate limiting of failed authentication, logs):
   * unset = none (the socket address is the client); "1"/"true" = every hop; otherwise a
   * comma-separated list of addresses/CIDRs, as Fastify's trustProxy takes.
   */
  TRUST_PROXY: z.string().default(''),
  /** Log level of the JSON logger. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.infer<typeof schema>;

export interface Config extends Env {
  publicBaseUrl: string;
  trustProxy: boolean | string;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const cfg = parsed.data;
  const publicBaseUrl = (cfg.PUBLIC_BASE_URL ?? `http://localhost:${cfg.PORT}`).replace(/\/+$/, '');
  const tp = cfg.TRUST_PROXY.trim();
  const trustProxy =
    tp === '' || tp === '0' || tp === 'false' ? false : tp === '1' || tp === 'true' ? true : tp;
  return { ...cfg, publicBaseUrl, trustProxy };
}
