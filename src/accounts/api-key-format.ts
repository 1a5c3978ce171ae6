import { randomBytes } from 'node:crypto';
import type { Environment } from '../domain/tenant.ts';
import { sha256Hex } from '../keys.ts';

/**
 * API keys: "cc_live_" (a test key: "cc_test_", spec/api-v1-additions.md "Test mode") + 32 random
 * bytes base64url (43 chars). Only SHA-256(key) is stored; the prefix (first 12 characters) is kept
 * so users can tell keys apart in lists. The environment a key works in is its row's, never read
 * from the prefix: the prefix only lets people see it.
 * A fast hash is right here: the key is 256 random bits, so there is nothing to brute-force.
 */
export const API_KEY_PREFIX = 'cc_live_';
export const API_KEY_PREFIXES: Record<Environment, string> = { live: API_KEY_PREFIX, test: 'cc_test_' };

export function generateApiKey(environment: Environment = 'live'): {
  key: string;
  prefix: string;
  hash: string;
} {
  const key = API_KEY_PREFIXES[environment] + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

export const hashApiKey = (key: string): string => sha256Hex(key);

export const SCOPES = [
  'read.calls',
  'read.recordings',
  'write.calls',
  'read.contacts',
  'write.contacts',
  'manage.webhooks',
  'manage.api_keys',
] as const;
export type Scope = (typeof SCOPES)[number];
