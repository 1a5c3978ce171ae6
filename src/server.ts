import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { captureProvidersFromConfig } from './capture/jobs/providers.ts';
import { systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { openDatabase } from './db/index.ts';
import type { Deps } from './deps.ts';
import { buildOperatorApp } from './http/operator/app.ts';
import { buildPublicApp } from './http/public/app.ts';
import {
  deriveKeys,
  loadOrCreateSecretFile,
  parseMasterKey,
  randomHex,
  readSecretFile,
  writeSecretFile,
} from './keys.ts';
import { createLogger } from './log.ts';
import { blobStoreFromConfig } from './recordings/store-from-config.ts';
import { demoResetCommand } from './seed/demo-owner.ts';
import { demoLaterStartNotice, seedDemoIfEmpty } from './seed/seed.ts';

export type Role = 'api' | 'operator' | 'worker';

export interface Running {
  deps: Deps;
  publicApp?: FastifyInstance;
  operatorApp?: FastifyInstance;
  metricsApp?: FastifyInstance;
  close(): Promise<void>;
}

/** Builds the dependencies once and starts the requested roles. */
export async function buildDeps(
  config: Config,
): Promise<{ deps: Deps; adminTokenCreated: boolean; saveAdminToken(): Promise<void> }> {
  const log = createLogger(config.LOG_LEVEL);
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolMax: config.DATABASE_POOL_MAX,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  });
  const master = config.MASTER_KEY
    ? parseMasterKey(config.MASTER_KEY)
    : parseMasterKey(
        (await loadOrCreateSecretFile(config.DATA_DIR, 'master-key', () => randomHex(32))).value,
      );
  // A new operator token is written to DATA_DIR only once the listeners are up (saveAdminToken):
  // it is printed once, by the start that creates it, so a start that fails must not create it.
  const stored = config.ADMIN_TOKEN ? null : await readSecretFile(config.DATA_DIR, 'admin-token');
  const admin = config.ADMIN_TOKEN
    ? { value: config.ADMIN_TOKEN, created: false }
    : stored !== null
      ? { value: stored, created: false }
      : { value: `cc_admin_${randomHex(24)}`, created: true };
  const deps: Deps = {
    db,
    clock: systemClock,
    config,
    keys: deriveKeys(master),
    store: blobStoreFromConfig(config),
    log,
    adminToken: admin.value,
    // speech-to-text and analysis as TRANSCRIPTION_PROVIDER / ANALYSIS_PROVIDER name them (docs/capture.md)
    capture: captureProvidersFromConfig(config, systemClock),
  };
  return {
    deps,
    adminTokenCreated: admin.created,
    saveAdminToken: async () => {
      if (admin.created) await writeSecretFile(config.DATA_DIR, 'admin-token', admin.value);
    },
  };
}

