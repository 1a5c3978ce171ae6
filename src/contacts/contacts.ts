import { inScope, rowInScope, scopeParams } from '../db/tenant-sql.ts';
import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import { normalizePhone } from '../domain/phone.ts';
import type { Environment, Scope, TenantScope } from '../domain/tenant.ts';
import { AppError, badRequest, notFound, validationError } from '../errors.ts';
import { isUuid, newId } from '../ids.ts';
import {
  contactCreatedData,
  contactCreatedFactKey,
  contactUpdatedData,
  contactUpdatedFactKey,
} from '../webhooks/outbox/event-data/contact.ts';
import { emitEvent } from '../webhooks/outbox/outbox.ts';
import {
  type ContactFields,
  type ContactPatch,
  contactDiff,
  EDITABLE_CONTACT_FIELDS,
  normalizeTags,
} from './diff.ts';

/**
 * Contacts (seen by integrators only through contact.created / contact.updated). `phone` is kept as
 * entered and must be a usable number (422 otherwise); phone_e164 is its normalised form for matching.
 */

interface ContactRow extends ContactFields {
  id: string;
  organization_id: string;
  environment: Environment;
  phone_e164: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export interface ContactView extends ContactFields {
  contact_id: string;
  phone_e164: string | null;
  created_at: string;
  updated_at: string;
}

const view = (c: ContactRow): ContactView => ({
  contact_id: c.id,
  phone: c.phone,
  phone_e164: c.phone_e164,
  first_name: c.first_name,
  last_name: c.last_name,
  email: c.email,
  company: c.company,
  notes: c.notes,
  tags: c.tags,
  created_at: c.created_at.toISOString(),
  updated_at: c.updated_at.toISOString(),
});

async function phoneE164(q: Queryable, organizationId: string, phone: string): Promise<string> {
  const org = await q.query<{ country: string | null }>('SELECT country FROM organizations WHERE id = $1', [
    organizationId,
  ]);
  if (!org.rows[0]) throw notFound(`No organization ${organizationId}.`);
  const parsed = normalizePhone(phone, org.rows[0].country);
  if (!parsed)
    throw validationError(
      `phone "${phone}" is not a usable phone number; send it in E.164 (+14155552671).`,
      'phone',
    );
  return parsed.e164;
}

/**
 * The public API's rule (spec/api-v1-additions.md "Contacts"): one contact per E.164 number in an
 * environment. Two writers of the same number are serialised by a transaction-scoped advisory lock
 * on (organization, number), so the second one sees the first one's row and answers 409
 * CONTACT_EXISTS naming it. The operator API and the web app do not apply it (their contract allows
 * duplicates), so contacts made there may share a number; the oldest one is named.
 */
async function refuseDuplicate(
  tx: Queryable,
  scope: TenantScope,
  e164: string,
  exceptId: string | null,
): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `contact-phone:${scope.organizationId}:${scope.environment}:${e164}`,
  ]);
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM contacts
      WHERE ${inScope(null, 1, 2)} AND phone_e164 = $3 AND ($4::uuid IS NULL OR id <> $4::uuid)
      ORDER BY created_at, id LIMIT 1`,
    [...scopeParams(scope), e164, exceptId],
  );
  if (rows[0]) {
    throw new AppError(
      'CONTACT_EXISTS',
      `Contact ${rows[0].id} already has the phone number ${e164}; update it (PATCH /contacts/${rows[0].id}) instead of creating another.`,
      { contactId: rows[0].id, param: 'phone' },
    );
  }
}

export interface NewContact {
  phone: string;
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  company?: string | null;
  notes?: string | null;
  tags?: string[];
}

/**
 * Creates a contact and emits contact.created in the same transaction. `uniquePhone` (the public
 * API) refuses a number another contact of the environment has (409 CONTACT_EXISTS).
 */
export async function createContact(
  deps: Deps,
  scope: TenantScope,
  input: NewContact,
  opts: { uniquePhone?: boolean } = {},
): Promise<ContactView> {
  const { organizationId } = scope;
  return deps.db.transaction(async (tx) => {
    const e164 = await phoneE164(tx, organizationId, input.phone);
    if (opts.uniquePhone) await refuseDuplicate(tx, scope, e164, null);
    const id = newId();
    const now = deps.clock.now();
    const c: ContactRow = {
      id,
      organization_id: organizationId,
      environment: scope.environment,
      phone: input.phone,
      phone_e164: e164,
      first_name: input.first_name ?? null,
      last_name: input.last_name ?? null,
      email: input.email ?? null,
      company: input.company ?? null,
      notes: input.notes ?? null,
      tags: normalizeTags(input.tags ?? []),
      version: 0,
      created_at: now,
      updated_at: now,
    };
    await tx.query(
      `INSERT INTO contacts (id, organization_id, environment, phone, phone_e164, first_name, last_name, email,
         company, notes, tags, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
      [
        id,
        ...scopeParams(scope),
        c.phone,
        e164,
        c.first_name,
        c.last_name,
        c.email,
        c.company,
        c.notes,
        c.tags,
        now,
      ],
    );
    await emitEvent(tx, {
      organizationId,
      environment: scope.environment,
      eventType: 'contact.created',
      resourceId: id,
      callId: null,
      factKey: contactCreatedFactKey(id),
      data: contactCreatedData(c),
      createdAt: now,
    });
    return view(c);
  });
}

/**
 * PATCH /admin/v1/contacts/{id}: stores what changed and emits contact.updated with only those keys.
 * An edit that changes nothing answers 200 with the contact and emits nothing.
 */
