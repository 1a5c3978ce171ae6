import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { MINUTE } from '../clock.ts';
import type { Queryable } from '../db/types.ts';
import type { ServiceKeys } from '../keys.ts';

/**
 * A secret shown once after a redirect (post/redirect/get of a form that creates one: "Create API
 * key", "Create subscription", a secret rotation). The POST stores the secret here and answers 303 to `…?reveal=<id>`; the GET takes it out
 * (DELETE … RETURNING), so it is shown by one answer only and a reload neither shows it again nor
 * creates a second one. The id in the address is not the secret: the row is bound to the session
 * that made it (another session's GET finds nothing), encrypted with AES-256-GCM under a key derived
 * from the master key (a read of the table reveals nothing), and gone after REVEAL_VALID_MS or with
 * the session.
 */
export const REVEAL_VALID_MS = 10 * MINUTE;
const ID_SHAPE = /^[A-Za-z0-9_-]{22}$/;
/**
 * api_key: a new API key; invitation_link: an invitation's link, shown to its sender when no SMTP_URL
 * sends it; webhook_secret: a webhook subscription's new signing secret (at creation or a rotation's).
 */
export type RevealKind = 'api_key' | 'invitation_link' | 'webhook_secret';

const keyOf = (keys: ServiceKeys) =>
  Buffer.from(
    hkdfSync('sha256', keys.secretEncryptionKey, Buffer.alloc(0), 'callcap one-time reveals v1', 32),
  );

function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), ct].map((b) => b.toString('base64url')).join('.');
}

function open(key: Buffer, sealed: string, aad: string): string | null {
  const [iv, tag, ct] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !tag || !ct) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', key, iv);
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(tag);
    return Buffer.concat([d.update(ct), d.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** Keeps a secret for the session's next page; answers the id to put in the redirect's address. */
export async function stashSecret(
  q: Queryable,
  keys: ServiceKeys,
  r: { sessionId: string; kind: RevealKind; secret: string; now: Date },
): Promise<string> {
  const id = randomBytes(16).toString('base64url');
  await q.query('DELETE FROM secret_reveals WHERE expires_at <= $1', [r.now]);
  await q.query(
    `INSERT INTO secret_reveals (id, organization_id, session_id, kind, ciphertext, created_at, expires_at)
     SELECT $1, s.organization_id, s.id, $3, $4, $5, $6 FROM sessions s WHERE s.id = $2`,
    [
      id,
      r.sessionId,
      r.kind,
      seal(keyOf(keys), r.secret, `${r.sessionId}\n${r.kind}`),
      r.now,
      new Date(r.now.getTime() + REVEAL_VALID_MS),
    ],
  );
  return id;
}

/** The secret stashed under id by this session, once; null when taken already, expired or not this session's. */
export async function takeSecret(
  q: Queryable,
  keys: ServiceKeys,
  r: { sessionId: string; kind: RevealKind; id: string; now: Date },
): Promise<string | null> {
  if (!ID_SHAPE.test(r.id)) return null;
  const { rows } = await q.query<{ ciphertext: string }>(
    `DELETE FROM secret_reveals WHERE id = $1 AND session_id = $2 AND kind = $3 AND expires_at > $4
     RETURNING ciphertext`,
    [r.id, r.sessionId, r.kind, r.now],
  );
  return rows[0] ? open(keyOf(keys), rows[0].ciphertext, `${r.sessionId}\n${r.kind}`) : null;
}
