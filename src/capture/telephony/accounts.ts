import type { Queryable } from '../../db/types.ts';
import type { Deps } from '../../deps.ts';
import { normalizePhone } from '../../domain/phone.ts';
import { AppError, badRequest, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { decryptSecret, encryptSecret } from '../../webhooks/delivery/secret-box.ts';

/**
 * Telephony accounts and service numbers (operator-api.md "Telephony and processing providers").
 * The auth token is encrypted at rest (AES-256-GCM under the master-key-derived secret key, the
 * format of the webhook secrets) and never leaves this module except decrypted for a signature
 * check or a REST call; it is never returned, logged or put in an error message.
 */

export type TelephonyProvider = 'twilio';

/** Twilio account SIDs: "AC" and 32 hex digits. */
const ACCOUNT_SID = /^AC[0-9a-fA-F]{32}$/;

export interface TelephonyAccount {
  organizationId: string;
  /** 'simulated': the simulated carrier of test mode (capture/telephony/simulated/), never stored here */
  provider: TelephonyProvider | 'simulated';
  accountSid: string;
  authToken: string;
}

/** PUT /admin/v1/organizations/{org}/telephony: sets (or replaces) the organization's account. */
export async function setTelephonyAccount(
  deps: Deps,
  organizationId: string,
  input: { provider: TelephonyProvider; accountSid: string; authToken: string },
): Promise<{ organization_id: string; provider: TelephonyProvider; account_sid: string }> {
  if (!ACCOUNT_SID.test(input.accountSid)) {
    throw badRequest(
      'Field "account_sid" must be a Twilio account SID: "AC" followed by 32 hex digits.',
      'account_sid',
    );
  }
  if (input.authToken.length < 8 || input.authToken.length > 256 || /\s/.test(input.authToken)) {
    throw badRequest(
      'Field "auth_token" must be the account\'s auth token (8 to 256 characters, no spaces).',
      'auth_token',
    );
  }
  const ciphertext = encryptSecret(deps.keys.secretEncryptionKey, input.authToken);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await assertOrganization(tx, organizationId);
    const other = await tx.query<{ organization_id: string }>(
      'SELECT organization_id FROM telephony_accounts WHERE account_sid = $1 FOR UPDATE',
      [input.accountSid],
    );
    if (other.rows[0] && other.rows[0].organization_id !== organizationId) {
      throw new AppError(
        'CONFLICT',
        `Account ${input.accountSid} is already connected to another organization.`,
      );
    }
    await tx.query(
      `INSERT INTO telephony_accounts (id, organization_id, provider, account_sid, auth_token_ciphertext, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (organization_id) DO UPDATE
         SET provider = EXCLUDED.provider, account_sid = EXCLUDED.account_sid,
             auth_token_ciphertext = EXCLUDED.auth_token_ciphertext, updated_at = EXCLUDED.updated_at`,
      [newId(), organizationId, input.provider, input.accountSid, ciphertext, now],
    );
  });
  // the organization's previous account (another SID, or this one's old token) is not used again here
  const cache = accountCache(deps.db);
  cache.generation++;
  cache.accounts.clear();
  return { organization_id: organizationId, provider: input.provider, account_sid: input.accountSid };
}

/**
 * A connected account as last read, per database, for ACCOUNT_CACHE_MS of real time: one call's
 * callbacks (the call's status, the consent answer, the recording) and its download come seconds
 * apart and each needs the account, so they read it (and decrypt its token) once instead of four
 * times. Only found accounts are kept (an AccountSid not connected is read every time: connecting
 * it takes effect at once), at most ACCOUNT_CACHE_MAX of them, the oldest dropped first. Changing
 * an organization's account (setTelephonyAccount) clears this process's cache at once; another
 * process (a separate public listener) keeps using the previous token for up to ACCOUNT_CACHE_MS.
 */
export const ACCOUNT_CACHE_MS = 5_000;
const ACCOUNT_CACHE_MAX = 256;
interface AccountCache {
  /** bumped by every clear: a read that started before it is not kept */
  generation: number;
  accounts: Map<string, { until: number; account: TelephonyAccount }>;
}
const accountCaches = new WeakMap<object, AccountCache>();

function accountCache(db: object): AccountCache {
  let cache = accountCaches.get(db);
  if (!cache) {
    cache = { generation: 0, accounts: new Map() };
    accountCaches.set(db, cache);
  }
  return cache;
}

