import { inAnyScope, inScope, scopeParams } from '../db/tenant-sql.ts';
import type { Queryable } from '../db/types.ts';
import type { Environment, TenantScope } from '../domain/tenant.ts';
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
  /** the data environment the key reads and writes (a test key: cc_test_…) */
  environment: Environment;
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
    /** live (default) or test: the key's world, for good */
    environment?: Environment;
    userId?: string;
    scopes: readonly string[];
    name?: string | null;
    rateLimitPerHour?: number;
    now: Date;
  },
): Promise<{ api_key_id: string; key: string; environment: Environment }> {
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
  const environment = k.environment ?? 'live';
  const { key, prefix, hash } = generateApiKey(environment);
  await tx.query(
    `INSERT INTO api_keys (id, organization_id, environment, user_id, name, prefix, key_hash, scopes,
       rate_limit_per_hour, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [id, k.organizationId, environment, userId, name, prefix, hash, scopes, rate, k.now],
  );
  return { api_key_id: id, key, environment };
}

/**
 * Revokes a key (idempotent: a revoked key keeps its first revoked_at). `scope` limits the key to
 * one organization's environment (web app, console API); the operator API omits it (any key).
 * Returns false when no such key.
 */
export async function revokeApiKey(
  tx: Queryable,
  r: { apiKeyId: string; scope?: TenantScope; now: Date },
): Promise<boolean> {
  if (!isUuid(r.apiKeyId)) return false;
  const { rowCount } = await tx.query(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2)
      WHERE id = $1 AND ${inAnyScope(null, 3, 4)} RETURNING id`,
    [r.apiKeyId, r.now, r.scope?.organizationId ?? null, r.scope?.environment ?? null],
  );
  return rowCount > 0;
}

type KeyRow = Omit<ApiKeySummary, 'created_at' | 'last_used_at' | 'revoked' | 'revoked_at'> & {
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

/** Every key of the scope, newest first, revoked ones included (flagged). */
export async function listApiKeys(q: Queryable, scope: TenantScope): Promise<ApiKeySummary[]> {
  return keysWhere(q, inScope(null, 1, 2), scopeParams(scope));
}

/** Every key of the organization in both environments (the operator API), newest first. */
export async function listOrganizationApiKeys(
  q: Queryable,
  organizationId: string,
): Promise<ApiKeySummary[]> {
  return keysWhere(q, 'organization_id = $1', [organizationId]);
}

async function keysWhere(q: Queryable, where: string, params: unknown[]): Promise<ApiKeySummary[]> {
  const { rows } = await q.query<KeyRow>(
    `SELECT id AS api_key_id, user_id, name, environment, prefix, scopes, rate_limit_per_hour, created_at,
            last_used_at, revoked_at
       FROM api_keys WHERE ${where} ORDER BY created_at DESC, id DESC`,
    params,
  );
  return rows.map((r) => ({
    ...r,
    created_at: r.created_at.toISOString(),
    last_used_at: r.last_used_at?.toISOString() ?? null,
    revoked: r.revoked_at !== null,
    revoked_at: r.revoked_at?.toISOString() ?? null,
  }));
}
