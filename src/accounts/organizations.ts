import { isSupportedCountry } from 'libphonenumber-js';
import type { Queryable } from '../db/types.ts';
import { badRequest, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { checkEmail, checkPassword, createUser } from './users.ts';

export const ORG_NAME_MAX_LENGTH = 200;

/** What PATCH /admin/v1/organizations/{org} answers: the organization's current settings. */
export interface OrganizationSettings {
  organization_id: string;
  name: string;
  entitlement: 'active' | 'inactive';
  retention_days: number | null;
  account_rate_limit_per_hour: number;
  max_active_subscriptions: number;
  country: string | null;
  language: string;
  created_at: string;
}

export interface OrganizationPatch {
  name?: string;
  entitlement?: 'active' | 'inactive';
  retention_days?: number | null;
  account_rate_limit_per_hour?: number;
  max_active_subscriptions?: number;
  country?: string | null;
}

/** ISO 3166-1 alpha-2 region the phone parser knows (e.g. "US"); accepted in any case, stored upper-case. */
export function checkCountry(country: string, field = 'country'): string {
  const c = country.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(c) || !isSupportedCountry(c)) {
    throw badRequest(
      `Field "${field}" must be an ISO 3166-1 alpha-2 country code such as "US" or "GB".`,
      field,
    );
  }
  return c;
}

function checkName(name: string): string {
  const n = name.trim();
  if (n.length === 0 || n.length > ORG_NAME_MAX_LENGTH) {
    throw badRequest(`Field "name" must be 1 to ${ORG_NAME_MAX_LENGTH} characters long.`, 'name');
  }
  return n;
}

/**
 * Creates the organization and its owner user; run it inside one transaction. id is for callers
 * that need it before the row exists (the demo seed names its recording blobs after it).
 */
export async function createOrganization(
  tx: Queryable,
  o: {
    id?: string;
    name: string;
    ownerEmail: string;
    ownerPassword: string;
    country?: string | null;
    now: Date;
  },
): Promise<{ organization_id: string; owner_user_id: string }> {
  const name = checkName(o.name);
  const country = o.country == null ? null : checkCountry(o.country);
  checkEmail(o.ownerEmail, 'owner_email');
  checkPassword(o.ownerPassword, 'owner_password');
  const id = o.id ?? newId();
  await tx.query('INSERT INTO organizations (id, name, country, created_at) VALUES ($1, $2, $3, $4)', [
    id,
    name,
    country,
    o.now,
  ]);
  const owner = await createUser(tx, {
    organizationId: id,
    email: o.ownerEmail,
    password: o.ownerPassword,
    role: 'owner',
    now: o.now,
  });
  return { organization_id: id, owner_user_id: owner.user_id };
}

const SETTINGS_SQL = `id AS organization_id, name, entitlement, retention_days, account_rate_limit_per_hour,
  max_active_subscriptions, country, language, created_at`;

type SettingsRow = Omit<OrganizationSettings, 'created_at'> & { created_at: Date };
const toSettings = (r: SettingsRow): OrganizationSettings => ({
  ...r,
  created_at: r.created_at.toISOString(),
});

export async function getOrganization(
  q: Queryable,
  organizationId: string,
): Promise<OrganizationSettings | null> {
  const { rows } = await q.query<SettingsRow>(`SELECT ${SETTINGS_SQL} FROM organizations WHERE id = $1`, [
    organizationId,
  ]);
  return rows[0] ? toSettings(rows[0]) : null;
}

/** Applies the given settings (only the keys present) and answers the organization's current settings. */
export async function updateOrganization(
  tx: Queryable,
  organizationId: string,
  patch: OrganizationPatch,
): Promise<OrganizationSettings> {
  const sets: string[] = [];
  const params: unknown[] = [organizationId];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (patch.name !== undefined) set('name', checkName(patch.name));
  if (patch.entitlement !== undefined) set('entitlement', patch.entitlement);
  if (patch.retention_days !== undefined) set('retention_days', patch.retention_days);
  if (patch.account_rate_limit_per_hour !== undefined) {
    set('account_rate_limit_per_hour', patch.account_rate_limit_per_hour);
  }
  if (patch.max_active_subscriptions !== undefined)
    set('max_active_subscriptions', patch.max_active_subscriptions);
  if (patch.country !== undefined)
    set('country', patch.country === null ? null : checkCountry(patch.country));
  if (sets.length === 0) throw badRequest('Send at least one setting to change.');
  const { rows } = await tx.query<SettingsRow>(
    `UPDATE organizations SET ${sets.join(', ')} WHERE id = $1 RETURNING ${SETTINGS_SQL}`,
    params,
  );
  if (!rows[0]) throw notFound(`No organization ${organizationId}.`);
  return toSettings(rows[0]);
}
