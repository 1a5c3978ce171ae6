import type { LookupFunction } from 'node:net';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Db } from './db/types.ts';
import type { ServiceKeys } from './keys.ts';
import type { Logger } from './log.ts';
import type { BlobStore } from './recordings/store.ts';

/** Everything a role needs, wired once by the composition root (main.ts) or a test harness. */
export interface Deps {
  db: Db;
  clock: Clock;
  config: Config;
  keys: ServiceKeys;
  store: BlobStore;
  log: Logger;
  adminToken: string;
  /** DNS lookup for webhook receivers (creation check and handshake); node:dns when absent. Tests inject one. */
  dnsLookup?: LookupFunction;
}
