import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Keys derived from the one master key (DESIGN.md "Security defaults"). */
export interface ServiceKeys {
  /** HMAC key of recording-link tokens. */
  linkSigningKey: Buffer;
  /** AES-256-GCM key for webhook signing secrets at rest. */
  secretEncryptionKey: Buffer;
}

export function deriveKeys(master: Buffer): ServiceKeys {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));
  return {
    linkSigningKey: derive('callcap recording links v1'),
    secretEncryptionKey: derive('callcap webhook secrets v1'),
  };
}

export function parseMasterKey(value: string): Buffer {
  const v = value.trim();
  const buf = /^[0-9a-f]{64}$/i.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (buf.length !== 32) throw new Error('MASTER_KEY must be 32 bytes, given as 64 hex characters or base64');
  return buf;
}

/** Reads DATA_DIR/<name>, or creates it with fresh random content (mode 0600). */
export async function loadOrCreateSecretFile(
  dataDir: string,
  name: string,
  make: () => string,
): Promise<{ value: string; created: boolean }> {
  const existing = await readSecretFile(dataDir, name);
  if (existing !== null) return { value: existing, created: false };
  const value = make();
  await writeSecretFile(dataDir, name, value);
  return { value, created: true };
}

/** The secret stored in DATA_DIR/name, or null when there is none yet. */
export async function readSecretFile(dataDir: string, name: string): Promise<string | null> {
  try {
    return (await readFile(join(dataDir, name), 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return null;
  }
}

/** Writes a new secret file, readable by the owner only; fails if one exists. */
export async function writeSecretFile(dataDir: string, name: string, value: string): Promise<void> {
  const file = join(dataDir, name);
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, value + '\n', { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
}

export const randomHex = (bytes: number) => randomBytes(bytes).toString('hex');
export const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');
