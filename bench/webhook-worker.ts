/**
 * One delivery worker as its own process, for bench/webhooks.ts's "two worker processes" figure:
 * the product's createDeliveryWorker on its own pool, as `callcap serve --role worker` runs it.
 * Argument: a JSON object { url, masterKeyHex, concurrency }. It sends 'ready' once its pool is
 * open, starts delivering on 'start', stops (waiting for its in-flight attempts) on 'stop', then
 * reports its CPU time (µs) and exits.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtInCaptureProviders } from '../src/capture/jobs/providers.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { openPostgres } from '../src/db/postgres.ts';
import type { Deps } from '../src/deps.ts';
import { deriveKeys } from '../src/keys.ts';
import { createLogger } from '../src/log.ts';
import { fileBlobStore } from '../src/recordings/store.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../src/webhooks/delivery/worker.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as {
  url: string;
  masterKeyHex: string;
  concurrency: number;
};
const db = await openPostgres(args.url, { max: 20 });
const deps: Deps = {
  db,
  clock: systemClock,
  config: loadConfig({
    DATA_DIR: await mkdtemp(join(tmpdir(), 'cc-bench-worker-')),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    LOG_LEVEL: 'silent',
  }),
  keys: deriveKeys(Buffer.from(args.masterKeyHex, 'hex')),
  store: fileBlobStore(join(tmpdir(), 'cc-bench-recordings')),
  capture: builtInCaptureProviders(),
  log: createLogger('silent'),
  adminToken: 'bench-admin-token-0123456789',
};
let worker: DeliveryWorker | undefined;
process.on('message', async (m) => {
  if (m === 'start') {
    worker = createDeliveryWorker(deps, { concurrency: args.concurrency });
    await worker.start();
  }
  if (m === 'stop') {
    await worker?.stop();
    worker = undefined;
    const u = process.cpuUsage();
    process.send?.({ stopped: true, cpu: u.user + u.system });
  }
  if (m === 'exit') {
    await db.close();
    process.exit(0);
  }
});
process.send?.('ready');
