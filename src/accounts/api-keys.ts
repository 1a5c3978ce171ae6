import type { Queryable } from '../db/types.ts';
import { AppError, badRequest, notFound } from '../errors.ts';
import { isUuid, newId } from '../ids.ts';
import { generateApiKey, SCOPES } from './api-key-format.ts';
import { findOwner, userBelongsTo } from './users.ts';

export const API_KEY_NAME_MAX_LENGTH = 100;
/** Column default of api_keys.rate_limit_per_hour, repeated here so callers can show it. */
export const DEFAULT_KEY_RATE_LIMIT_PER_HOUR = 1000;

/** A key as lists show it: never the key itself nor its hash. */
export interface ApiKeySummary {
  api_key_id: string;
  user_id: string;
  name: string | null;
  prefix: string;
  scopes: string[];
  rate_limit_per_hour: number;
  created_at: string;
  last_used_at: string | null;
  revoked: boolean;
  revoked_at: string | null;
}

/**
 * Checks a scope list: non-empty, every entry a known scope (reserved scopes are accepted and
 * grant nothing until their operations exist). Returns it without duplicates, in the given order.
 */
export function checkScopes(scopes: readonly string[], field = 'scopes'): string[] {
  if (scopes.length === 0) {
    throw badRequest(
      `Field "${field}" must list at least one scope, e.g. ["read.calls"]; known: ${SCOPES.join(', ')}.`,
      field,
    );
  }
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw badRequest(`Unknown scope "${s}" in "${field}"; known scopes: ${SCOPES.join(', ')}.`, field);
    }
  }
  return [...new Set(scopes)];
}

/** Creates a key for a user of the organization (its owner by default). The key is returned only here. */
export async function createApiKey(
  tx: Queryable,
  k: {
    organizationId: string;
    userId?: string;
    scopes: readonly string[];
    name?: string | null;
    rateLimitPerHour?: number;
    now: Date;
  },
): Promise<{ api_key_id: string; key: string }> {
  const scopes = checkScopes(k.scopes);
  const name = k.name?.trim() || null;
  if (name && name.length > API_KEY_NAME_MAX_LENGTH) {
    throw badRequest(`Field "name" must be at most ${API_KEY_NAME_MAX_LENGTH} characters long.`, 'name');
  }
  const rate = k.rateLimitPerHour ?? DEFAULT_KEY_RATE_LIMIT_PER_HOUR;
  if (!Number.isInteger(rate) || rate <= 0) {
    throw badRequest('Field "rate_limit_per_hour" must be a positive integer.', 'rate_limit_per_hour');
  }
  const org = await tx.query('SELECT 1 FROM organizations WHERE id = $1', [k.organizationId]);
  if (org.rowCount === 0) throw notFound(`No organization ${k.organizationId}.`);
  let userId = k.userId;
  if (userId !== undefined) {
    if (!isUuid(userId) || !(await userBelongsTo(tx, userId, k.organizationId))) {
      throw notFound(
        `No user ${userId} in organization ${k.organizationId}; "user_id" must name one of its users.`,
      );
    }
  } else {
    userId = (await findOwner(tx, k.organizationId)) ?? undefined;
    if (!userId) {
      throw new AppError(
        'VALIDATION_ERROR',
        'The organization has no owner user; pass "user_id" explicitly.',
      );
    }
  }
  const id = newId();
  const { key, prefix, hash } = generateApiKey();
  await tx.query(
    `INSERT INTO api_keys (id, organization_id, user_id, name, prefix, key_hash, scopes, rate_limit_per_hour, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [id, k.organizationId, userId, name, prefix, hash, scopes, rate, k.now],
  );
  return { api_key_id: id, key };
}

/**
 * Revokes a key (idempotent: a revoked key keeps its first revoked_at). organizationId limits the
 * key to one organization (console); the operator API omits it. Returns false when no such key.
 */
export async function revokeApiKey(
  tx: Queryable,
  r: { apiKeyId: string; organizationId?: string; now: Date },
): Promise<boolean> {
  if (!isUuid(r.apiKeyId)) return false;
  const params: unknown[] = [r.apiKeyId, r.now];
  let where = 'id = $1';
  if (r.organizationId !== undefined) {
    params.push(r.organizationId);
    where += ' AND organization_id = $3';
  }
  const { rowCount } = await tx.query(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE ${where} RETURNING id`,
    params,
  );
  return rowCount > 0;
}

type KeyRow = Omit<ApiKeySummary, 'created_at' | 'last_used_at' | 'revoked' | 'revoked_at'> & {
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

/** Every key of the organization, newest first, revoked ones included (flagged). */
export async function listApiKeys(q: Queryable, organizationId: string): Promise<ApiKeySummary[]> {
  const { rows } = await q.query<KeyRow>(
    `SELECT id AS api_key_id, user_id, name, prefix, scopes, rate_limit_per_hour, created_at, last_used_at, revoked_at
       FROM api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id DESC`,
    [organizationId],
  );
  return rows.map((r) => ({
    ...r,
    created_at: r.created_at.toISOString(),
    last_used_at: r.last_used_at?.toISOString() ?? null,
    revoked: r.revoked_at !== null,
    revoked_at: r.revoked_at?.toISOString() ?? null,
  }));
}
