import type { LookupFunction } from 'node:net';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Db } from './db/types.ts';
import type { AnalysisProvider, TranscriptionProvider } from './domain/capture-providers.ts';
import type { ServiceKeys } from './keys.ts';
import type { Logger } from './log.ts';
import type { BlobStore } from './recordings/store.ts';

/**
 * The processing providers the job runner (src/capture/jobs/) uses: speech-to-text (null =
 * TRANSCRIPTION_PROVIDER none: uploaded audio waits for a transcript posted by an adapter) and analysis.
 */
export interface CaptureProviders {
  transcription: TranscriptionProvider | null;
  analysis: AnalysisProvider;
}

/** Everything a role needs, wired once by the composition root (main.ts) or a test harness. */
export interface Deps {
  db: Db;
  clock: Clock;
  config: Config;
  keys: ServiceKeys;
  store: BlobStore;
  log: Logger;
  adminToken: string;
  capture: CaptureProviders;
  /** DNS lookup for webhook receivers (creation check and handshake); node:dns when absent. Tests inject one. */
  dnsLookup?: LookupFunction;
}
