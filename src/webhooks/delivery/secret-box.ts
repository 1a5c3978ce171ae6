import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest (DESIGN.md "Security defaults"): AES-256-GCM under
 * deps.keys.secretEncryptionKey with a fresh random 12-byte IV per secret.
 * Stored form: "v1.<iv b64url>.<tag b64url>.<ciphertext b64url>". The version prefix lets a
 * later key or algorithm change coexist with rows written today.
 */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function encryptSecret(key: Buffer, plaintext: string): string {
  if (key.length !== 32) throw new Error('secret encryption key must be 32 bytes');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
}

/** Throws when the ciphertext is malformed, was written under another key, or was tampered with. */
export function decryptSecret(key: Buffer, ciphertext: string): string {
  if (key.length !== 32) throw new Error('secret encryption key must be 32 bytes');
  const parts = ciphertext.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new Error('unrecognised encrypted secret format');
  const iv = Buffer.from(parts[1] ?? '', 'base64url');
  const tag = Buffer.from(parts[2] ?? '', 'base64url');
  const ct = Buffer.from(parts[3] ?? '', 'base64url');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
    throw new Error('unrecognised encrypted secret format');
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
  } catch (err) {
    throw new Error('encrypted secret failed authentication (wrong key or tampered data)', { cause: err });
  }
}
