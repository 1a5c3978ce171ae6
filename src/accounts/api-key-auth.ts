import type { Piggyback } from '../db/piggyback.ts';
import type { Queryable } from '../db/types.ts';
import type { Environment } from '../domain/tenant.ts';
import { hourWindow, minuteWindow } from './rate-limit-windows.ts';

/**
 * Failed authentications allowed per client address per UTC minute before every request from that
 * address answers 429 for the rest of the minute. Generous on purpose: an office behind one NAT
 * with a misconfigured integration never reaches it honestly, while guessing a 256-bit key at
 * 300 tries a minute is hopeless anyway; the throttle only stops floods of guesses.
 */
export const AUTH_FAILURES_PER_MINUTE = 300;

/**
 * Authentication, rate counting and the failed-authentication throttle in ONE round trip.
 *
 * - throttle: this address's failed authentications in the current UTC minute (before this request).
 * - api_key: the live key with this hash, joined to its organization; skipped entirely while the
 *   address is throttled, so keys cannot be probed at speed from a throttled address.
 * - key_count / org_count: when a key was found, +1 on its hourly bucket and its account's hourly
 *   bucket of the key's environment (INSERT … ON CONFLICT DO UPDATE, atomic under concurrency, shared
 *   by every node). The account bucket is counted apart per data environment, same size in both
 *   (spec/api-v1-additions.md "Test mode"): 'org:<id>' for live, 'org:<id>:test' for test.
 * - failure: when no key was found, +1 on the address's per-minute failure bucket.
 * - touched: api_keys.last_used_at, written only by the first request of each key-hour, so the hot
 *   path writes only to rate_limit_windows (unlogged, migration 0004).
 * All sub-statements see one snapshot; the final SELECT always returns exactly one row.
 *
 * A route may piggyback its own read on the same round trip (GET /calls/{id} does): a SELECT that
 * may use the authenticated key's scope as `a.organization_id` and `a.environment` (src/db/tenant-sql.ts
 * inScope) and its parameter as $7; its
 * first row comes back as JSON in `piggyback` (null without a key or without a row). The route
 * still checks scope and entitlement before it shows anything of it.
 *
 * Prepared (named): planning this statement costs more than running it, so PostgreSQL plans it once
 * per connection.
 */
const CTE = `
WITH throttle AS (
  SELECT count FROM rate_limit_windows WHERE bucket = $2::text AND window_start = $3::timestamptz
), api_key AS (
  SELECT k.id, k.user_id, k.organization_id, k.environment, k.scopes, k.rate_limit_per_hour,
         o.entitlement, o.account_rate_limit_per_hour
    FROM api_keys k JOIN organizations o ON o.id = k.organization_id
   WHERE k.key_hash = $1::text AND k.revoked_at IS NULL
     AND COALESCE((SELECT count FROM throttle), 0) < $5::int
), key_count AS (
  INSERT INTO rate_limit_windows AS w (bucket, window_start, count)
  SELECT 'key:' || id, $4::timestamptz, 1 FROM api_key
  ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count + 1
  RETURNING w.count
), org_count AS (
  INSERT INTO rate_limit_windows AS w (bucket, window_start, count)
  SELECT 'org:' || organization_id || CASE WHEN environment = 'test' THEN ':test' ELSE '' END, $4::timestamptz, 1
    FROM api_key
  ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count + 1
  RETURNING w.count
), failure AS (
  INSERT INTO rate_limit_windows AS w (bucket, window_start, count)
  SELECT $2::text, $3::timestamptz, 1 WHERE NOT EXISTS (SELECT 1 FROM api_key)
  ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count + 1
  RETURNING w.count
), touched AS (
  UPDATE api_keys SET last_used_at = $6::timestamptz
   WHERE id = (SELECT id FROM api_key) AND (SELECT count FROM key_count) = 1
  RETURNING 1
)
`;

const COLUMNS = `a.id, a.user_id, a.organization_id, a.environment, a.scopes, a.rate_limit_per_hour, a.entitlement,
       a.account_rate_limit_per_hour,
       (SELECT count FROM key_count) AS key_count,
       (SELECT count FROM org_count) AS org_count,
       COALESCE((SELECT count FROM throttle), 0) AS failures_before`;

const FROM = `
  FROM (VALUES (1)) AS one LEFT JOIN api_key a ON true`;

export type { Piggyback };

export interface AuthStatement {
  name: string;
  sql: string;
}

export function authStatement(piggyback?: Piggyback): AuthStatement {
  if (!piggyback) return { name: 'api_authenticate_v2', sql: `${CTE} SELECT ${COLUMNS}${FROM}` };
  // The piggyback comes first in the select list: PostgreSQL evaluates it, and the counter upserts
  // (key_count, org_count) only when their columns are reached, in that order. So the read runs
  // before the counter rows are locked and those locks are held for less time; a different order
  // would be slower, never wrong.
  return {
    name: piggyback.name,
    sql: `${CTE}
SELECT (SELECT to_json(p) FROM (${piggyback.sql}) p LIMIT 1) AS piggyback,
       ${COLUMNS}${FROM}`,
  };
}

interface Row {
  id: string | null;
  user_id: string;
  organization_id: string;
  environment: Environment;
  scopes: string[];
  rate_limit_per_hour: number;
  entitlement: 'active' | 'inactive';
  account_rate_limit_per_hour: number;
  key_count: number;
  org_count: number;
  failures_before: number;
  piggyback?: unknown;
}

export interface AuthenticatedKey {
  apiKeyId: string;
  userId: string;
  organizationId: string;
  /** the key's data environment: the scope of everything it reads and writes */
  environment: Environment;
  scopes: string[];
  entitlement: 'active' | 'inactive';
  keyLimit: number;
  keyCount: number;
  accountLimit: number;
  accountCount: number;
}

export type AuthOutcome =
  | { kind: 'throttled' }
  | { kind: 'unauthenticated' }
  | { kind: 'authenticated'; key: AuthenticatedKey; piggyback: unknown };

/** keyHash null = no usable Bearer key in the request (still a failed authentication). */
export async function authenticateAndCount(
  db: Queryable,
  input: { keyHash: string | null; clientAddress: string; now: Date; piggybackParam?: unknown },
  statement: AuthStatement = authStatement(),
): Promise<AuthOutcome> {
  const params: unknown[] = [
    input.keyHash,
    `authfail:${input.clientAddress}`,
    minuteWindow(input.now),
    hourWindow(input.now),
    AUTH_FAILURES_PER_MINUTE,
    input.now,
  ];
  if (statement.sql.includes('$7')) params.push(input.piggybackParam ?? null);
  const { rows } = await db.query<Row>(statement.sql, params, { name: statement.name });
  const r = rows[0];
  if (r.failures_before >= AUTH_FAILURES_PER_MINUTE) return { kind: 'throttled' };
  if (r.id === null) return { kind: 'unauthenticated' };
  return {
    kind: 'authenticated',
    key: {
      apiKeyId: r.id,
      userId: r.user_id,
      organizationId: r.organization_id,
      environment: r.environment,
      scopes: r.scopes,
      entitlement: r.entitlement,
      keyLimit: r.rate_limit_per_hour,
      keyCount: Number(r.key_count),
      accountLimit: r.account_rate_limit_per_hour,
      accountCount: Number(r.org_count),
    },
    piggyback: r.piggyback ?? null,
  };
}
