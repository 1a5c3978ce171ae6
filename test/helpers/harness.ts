import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { FakeClock } from '../../src/clock.ts';
import type { Config } from '../../src/config.ts';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { buildOperatorApp } from '../../src/http/operator/app.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { createTestDb } from './db.ts';
import { testDeps } from './deps.ts';
import { checkApiResponse } from './openapi-check.ts';

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
export async function createHarness(
  env: Record<string, string> = {},
  opts: { logTo?: DestinationStream } = {},
): Promise<Harness> {
  const db = await createTestDb();
  const dataDir = await mkdtemp(join(tmpdir(), 'callcap-test-'));
  const deps = testDeps(db, dataDir, env, opts.logTo);
  const { clock, config } = deps;
  let app: FastifyInstance | undefined;
  let operator: FastifyInstance | undefined;
  try {
    app = await buildPublicApp(deps);
    checkEveryApiResponse(app);
    operator = await buildOperatorApp(deps);
    await app.ready();
    await operator.ready();
  } catch (err) {
    // Nothing half-built stays open (a database pool would keep the test process alive).
    await app?.close();
    await operator?.close();
    await db.close();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
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
