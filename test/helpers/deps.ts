import { join } from 'node:path';
import { FakeClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { deriveKeys } from '../../src/keys.ts';
import { createLogger } from '../../src/log.ts';
import { fileBlobStore } from '../../src/recordings/store.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** Where every test's fake clock starts. */
export const T0 = '2026-06-15T10:00:00.000Z';

/**
 * Deps as the product wires them, for tests: test configuration (loopback receivers allowed, silent
 * log) plus `env`, a fake clock at T0, fixed keys, recordings under dataDir.
 */
export function testDeps(
  db: Db,
  dataDir: string,
  env: Record<string, string> = {},
): Deps & { clock: FakeClock } {
  const config = loadConfig({
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: 'https://calls.example.test',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    LOG_LEVEL: 'silent',
    ...env,
  });
  return {
    db,
    clock: new FakeClock(T0),
    config,
    keys: deriveKeys(Buffer.alloc(32, 7)),
    store: fileBlobStore(join(dataDir, 'recordings')),
    log: createLogger('silent'),
    adminToken: ADMIN_TOKEN,
  };
}
