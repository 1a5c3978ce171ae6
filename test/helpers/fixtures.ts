import { Readable } from 'node:stream';
import { generateApiKey } from '../../src/accounts/api-key-format.ts';
import type { Queryable } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { newId } from '../../src/ids.ts';

/** Raw-SQL fixtures so each test file can set up (and read back) exactly the rows it needs. */
const T0 = new Date('2026-06-01T00:00:00.000Z');

/** A well-formed id that names no row. */
export const MISSING = '00000000-0000-4000-8000-000000000000';

export async function insertOrg(
  db: Queryable,
  o: {
    name?: string;
    entitlement?: 'active' | 'inactive';
    country?: string | null;
    accountRateLimit?: number;
  } = {},
): Promise<{ orgId: string; ownerId: string; ownerEmail: string }> {
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
  const ownerEmail = `owner-${orgId}@example.test`;
  await db.query(
    `INSERT INTO users (id, organization_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, 'owner', $5)`,
    [ownerId, orgId, ownerEmail, 'x', T0],
  );
  return { orgId, ownerId, ownerEmail };
}

export async function insertApiKey(
  db: Queryable,
  k: {
    orgId: string;
    userId: string;
    scopes?: string[];
    rateLimit?: number;
    environment?: 'live' | 'test';
  },
): Promise<{ keyId: string; key: string }> {
  const keyId = newId();
  const { key, prefix, hash } = generateApiKey(k.environment);
  await db.query(
    `INSERT INTO api_keys (id, organization_id, user_id, prefix, key_hash, scopes, rate_limit_per_hour, created_at,
       environment)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      keyId,
      k.orgId,
      k.userId,
      prefix,
      hash,
      k.scopes ?? ['read.calls', 'read.recordings'],
      k.rateLimit ?? 1000,
      T0,
      k.environment ?? 'live',
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
  environment?: 'live' | 'test';
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
       deletion_scheduled_at, erased_at, created_at, updated_at, environment)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$18,$19,$20,$20,$21)`,
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
      c.environment ?? 'live',
    ],
  );
  return id;
}

/** A call whose audio is stored (blob written, row marked available). */
export async function insertCallWithAudio(
  deps: Pick<Deps, 'db' | 'store'>,
  orgId: string,
  audio: Buffer,
  row: Partial<CallRow> = {},
): Promise<{ callId: string; key: string }> {
  const callId = newId();
  const key = `recordings/${orgId}/${callId}/seed.mp3`;
  await deps.store.put(key, Readable.from([audio]));
  await insertCall(deps.db, {
    id: callId,
    orgId,
    recordingState: 'available',
    recordingKey: key,
    duration: 10,
    ...row,
  });
  return { callId, key };
}

export async function insertAnalysis(
  db: Queryable,
  a: {
    callId: string;
    orgId: string;
    analysis: Record<string, unknown>;
    followupEmail?: unknown;
    language?: string | null;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, language, analysis, followup_email, created_at, updated_at)
     VALUES ($1, $2, 'raw transcript, never exposed', $3, $4::jsonb, $5::jsonb, $6, $6)`,
    [
      a.callId,
      a.orgId,
      a.language === undefined ? 'en' : a.language,
      JSON.stringify(a.analysis),
      a.followupEmail === undefined || a.followupEmail === null ? null : JSON.stringify(a.followupEmail),
      T0,
    ],
  );
}

/** A calls row as the tests read it. */
export interface StoredCall {
  id: string;
  organization_id: string;
  direction: string;
  caller_phone: string;
  customer_phone: string | null;
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
  customer_phone_rdigits: string | null;
  company_phone_e164: string | null;
  caller_name: string | null;
  agent_user_id: string | null;
  crm_status: string;
  review_status: string | null;
  outbound_lifecycle: string | null;
  recording_mode: string;
  recording_state: string;
  recording_key: string | null;
  processing_state: string;
  trashed_at: Date | null;
  deletion_scheduled_at: Date | null;
  pending_deletion_at: Date | null;
  deletion_reason: string | null;
  erased_at: Date | null;
  created_at: Date;
}

export async function storedCall(db: Queryable, id: string): Promise<StoredCall> {
  return (await db.query<StoredCall>('SELECT * FROM calls WHERE id = $1', [id])).rows[0];
}

/**
 * n calls of one organization in a single INSERT … SELECT (10,000 in well under a second), newest
 * first every `stepSeconds` from `newest` backwards, three calls per instant, and the calls
 * numbered tieFrom..tieFrom+tieCount-1 all at one instant (a tie longer than any page). Every
 * tenth call has an analysis with a summary that needs CSV quoting (comma, quote, newline).
 */
export async function insertManyCalls(
  db: Queryable,
  o: { orgId: string; n: number; newest: Date; stepSeconds?: number; tieFrom?: number; tieCount?: number },
): Promise<void> {
  const tieFrom = o.tieFrom ?? -1;
  const tieTo = tieFrom + (o.tieCount ?? 0) - 1;
  await db.query(
    `INSERT INTO calls (id, organization_id, direction, caller_phone, customer_phone_e164, customer_phone_national,
       customer_phone_rdigits, company_phone_e164, caller_name, crm_status, outbound_lifecycle, recording_state,
       recording_mode, duration, created_at, updated_at)
     SELECT gen_random_uuid(), $1::uuid,
       CASE WHEN i % 5 = 0 THEN 'outbound' ELSE 'inbound' END,
       '+1415555' || lpad((i % 10000)::text, 4, '0'),
       '+1415555' || lpad((i % 10000)::text, 4, '0'),
       '(415) 555-' || lpad((i % 10000)::text, 4, '0'),
       reverse('1415555' || lpad((i % 10000)::text, 4, '0')),
       '+14155550100',
       CASE WHEN i % 7 = 0 THEN 'O''Brien, "Pat" #' || i WHEN i % 7 = 1 THEN NULL ELSE 'Caller ' || i END,
       (ARRAY['new', 'to_call', 'contacted', 'qualified'])[1 + i % 4],
       CASE WHEN i % 5 = 0 THEN 'completed' END,
       'pending', 'normal',
       CASE WHEN i % 3 = 0 THEN NULL ELSE (i % 600) + 0.5 END,
       $2::timestamptz - make_interval(secs => (CASE WHEN i BETWEEN $4 AND $5 THEN $4 ELSE i END / 3) * $3::int),
       $2::timestamptz
     FROM generate_series(0, $6::int - 1) AS i`,
    [o.orgId, o.newest, o.stepSeconds ?? 60, tieFrom, tieTo, o.n],
  );
  await db.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, language, analysis, followup_email,
       created_at, updated_at)
     SELECT id, organization_id, 'Hello, I have a leak.', 'en',
       jsonb_build_object('caller_name', caller_name, 'summary', 'Leak under the sink, "urgent",' || E'\\n' || 'call back',
         'service_needed', 'plumbing'),
       jsonb_build_object('subject', 'Your leak', 'body', 'Hi,' || E'\\n' || 'we will come.', 'language', 'en'),
       created_at, created_at
     FROM calls WHERE organization_id = $1::uuid AND right(caller_phone, 1) = '0'`,
    [o.orgId],
  );
}