export async function startRoles(config: Config, roles: Role[]): Promise<Running> {
  const { deps, adminTokenCreated, saveAdminToken } = await buildDeps(config);
  const out: string[] = [];
  let publicApp: FastifyInstance | undefined;
  let operatorApp: FastifyInstance | undefined;
  let metricsApp: FastifyInstance | undefined;
  const stops: Array<() => Promise<void>> = [];

  const closeAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await deps.db.close();
  };
  let demo: string | null;
  try {
    // Listen first, seed after: a start that cannot listen (a busy port) must not use up the
    // one-time demo credentials, which are printed only by the start that creates them.
    if (roles.includes('api')) {
      // A process that is a worker too transcribes and analyses what its public listener downloaded,
      // as the download's chain (src/capture/jobs/runner.ts): no claim, no NOTIFY, no wake-up.
      const chainStages = roles.includes('worker')
        ? (await import('./worker.ts')).workerStageHandlers()
        : undefined;
      const app = await buildPublicApp(deps, { chainStages });
      // Closing it stops the recording downloads in progress (their jobs go back to the queue).
      stops.push(() => app.close());
      await listenOrExplain(app, 'PORT', 'HOST', config.PORT, config.HOST);
      publicApp = app;
      out.push(`Public API    ${config.publicBaseUrl}/api/v1  (listening on ${config.HOST}:${portOf(app)})`);
    }
    if (roles.includes('operator')) {
      const app = await buildOperatorApp(deps);
      stops.push(() => app.close());
      await listenOrExplain(app, 'ADMIN_PORT', 'ADMIN_HOST', config.ADMIN_PORT, config.ADMIN_HOST);
      operatorApp = app;
      out.push(`Operator API  http://${urlHost(config.ADMIN_HOST)}:${portOf(app)}/admin/v1`);
      if (adminTokenCreated)
        out.push(`Operator token (saved in ${join(config.DATA_DIR, 'admin-token')}): ${deps.adminToken}`);
    }
    if (config.METRICS_PORT !== undefined) {
      const { buildMetricsApp } = await import('./http/metrics-listener.ts');
      const app = buildMetricsApp();
      stops.push(() => app.close());
      await listenOrExplain(app, 'METRICS_PORT', 'METRICS_HOST', config.METRICS_PORT, config.METRICS_HOST);
      metricsApp = app;
      out.push(`Metrics       http://${urlHost(config.METRICS_HOST)}:${portOf(app)}/metrics`);
    }
    await saveAdminToken();
    // The demo seed is for the embedded database only: never touch an operator's PostgreSQL. A
    // later start on the demo data says where its credentials were shown and how to get new ones.
    demo = config.DATABASE_URL
      ? null
      : ((await seedDemoIfEmpty(deps)) ??
        (await demoLaterStartNotice(deps, {
          resetCommand: demoResetCommand({
            dataDir: config.DATA_DIR,
            adminTokenFromEnv: config.ADMIN_TOKEN !== undefined,
            adminHost: config.ADMIN_HOST,
            adminPort: operatorApp ? portOf(operatorApp) : config.ADMIN_PORT,
          }),
        })));
    if (roles.includes('worker')) {
      const { startWorkers } = await import('./worker.ts');
      stops.push(await startWorkers(deps));
      out.push('Worker        webhook deliveries, processing jobs, retention sweeps, reconciliation');
    }
    if (config.WEBHOOK_ALLOW_PRIVATE_TARGETS)
      out.push(
        config.privateTargetsSource === 'setting'
          ? 'Webhooks      may target loopback and private addresses (WEBHOOK_ALLOW_PRIVATE_TARGETS=1: development only)'
          : 'Webhooks      may target loopback and private addresses (a local start: embedded database, localhost base URL; set PUBLIC_BASE_URL or WEBHOOK_ALLOW_PRIVATE_TARGETS=0 to refuse them)',
      );
  } catch (err) {
    await closeAll();
    throw err;
  }
  const ready = `Call Capture Service is ready.\n${out.map((l) => `  ${l}`).join('\n')}`;
  process.stdout.write(`\n${ready}${demo ? `\n\n${demo}` : ''}\n\n`);
  return {
    deps,
    publicApp,
    operatorApp,
    metricsApp,
    close: closeAll,
  };
}

/**
 * A start that cannot go on because of a setting: the message names the setting to change, and
 * `callcap serve` prints it as one line (no stack trace) and exits with EXIT_CONFIG.
 */
export class StartupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** sysexits' EX_CONFIG: the start failed on a setting (a busy port, say), not on a bug. */
export const EXIT_CONFIG = 78;

const LISTEN_PROBLEMS: Record<string, (portVar: string, hostVar: string) => string> = {
  EADDRINUSE: (portVar) => `is already in use: stop what listens there, or set ${portVar} to a free port`,
  EACCES: (portVar) =>
    `may not be opened by this user (ports below 1024 need privileges): set ${portVar} to 1024 or above`,
  EADDRNOTAVAIL: (_portVar, hostVar) =>
    `is not an address of this machine: set ${hostVar} to one of its addresses (0.0.0.0 for all)`,
};

/** listen(), with the errors a setting causes turned into a StartupError naming that setting. */
async function listenOrExplain(
  app: FastifyInstance,
  portVar: string,
  hostVar: string,
  port: number,
  host: string,
): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const problem = LISTEN_PROBLEMS[code];
    if (!problem) throw err;
    throw new StartupError(
      `${portVar}=${port} (${hostVar}=${host}): ${urlHost(host)}:${port} ${problem(portVar, hostVar)} (${code}).`,
      { cause: err },
    );
  }
}

/** The port a listener actually got (PORT=0 picks a free one). */
const portOf = (app: FastifyInstance): number => (app.server.address() as AddressInfo).port;

/** IPv6 literals need brackets in a URL. */
const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host);