/** The account a callback's AccountSid names, with its token decrypted; null when unknown. */
export async function findAccountBySid(
  deps: { db: Queryable; keys: Deps['keys'] },
  accountSid: string,
  /** the database whose cache to use when `deps.db` is one of its transactions (read there on a miss) */
  cacheOf: object = deps.db,
): Promise<TelephonyAccount | null> {
  if (!ACCOUNT_SID.test(accountSid)) return null;
  const cache = accountCache(cacheOf);
  const { accounts, generation } = cache;
  const now = performance.now();
  const hit = accounts.get(accountSid);
  if (hit && hit.until > now) return hit.account;
  accounts.delete(accountSid);
  const account = await readAccountBySid(deps, accountSid);
  if (account && cache.generation === generation) {
    if (accounts.size >= ACCOUNT_CACHE_MAX) accounts.delete(accounts.keys().next().value!);
    accounts.set(accountSid, { until: now + ACCOUNT_CACHE_MS, account });
  }
  return account;
}

async function readAccountBySid(
  deps: { db: Queryable; keys: Deps['keys'] },
  accountSid: string,
): Promise<TelephonyAccount | null> {
  const { rows } = await deps.db.query<{
    organization_id: string;
    provider: TelephonyProvider;
    auth_token_ciphertext: string;
  }>(
    'SELECT organization_id, provider, auth_token_ciphertext FROM telephony_accounts WHERE account_sid = $1',
    [accountSid],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    organizationId: row.organization_id,
    provider: row.provider,
    accountSid,
    authToken: decryptSecret(deps.keys.secretEncryptionKey, row.auth_token_ciphertext),
  };
}

/** The organization's account, with its token decrypted; null when it has none. */
export async function findOrganizationAccount(
  deps: Pick<Deps, 'db' | 'keys'>,
  organizationId: string,
): Promise<TelephonyAccount | null> {
  const { rows } = await deps.db.query<{ account_sid: string }>(
    'SELECT account_sid FROM telephony_accounts WHERE organization_id = $1',
    [organizationId],
  );
  return rows[0] ? findAccountBySid(deps, rows[0].account_sid) : null;
}

export interface PhoneNumber {
  id: string;
  organization_id: string;
  number_e164: string;
  ring_to_e164: string | null;
  recording_mode: 'normal' | 'no_recording';
}

/** POST /admin/v1/organizations/{org}/phone-numbers: a service number; 409 when another organization owns it. */
export async function addPhoneNumber(
  deps: Deps,
  organizationId: string,
  input: { number: string; ringTo?: string | null; recordingMode?: 'normal' | 'no_recording' },
): Promise<{ phone_number_id: string }> {
  const number = e164(input.number, 'number');
  const ringTo = input.ringTo == null ? null : e164(input.ringTo, 'ring_to');
  if (ringTo === number)
    throw badRequest('Field "ring_to" must not be the service number itself.', 'ring_to');
  const id = newId();
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await assertOrganization(tx, organizationId);
    const taken = await tx.query<{ organization_id: string }>(
      'SELECT organization_id FROM phone_numbers WHERE number_e164 = $1 FOR UPDATE',
      [number],
    );
    if (taken.rows[0]) {
      throw new AppError(
        'CONFLICT',
        taken.rows[0].organization_id === organizationId
          ? `Number ${number} is already a service number of this organization.`
          : `Number ${number} belongs to another organization.`,
      );
    }
    await tx.query(
      `INSERT INTO phone_numbers (id, organization_id, number_e164, ring_to_e164, recording_mode, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)`,
      [id, organizationId, number, ringTo, input.recordingMode ?? 'normal', now],
    );
  });
  return { phone_number_id: id };
}

/** The organization's service number `number` (E.164), or null. */
export async function findPhoneNumber(
  q: Queryable,
  organizationId: string,
  number: string,
): Promise<PhoneNumber | null> {
  const { rows } = await q.query<PhoneNumber>(
    `SELECT id, organization_id, number_e164, ring_to_e164, recording_mode FROM phone_numbers
      WHERE organization_id = $1 AND number_e164 = $2`,
    [organizationId, number],
  );
  return rows[0] ?? null;
}

/** An E.164 number exactly as given (+ and 8 to 15 digits that libphonenumber accepts as possible). */
function e164(raw: string, field: string): string {
  const parsed = /^\+[1-9][0-9]{6,14}$/.test(raw) ? normalizePhone(raw) : null;
  if (!parsed || parsed.e164 !== raw) {
    throw badRequest(`Field "${field}" must be a phone number in E.164 format, such as +14155552671.`, field);
  }
  return raw;
}

async function assertOrganization(tx: Queryable, organizationId: string): Promise<void> {
  const org = await tx.query('SELECT 1 FROM organizations WHERE id = $1 FOR SHARE', [organizationId]);
  if (org.rowCount === 0) throw notFound(`No organization ${organizationId}.`);
}
