import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { openDatabase } from './db/index.ts';
import type { Deps } from './deps.ts';
import { buildOperatorApp } from './http/operator/app.ts';
import { buildPublicApp } from './http/public/app.ts';
import { deriveKeys, loadOrCreateSecretFile, parseMasterKey, randomHex } from './keys.ts';
import { createLogger } from './log.ts';
import { fileBlobStore } from './recordings/store.ts';
import { seedDemoIfEmpty } from './seed/seed.ts';

export type Role = 'api' | 'operator' | 'worker';

export interface Running {
  deps: Deps;
  publicApp?: FastifyInstance;
  operatorApp?: FastifyInstance;
  close(): Promise<void>;
}

/** Builds the dependencies once and starts the requested roles. */
export async function buildDeps(config: Config): Promise<{ deps: Deps; adminTokenCreated: boolean }> {
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
  const admin = config.ADMIN_TOKEN
    ? { value: config.ADMIN_TOKEN, created: false }
    : await loadOrCreateSecretFile(config.DATA_DIR, 'admin-token', () => `cc_admin_${randomHex(24)}`);
  const deps: Deps = {
    db,
    clock: systemClock,
    config,
    keys: deriveKeys(master),
    store: fileBlobStore(join(config.DATA_DIR, 'recordings')),
    log,
    adminToken: admin.value,
  };
  return { deps, adminTokenCreated: admin.created };
}

export async function startRoles(config: Config, roles: Role[]): Promise<Running> {
  const { deps, adminTokenCreated } = await buildDeps(config);
  const out: string[] = [];
  let publicApp: FastifyInstance | undefined;
  let operatorApp: FastifyInstance | undefined;
  const stops: Array<() => Promise<void>> = [];

  // The demo seed is for the embedded database only: never touch an operator's PostgreSQL.
  const demo = config.DATABASE_URL ? null : await seedDemoIfEmpty(deps);
  if (roles.includes('api')) {
    publicApp = await buildPublicApp(deps);
    await publicApp.listen({ port: config.PORT, host: config.HOST });
    stops.push(() => publicApp!.close());
    out.push(
      `Public API    ${config.publicBaseUrl}/api/v1  (listening on ${config.HOST}:${portOf(publicApp)})`,
    );
  }
  if (roles.includes('operator')) {
    operatorApp = await buildOperatorApp(deps);
    await operatorApp.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
    stops.push(() => operatorApp!.close());
    out.push(`Operator API  http://${urlHost(config.ADMIN_HOST)}:${portOf(operatorApp)}/admin/v1`);
    if (adminTokenCreated)
      out.push(`Operator token (saved in ${join(config.DATA_DIR, 'admin-token')}): ${deps.adminToken}`);
  }
  if (roles.includes('worker')) {
    const { startWorkers } = await import('./worker.ts');
    stops.push(await startWorkers(deps));
    out.push('Worker        webhook deliveries, retention sweeps, reconciliation');
  }
  const ready = `Call Capture Service is ready.\n${out.map((l) => `  ${l}`).join('\n')}`;
  process.stdout.write(`\n${ready}${demo ? `\n\n${demo}` : ''}\n\n`);
  return {
    deps,
    publicApp,
    operatorApp,
    async close() {
      for (const stop of stops.reverse()) await stop().catch(() => {});
      await deps.db.close();
    },
  };
}

/** The port a listener actually got (PORT=0 picks a free one). */
const portOf = (app: FastifyInstance): number => (app.server.address() as AddressInfo).port;

/** IPv6 literals need brackets in a URL. */
const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host);
