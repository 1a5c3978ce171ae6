import { isSupportedCountry } from 'libphonenumber-js';
import { KNOWN_LANGUAGES } from '../capture/language.ts';
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
  /** the recording-consent announcement played to callers before a call is recorded (docs/capture.md) */
  recording_consent: RecordingConsent;
  /**
   * Card numbers, security codes, national ids, bank details, dates of birth and passport numbers are
   * taken out of transcripts, analyses and drafts before they are stored, and silenced in recordings
   * (docs/capture.md "Redaction"). On unless the owner turned it off.
   */
  redaction_enabled: boolean;
  created_at: string;
}

export interface RecordingConsent {
  enabled: boolean;
  /** what is said; the caller refuses the recording by pressing any key while it plays */
  text: string | null;
  /** the <Say> language, BCP 47 (en-US, de-DE); null = the organization's language */
  language: string | null;
}

export const CONSENT_TEXT_MAX_LENGTH = 1000;

export interface OrganizationPatch {
  name?: string;
  entitlement?: 'active' | 'inactive';
  retention_days?: number | null;
  account_rate_limit_per_hour?: number;
  max_active_subscriptions?: number;
  country?: string | null;
  language?: string;
  recording_consent?: Partial<RecordingConsent>;
  redaction_enabled?: boolean;
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

/**
 * The account language (fallback of follow-up drafts when a call's language is not detected): one
 * of the languages the built-in analyzer writes drafts in.
 */
export function checkLanguage(language: string, field = 'language'): string {
  const l = language.trim().toLowerCase();
  if (!(KNOWN_LANGUAGES as readonly string[]).includes(l)) {
    throw badRequest(`Field "${field}" must be one of ${KNOWN_LANGUAGES.join(', ')}.`, field);
  }
  return l;
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
  max_active_subscriptions, country, language, recording_consent_enabled, recording_consent_text,
  recording_consent_language, redaction_enabled, created_at`;

type SettingsRow = Omit<OrganizationSettings, 'created_at' | 'recording_consent'> & {
  created_at: Date;
  recording_consent_enabled: boolean;
  recording_consent_text: string | null;
  recording_consent_language: string | null;
};
const toSettings = ({
  recording_consent_enabled,
  recording_consent_text,
  recording_consent_language,
  created_at,
  ...r
}: SettingsRow): OrganizationSettings => ({
  ...r,
  recording_consent: {
    enabled: recording_consent_enabled,
    text: recording_consent_text,
    language: recording_consent_language,
  },
  created_at: created_at.toISOString(),
});

/** A BCP 47 tag as Twilio's <Say> takes it: en, en-US, pt-BR, cmn-CN. */
const SAY_LANGUAGE = /^[a-z]{2,3}(-[A-Z]{2})?$/;

export async function getOrganization(
  q: Queryable,
  organizationId: string,
): Promise<OrganizationSettings | null> {
  const { rows } = await q.query<SettingsRow>(`SELECT ${SETTINGS_SQL} FROM organizations WHERE id = $1`, [
    organizationId,
  ]);
  return rows[0] ? toSettings(rows[0]) : null;
}

/** Most organizations one GET /admin/v1/organizations answers. */
export const ORG_LIST_MAX_LIMIT = 100;

/** One page of organizations, oldest first (created_at, id): a stable order, so pages never overlap. */
export async function listOrganizations(
  q: Queryable,
  p: { page: number; limit: number },
): Promise<{ items: OrganizationSettings[]; has_more: boolean; page: number; limit: number }> {
  const { rows } = await q.query<SettingsRow>(
    `SELECT ${SETTINGS_SQL} FROM organizations ORDER BY created_at, id LIMIT $1 OFFSET $2`,
    [p.limit + 1, (p.page - 1) * p.limit],
  );
  return {
    items: rows.slice(0, p.limit).map(toSettings),
    has_more: rows.length > p.limit,
    page: p.page,
    limit: p.limit,
  };
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
  if (patch.language !== undefined) set('language', checkLanguage(patch.language));
  if (patch.redaction_enabled !== undefined) set('redaction_enabled', patch.redaction_enabled);
  const consent = patch.recording_consent;
  if (consent?.enabled !== undefined) set('recording_consent_enabled', consent.enabled);
  if (consent?.text !== undefined) {
    const text = consent.text === null ? null : consent.text.trim();
    if (text !== null && (text.length === 0 || text.length > CONSENT_TEXT_MAX_LENGTH)) {
      throw badRequest(
        `Field "recording_consent.text" must be 1 to ${CONSENT_TEXT_MAX_LENGTH} characters long, or null.`,
        'recording_consent.text',
      );
    }
    set('recording_consent_text', text);
  }
  if (consent?.language !== undefined) {
    if (consent.language !== null && !SAY_LANGUAGE.test(consent.language)) {
      throw badRequest(
        'Field "recording_consent.language" must be a language tag such as "en-US" or "de-DE", or null.',
        'recording_consent.language',
      );
    }
    set('recording_consent_language', consent.language);
  }
  if (sets.length === 0) throw badRequest('Send at least one setting to change.');
  const { rows } = await tx.query<SettingsRow>(
    `UPDATE organizations SET ${sets.join(', ')} WHERE id = $1 RETURNING ${SETTINGS_SQL}`,
    params,
  );
  if (!rows[0]) throw notFound(`No organization ${organizationId}.`);
  if (rows[0].recording_consent_enabled && rows[0].recording_consent_text === null) {
    throw badRequest(
      'The recording-consent announcement needs its text: send recording_consent.text with enabled true.',
      'recording_consent.text',
    );
  }
  return toSettings(rows[0]);
}
