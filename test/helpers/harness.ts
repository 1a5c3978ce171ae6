import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { FakeClock } from '../../src/clock.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { buildOperatorApp } from '../../src/http/operator/app.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { deriveKeys } from '../../src/keys.ts';
import { createLogger } from '../../src/log.ts';
import { fileBlobStore } from '../../src/recordings/store.ts';
import { createTestDb } from './db.ts';
import { checkApiResponse } from './openapi-check.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface Harness {
  db: Db;
  clock: FakeClock;
  deps: Deps;
  config: Config;
  app: FastifyInstance;
  operator: FastifyInstance;
  dataDir: string;
  close(): Promise<void>;
}

/** One per test file: a migrated database, a fake clock, the public and operator apps (inject(), no ports). */
export async function createHarness(env: Record<string, string> = {}): Promise<Harness> {
  const db = await createTestDb();
  const dataDir = await mkdtemp(join(tmpdir(), 'callcap-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: 'https://calls.example.test',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const clock = new FakeClock('2026-06-15T10:00:00.000Z');
  const deps: Deps = {
    db,
    clock,
    config,
    keys: deriveKeys(Buffer.alloc(32, 7)),
    store: fileBlobStore(join(dataDir, 'recordings')),
    log: createLogger('silent'),
    adminToken: ADMIN_TOKEN,
  };
  const app = await buildPublicApp(deps);
  checkEveryApiResponse(app);
  const operator = await buildOperatorApp(deps);
  await app.ready();
  await operator.ready();
  return {
    db,
    clock,
    deps,
    config,
    app,
    operator,
    dataDir,
    async close() {
      await app.close();
      await operator.close();
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Every answer the public app gives under /api/v1 in any test is checked against the OpenAPI
 * document (status documented, body and headers valid): a response the document does not describe
 * fails the test that received it.
 */
function checkEveryApiResponse(app: FastifyInstance): void {
  const inject = app.inject.bind(app) as (
    opts: unknown,
  ) => Promise<Awaited<ReturnType<FastifyInstance['inject']>>>;
  const checked = async (opts: unknown) => {
    const res = await inject(opts);
    const o = (typeof opts === 'string' ? { url: opts } : opts) as {
      method?: string;
      url?: string;
      path?: string;
    };
    const url = o.url ?? o.path ?? '/';
    checkApiResponse(o.method ?? 'GET', url, res);
    return res;
  };
  (app as unknown as { inject: typeof checked }).inject = checked;
}
