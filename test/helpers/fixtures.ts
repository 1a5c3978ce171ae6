import { generateApiKey } from '../../src/accounts/api-key-format.ts';
import type { Queryable } from '../../src/db/types.ts';
import { newId } from '../../src/ids.ts';

/** Raw-SQL fixtures so each test file can set up exactly the rows it needs. */
const T0 = new Date('2026-06-01T00:00:00.000Z');

export async function insertOrg(
  db: Queryable,
  o: {
    name?: string;
    entitlement?: 'active' | 'inactive';
    country?: string | null;
    accountRateLimit?: number;
  } = {},
): Promise<{ orgId: string; ownerId: string }> {
  const orgId = newId();
  const ownerId = newId();
  await db.query(
    `INSERT INTO organizations (id, name, entitlement, country, account_rate_limit_per_hour, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [
      orgId,
      o.name ?? 'Acme Plumbing',
      o.entitlement ?? 'active',
      o.country ?? null,
      o.accountRateLimit ?? 5000,
      T0,
    ],
  );
  await db.query(
    `INSERT INTO users (id, organization_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, 'owner', $5)`,
    [ownerId, orgId, `owner-${orgId}@example.test`, 'x', T0],
  );
  return { orgId, ownerId };
}

export async function insertApiKey(
  db: Queryable,
  k: { orgId: string; userId: string; scopes?: string[]; rateLimit?: number },
): Promise<{ keyId: string; key: string }> {
  const keyId = newId();
  const { key, prefix, hash } = generateApiKey();
  await db.query(
    `INSERT INTO api_keys (id, organization_id, user_id, prefix, key_hash, scopes, rate_limit_per_hour, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      keyId,
      k.orgId,
      k.userId,
      prefix,
      hash,
      k.scopes ?? ['read.calls', 'read.recordings'],
      k.rateLimit ?? 1000,
      T0,
    ],
  );
  return { keyId, key };
}

export interface CallRow {
  id?: string;
  orgId: string;
  direction?: 'inbound' | 'outbound';
  callerPhone?: string;
  customerE164?: string | null;
  customerNational?: string | null;
  companyE164?: string | null;
  callerName?: string | null;
  crmStatus?: string;
  reviewStatus?: string | null;
  outboundLifecycle?: string | null;
  recordingState?: 'pending' | 'available' | 'refused' | 'not_captured' | 'deleted';
  recordingMode?: 'normal' | 'no_recording';
  recordingKey?: string | null;
  duration?: number | null;
  trashedAt?: Date | null;
  pendingDeletionAt?: Date | null;
  erasedAt?: Date | null;
  createdAt?: Date;
}

export async function insertCall(db: Queryable, c: CallRow): Promise<string> {
  const id = c.id ?? newId();
  const e164 = c.customerE164 === undefined ? '+14155552671' : c.customerE164;
  const rdigits = e164 ? e164.replace(/\D/g, '').split('').reverse().join('') : null;
  const created = c.createdAt ?? T0;
  await db.query(
    `INSERT INTO calls (id, organization_id, direction, caller_phone, customer_phone_e164, customer_phone_national,
       customer_phone_rdigits, company_phone_e164, caller_name, crm_status, review_status, outbound_lifecycle,
       recording_state, recording_mode, recording_key, duration, trashed_at, pending_deletion_at,
       deletion_scheduled_at, erased_at, created_at, updated_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$18,$19,$20,$20)`,
    [
      id,
      c.orgId,
      c.direction ?? 'inbound',
      c.callerPhone ?? e164 ?? 'anonymous',
      e164,
      c.customerNational === undefined ? (e164 ? '(415) 555-2671' : null) : c.customerNational,
      rdigits,
      c.companyE164 === undefined ? '+14155550100' : c.companyE164,
      c.callerName ?? null,
      c.crmStatus ?? 'new',
      c.reviewStatus ?? null,
      c.outboundLifecycle ?? null,
      c.recordingState ?? 'pending',
      c.recordingMode ?? 'normal',
      c.recordingKey ?? null,
      c.duration ?? null,
      c.trashedAt ?? null,
      c.pendingDeletionAt ?? null,
      c.erasedAt ?? null,
      created,
    ],
  );
  return id;
}
