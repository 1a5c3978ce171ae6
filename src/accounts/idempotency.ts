import { createHash } from 'node:crypto';
import { HOUR, MINUTE } from '../clock.ts';
import { inScope, scopeParams } from '../db/tenant-sql.ts';
import type { Queryable } from '../db/types.ts';
import type { TenantScope } from '../domain/tenant.ts';

/**
 * Idempotency-Key of the public API's writes, as Stripe has it (spec/api-v1-additions.md "Placing
 * calls"; docs/decisions.md "Idempotency keys"). A key is scoped to the organization, the data
 * environment (two API keys of one organization share it) and the operation; it is kept 24 hours.
 *
 * The first request claims the key (one INSERT … ON CONFLICT DO NOTHING: of two requests at the
 * same moment exactly one inserts), runs the operation and stores its answer (finish). A request
 * with the same key and the same body finds the stored answer and gets it again (replay); one that
 * comes while the first is still running finds no answer yet (pending) and waits for it
 * (api-v1/idempotency.ts). A different body answers 422 IDEMPOTENCY_KEY_REUSED. An answer that
 * must not be replayed (429, 5xx) releases the key, so a retry runs the operation again. A claim
 * whose request died before answering (a crash) is taken over after PENDING_TAKEOVER_MS.
 */

/** How long a key and its answer are kept (and replayed). */
export const IDEMPOTENCY_TTL_MS = 24 * HOUR;
/** A claim without an answer this old belongs to a request that died: the next request takes it over. */
export const PENDING_TAKEOVER_MS = 5 * MINUTE;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** 1 to 255 printable ASCII characters (space included). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export type IdempotentOperation = 'createContact' | 'placeCall';

export interface IdempotencyRef {
  scope: TenantScope;
  operation: IdempotentOperation;
  key: string;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'reused' }
  | { kind: 'pending' };

/** The fingerprint of a request body: SHA-256 of its JSON with object keys sorted (spacing and key order do not matter). */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

const KEY_WHERE = `${inScope(null, 1, 2)} AND operation = $3 AND key = $4`;
const keyParams = (r: IdempotencyRef) => [...scopeParams(r.scope), r.operation, r.key];

/** Claims the key for this request, or says what an earlier request with it left. */
export async function claimIdempotencyKey(
  db: Queryable,
  ref: IdempotencyRef,
  fingerprint: string,
  now: Date,
): Promise<Claim> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db.query(
      `INSERT INTO idempotency_keys (organization_id, environment, operation, key, fingerprint, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (organization_id, environment, operation, key) DO NOTHING
       RETURNING 1`,
      [...keyParams(ref), fingerprint, now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)],
    );
    if (inserted.rowCount === 1) return { kind: 'claimed' };
    const { rows } = await db.query<{
      fingerprint: string;
      status: number | null;
      body: string | null;
      created_at: Date;
      expires_at: Date;
    }>(`SELECT fingerprint, status, body, created_at, expires_at FROM idempotency_keys WHERE ${KEY_WHERE}`, [
      ...keyParams(ref),
    ]);
    const row = rows[0];
    if (!row) continue; // released or swept meanwhile: claim again
    if (row.expires_at.getTime() <= now.getTime()) {
      // Expired but not swept yet: a fresh key. Only the row seen is deleted (a racer may have renewed it).
      await db.query(`DELETE FROM idempotency_keys WHERE ${KEY_WHERE} AND expires_at <= $5`, [
        ...keyParams(ref),
        now,
      ]);
      continue;
    }
    if (row.fingerprint !== fingerprint) return { kind: 'reused' };
    if (row.status !== null && row.body !== null)
      return { kind: 'replay', status: row.status, body: row.body };
    if (now.getTime() - row.created_at.getTime() >= PENDING_TAKEOVER_MS) {
      const taken = await db.query(
        `UPDATE idempotency_keys SET created_at = $5 WHERE ${KEY_WHERE} AND status IS NULL AND created_at = $6`,
        [...keyParams(ref), now, row.created_at],
      );
      if (taken.rowCount === 1) return { kind: 'claimed' };
      continue;
    }
    return { kind: 'pending' };
  }
  return { kind: 'pending' };
}

/** Stores the answer of the request that claimed the key (replayed to later requests with it). */
export async function finishIdempotencyKey(
  db: Queryable,
  ref: IdempotencyRef,
  answer: { status: number; body: string },
): Promise<void> {
  await db.query(`UPDATE idempotency_keys SET status = $5, body = $6 WHERE ${KEY_WHERE} AND status IS NULL`, [
    ...keyParams(ref),
    answer.status,
    answer.body,
  ]);
}

/** Forgets a claim whose answer must not be replayed (429, 5xx): a retry with the key runs again. */
export async function releaseIdempotencyKey(db: Queryable, ref: IdempotencyRef): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE ${KEY_WHERE} AND status IS NULL`, keyParams(ref));
}

/** The worker's sweep: deletes keys past their 24 hours. Returns how many. */
export async function deleteExpiredIdempotencyKeys(db: Queryable, now: Date): Promise<number> {
  const r = await db.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]);
  return r.rowCount;
}
