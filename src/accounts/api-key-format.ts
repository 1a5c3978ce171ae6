import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../keys.ts';

/**
 * API keys: "cc_live_" + 32 random bytes base64url (43 chars). Only SHA-256(key) is stored; the
 * prefix (first 12 characters) is kept so users can tell keys apart in lists.
 * A fast hash is right here: the key is 256 random bits, so there is nothing to brute-force.
 */
export const API_KEY_PREFIX = 'cc_live_';

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
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
