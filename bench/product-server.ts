import type { IncomingMessage, ServerResponse } from 'node:http';
import { builtInCaptureProviders } from '../src/capture/jobs/providers.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { buildPublicApp } from '../src/http/public/app.ts';
import { deriveKeys } from '../src/keys.ts';
import { createLogger } from '../src/log.ts';
import { fileBlobStore } from '../src/recordings/store.ts';

/**
 * The product's public app on PostgreSQL, as `callcap serve --role api` runs it (pool of 20).
 * Prints its port. BENCH_POOL overrides the pool size, to measure its effect.
 */
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: '/tmp/callcap-bench' });
const db = await openPostgres(process.env.BENCH_DB_URL!, { max: Number(process.env.BENCH_POOL ?? 20) });
const app = await buildPublicApp({
  db,
  clock: systemClock,
  config,
  keys: deriveKeys(Buffer.alloc(32, 1)),
  store: fileBlobStore('/tmp/callcap-bench/recordings'),
  log: createLogger('silent'),
  adminToken: 'bench-admin-token-unused',
  capture: builtInCaptureProviders(),
});
// BENCH_SERVER_TIMING=1: every answer says how long the server took (request received → head
// written), so the benchmark can report the server's own p99 beside the client-observed one. Done on
// the HTTP server (first listener), so it covers every route whatever plugin registered it.
if (process.env.BENCH_SERVER_TIMING === '1') {
  app.server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    const t0 = process.hrtime.bigint();
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (!this.headersSent) this.setHeader('server-timing', `app;dur=${ms.toFixed(2)}`);
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];
  });
}
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`PORT ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
