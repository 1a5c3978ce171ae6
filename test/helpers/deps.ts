import type { DestinationStream } from 'pino';
import { captureProvidersFromConfig } from '../../src/capture/jobs/providers.ts';
import { FakeClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { deriveKeys } from '../../src/keys.ts';
import { createLogger } from '../../src/log.ts';
import { blobStoreFromConfig } from '../../src/recordings/store-from-config.ts';

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
  /** where the log goes, at every level (default: nowhere, LOG_LEVEL silent) */
  logTo?: DestinationStream,
): Deps & { clock: FakeClock } {
  const config = loadConfig({
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: 'https://calls.example.test',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const clock = new FakeClock(T0);
  return {
    db,
    clock,
    config,
    keys: deriveKeys(Buffer.alloc(32, 7)),
    store: blobStoreFromConfig(config),
    log: logTo ? createLogger('trace', logTo) : createLogger('silent'),
    adminToken: ADMIN_TOKEN,
    // as the settings name them (default: rules, no speech-to-text); a test may swap deps.capture
    // for in-test fakes (routes and runners read it per job)
    capture: captureProvidersFromConfig(config, clock),
  };
}