export async function updateContact(
  deps: Deps,
  scope: Scope,
  contactId: string,
  patch: ContactPatch,
  opts: { uniquePhone?: boolean } = {},
): Promise<ContactView> {
  if (!EDITABLE_CONTACT_FIELDS.some((f) => patch[f] !== undefined)) {
    throw badRequest(`Send at least one of the fields ${EDITABLE_CONTACT_FIELDS.join(', ')}.`);
  }
  if (!isUuid(contactId)) throw notFound(`No contact ${contactId}.`);
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query<ContactRow>('SELECT * FROM contacts WHERE id = $1 FOR UPDATE', [
      contactId,
    ]);
    const before = rows[0];
    if (!before || !rowInScope(before, scope)) {
      throw notFound(`No contact ${contactId}.`);
    }
    const wanted = patch.tags ? { ...patch, tags: normalizeTags(patch.tags) } : patch;
    const diff = contactDiff(before, wanted);
    if (Object.keys(diff).length === 0) return view(before);

    const after = { ...before, ...diff };
    if (diff.phone !== undefined) {
      after.phone_e164 = await phoneE164(tx, before.organization_id, diff.phone);
      if (opts.uniquePhone) {
        const own = { organizationId: before.organization_id, environment: before.environment };
        await refuseDuplicate(tx, own, after.phone_e164, before.id);
      }
    }
    after.version = before.version + 1;
    after.updated_at = deps.clock.now();
    await tx.query(
      `UPDATE contacts SET phone = $2, phone_e164 = $3, first_name = $4, last_name = $5, email = $6, company = $7,
              notes = $8, tags = $9, version = $10, updated_at = $11
        WHERE id = $1`,
      [
        before.id,
        after.phone,
        after.phone_e164,
        after.first_name,
        after.last_name,
        after.email,
        after.company,
        after.notes,
        after.tags,
        after.version,
        after.updated_at,
      ],
    );
    await emitEvent(tx, {
      organizationId: before.organization_id,
      environment: before.environment,
      eventType: 'contact.updated',
      resourceId: before.id,
      callId: null,
      factKey: contactUpdatedFactKey(before.id, after.version),
      data: contactUpdatedData(before.id, diff),
      createdAt: after.updated_at,
    });
    return view(after);
  });
}

export const CONTACT_LIST_MAX_LIMIT = 100;

/**
 * Contacts of one organization for the web app: newest first, offset pages (the list is small and
 * browsed by people), optionally filtered by a search over name, company, e-mail and phone.
 */
export async function listContacts(
  q: Queryable,
  scope: TenantScope,
  f: { search?: string; limit: number; offset: number },
): Promise<{ items: ContactView[]; has_more: boolean }> {
  const search = f.search?.trim() ? `%${f.search.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const { rows } = await q.query<ContactRow>(
    `SELECT * FROM contacts
      WHERE ${inScope(null, 1, 2)}
        AND ($3::text IS NULL OR concat_ws(' ', first_name, last_name, company, email, phone, phone_e164) ILIKE $3)
      ORDER BY created_at DESC, id DESC
      LIMIT $4 OFFSET $5`,
    [...scopeParams(scope), search, f.limit + 1, f.offset],
  );
  return { items: rows.slice(0, f.limit).map(view), has_more: rows.length > f.limit };
}

/** One contact of the scope, or null (unknown id, another organization's or environment's, not a UUID). */
export async function getContact(q: Queryable, scope: TenantScope, id: string): Promise<ContactView | null> {
  if (!isUuid(id)) return null;
  const { rows } = await q.query<ContactRow>(
    `SELECT * FROM contacts WHERE id = $1 AND ${inScope(null, 2, 3)}`,
    [id, ...scopeParams(scope)],
  );
  return rows[0] ? view(rows[0]) : null;
}

/** A page of GET /api/v1/contacts: offset pages as GET /calls has them. */
export interface ContactQuery {
  page: number;
  limit: number;
  /** the `phone` filter's digit strings (domain/phone.ts phoneFilterDigits): trailing digits of phone_e164 */
  phoneDigits: string[] | null;
  /** `q`: a substring of first or last name, company or e-mail, case-insensitive */
  text: string | null;
}

/**
 * GET /api/v1/contacts: contacts of the scope, newest first (created_at, then id, descending),
 * `page`/`limit` as for calls (one row more than the page tells has_more). The phone filter matches
 * the trailing digits of phone_e164 with the rules of GET /calls; `q` the names, company and e-mail.
 */
export async function findContacts(
  q: Queryable,
  scope: TenantScope,
  f: ContactQuery,
): Promise<{ items: ContactView[]; has_more: boolean }> {
  const like = f.text === null ? null : `%${f.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  // phoneDigits are ASCII digits only (phoneFilterDigits), safe in a LIKE pattern.
  const phones = f.phoneDigits?.map((d) => `%${d}`) ?? null;
  const { rows } = await q.query<ContactRow>(
    `SELECT * FROM contacts
      WHERE ${inScope(null, 1, 2)}
        AND ($3::text[] IS NULL OR phone_e164 LIKE ANY ($3::text[]))
        AND ($4::text IS NULL OR concat_ws(' ', first_name, last_name, company, email) ILIKE $4
             OR concat_ws(' ', last_name, first_name) ILIKE $4)
      ORDER BY created_at DESC, id DESC
      LIMIT $5 OFFSET $6`,
    [...scopeParams(scope), phones, like, f.limit + 1, (f.page - 1) * f.limit],
  );
  return { items: rows.slice(0, f.limit).map(view), has_more: rows.length > f.limit };
}
