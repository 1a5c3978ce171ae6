import { z } from 'zod';

/**
 * Typed, validated environment. Every setting has a default, a type and a line of documentation.
 * Fails fast at boot with a message naming the variable.
 */
const bool = z
  .enum(['0', '1', 'true', 'false', ''])
  .transform((v) => v === '1' || v === 'true')
  .default(false);

/** An http(s) URL (a provider's base URL); the trailing slash is dropped. */
const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
  .transform((u) => u.replace(/\/+$/, ''));

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
  /**
   * Let webhook subscriptions target loopback/private addresses. Unset: on while the service runs
   * locally (embedded database and PUBLIC_BASE_URL on a loopback host, npm start's defaults), off as
   * soon as DATABASE_URL or a non-loopback PUBLIC_BASE_URL is set; 1 / 0 (or empty) decide explicitly.
   */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z.enum(['0', '1', 'true', 'false', '']).optional(),
  /** In-flight webhook requests per worker process (docs/webhooks.md). */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  /**
   * Calls one organization may place through POST /api/v1/calls per minute, in each data
   * environment (a looping integration cannot dial a thousand numbers); over it: 429 RATE_LIMITED.
   */
  PLACE_CALLS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
  /** Reconciliation looks this many hours back for deliveries a concurrent activation missed. */
  WEBHOOK_RECONCILE_WINDOW_HOURS: z.coerce.number().int().min(1).max(720).default(72),
  /**
   * Runs of one processing stage (transcribe, analyse, …) before the call is marked failed
   * (docs/capture.md "Processing jobs"); retries back off exponentially from 15 s (8 runs ≈ 30 min).
   */
  PROCESSING_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
  /** Processing jobs one worker process runs at once (each is mostly waiting on a provider). */
  PROCESSING_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /**
   * Twilio REST origin (docs/capture.md "Connecting Twilio"): REST calls go here, and a recording is
   * downloaded only when its RecordingUrl is on this origin. Tests point it at a local fake.
   */
  TWILIO_API_BASE_URL: z.string().url().default('https://api.twilio.com'),
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
  /**
   * Where recordings live: `file` (DATA_DIR/recordings, one node) or `s3` (an S3-compatible bucket
   * every node shares; docs/operations.md "Recordings on object storage").
   */
  RECORDINGS_STORE: z.enum(['file', 's3']).default('file'),
  /** Bucket of the s3 store (required when RECORDINGS_STORE=s3). */
  S3_BUCKET: z.string().min(1).optional(),
  /** Region of the bucket. */
  S3_REGION: z.string().min(1).default('us-east-1'),
  /** Endpoint of an S3-compatible server (MinIO, Ceph, R2, …); AWS when unset. */
  S3_ENDPOINT: z.string().url().optional(),
  /** Path-style addressing (endpoint/bucket/key), which most non-AWS servers need. */
  S3_FORCE_PATH_STYLE: bool,
  /** Static credentials; when unset the AWS SDK's default chain applies (AWS_* env, profile, instance role). */
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** Prefix of every recording's object key. */
  S3_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9/_.-]*$/, 'letters, digits and / _ . - only')
    .default(''),
  /**
   * A listener serving this process's Prometheus metrics at GET /metrics without authentication, for
   * API-only and worker-only nodes (the operator listener has its own /metrics). Off when unset.
   */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Interface of the metrics listener; loopback by default. */
  METRICS_HOST: z.string().default('127.0.0.1'),
  /**
   * Speech-to-text provider (docs/capture.md): `openai` (any server speaking
   * POST {base}/audio/transcriptions: OpenAI, Groq, whisper.cpp, speaches, vLLM), `deepgram`
   * (POST {base}/v1/listen), or `none` (transcripts come only through the operator API).
   */
  TRANSCRIPTION_PROVIDER: z.enum(['openai', 'deepgram', 'none']).default('none'),
  /** Where the speech-to-text provider listens; default: https://api.openai.com/v1 or https://api.deepgram.com. */
  TRANSCRIPTION_BASE_URL: httpUrl.optional(),
  /** Its API key (sent as Bearer for openai, as Token for deepgram); never logged. */
  TRANSCRIPTION_API_KEY: z.string().min(1).optional(),
  /** Its model; default: whisper-1 (openai) or nova-3 (deepgram). */
  TRANSCRIPTION_MODEL: z.string().min(1).max(200).optional(),
  /**
   * Largest upload the speech-to-text provider accepts, in bytes; default: OpenAI's 25 MB
   * (26214400) for openai, Deepgram's 2 GB for deepgram. Raise it for a self-hosted server.
   */
  TRANSCRIPTION_MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .min(1_000_000)
    .max(2 ** 40)
    .optional(),
  /** Time-out of one speech-to-text request in ms (long recordings take minutes to transcribe). */
  TRANSCRIPTION_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(600_000),
  /** Analysis provider: `rules` (offline, built in) or `openai` (any server speaking POST {base}/chat/completions). */
  ANALYSIS_PROVIDER: z.enum(['rules', 'openai']).default('rules'),
  /** Where the analysis model listens; default https://api.openai.com/v1. */
  ANALYSIS_BASE_URL: httpUrl.optional(),
  /** Its API key (Bearer); never logged. Optional for local servers that need none. */
  ANALYSIS_API_KEY: z.string().min(1).optional(),
  /** Its model; default gpt-5-mini. */
  ANALYSIS_MODEL: z.string().min(1).max(200).default('gpt-5-mini'),
  /**
   * Analysis of test-mode calls (docs/test-mode.md): `rules`, the built-in rules, so that a test call
   * reaches no provider; `provider` sends them to ANALYSIS_PROVIDER like live calls (opt-in).
   */
  TEST_MODE_ANALYSIS: z.enum(['rules', 'provider']).default('rules'),
  /** Time-out of one analysis request in ms. */
  ANALYSIS_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(120_000),
  /**
   * Most bytes of one speech-to-text or analysis answer read (docs/capture.md "Limits"): a longer
   * answer is dropped at the limit, its connection closed, and the stage fails (answer_too_large).
   * 32 MiB holds a four-hour call's transcription; raise it only for longer calls.
   */
  PROVIDER_MAX_ANSWER_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(1024 ** 3)
    .default(32 * 1024 * 1024),
  /** Log level of the JSON logger. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.infer<typeof schema>;

export interface Config extends Omit<Env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'> {
  publicBaseUrl: string;
  trustProxy: boolean | string;
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean;
  /** why private targets are allowed or not: set explicitly, or derived from a local set-up */
  privateTargetsSource: 'setting' | 'local';
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const cfg = parsed.data;
  const problems: string[] = missingProviderKeys(cfg).map((l) => `  ${l}`);
  if (cfg.RECORDINGS_STORE === 's3' && !cfg.S3_BUCKET)
    problems.push('  S3_BUCKET: required when RECORDINGS_STORE=s3');
  if (Boolean(cfg.S3_ACCESS_KEY_ID) !== Boolean(cfg.S3_SECRET_ACCESS_KEY)) {
    problems.push('  S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY: set both or neither');
  }
  if (problems.length > 0) throw new Error(`Invalid configuration:\n${problems.join('\n')}`);
  const publicBaseUrl = (cfg.PUBLIC_BASE_URL ?? `http://localhost:${cfg.PORT}`).replace(/\/+$/, '');
  const tp = cfg.TRUST_PROXY.trim();
  const trustProxy =
    tp === '' || tp === '0' || tp === 'false' ? false : tp === '1' || tp === 'true' ? true : tp;
  const explicit = cfg.WEBHOOK_ALLOW_PRIVATE_TARGETS;
  const local = !cfg.DATABASE_URL && LOOPBACK_HOST.test(new URL(publicBaseUrl).hostname);
  return {
    ...cfg,
    publicBaseUrl,
    trustProxy,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: explicit === undefined ? local : explicit === '1' || explicit === 'true',
    privateTargetsSource: explicit === undefined ? 'local' : 'setting',
  };
}

/**
 * A provider pointed at its public API (the default base URL) needs a key; a self-hosted server
 * (whisper.cpp, speaches, llama.cpp, Ollama) usually needs none, so a custom base URL may go without.
 */
function missingProviderKeys(cfg: Env): string[] {
  const out: string[] = [];
  const stt = cfg.TRANSCRIPTION_PROVIDER;
  if (stt !== 'none' && !cfg.TRANSCRIPTION_BASE_URL && !cfg.TRANSCRIPTION_API_KEY)
    out.push(
      `TRANSCRIPTION_API_KEY: required when TRANSCRIPTION_PROVIDER=${stt} uses the public API (set TRANSCRIPTION_BASE_URL for a self-hosted server)`,
    );
  if (cfg.ANALYSIS_PROVIDER === 'openai' && !cfg.ANALYSIS_BASE_URL && !cfg.ANALYSIS_API_KEY)
    out.push(
      'ANALYSIS_API_KEY: required when ANALYSIS_PROVIDER=openai uses the public API (set ANALYSIS_BASE_URL for a local server)',
    );
  return out;
}
