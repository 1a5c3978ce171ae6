import { z } from 'zod';
import { phoneFilterDigits } from '../../../domain/phone.ts';
import { validationError } from '../../../errors.ts';
import { listCallsParams } from './calls-params.ts';
import { type QueryParams, type QueryValues, readQuery } from './query.ts';

/**
 * GET /contacts' query parameters and the bodies of POST /contacts and PATCH /contacts/{id}
 * (spec/api-v1-additions.md "Contacts"): validation and OpenAPI in one place. page, limit and
 * phone are GET /calls' own (same schemas, same rules); q is new.
 */
export const Q_MAX_LENGTH = 100;

export const listContactsParams = {
  page: listCallsParams.page,
  limit: listCallsParams.limit,
  phone: {
    ...listCallsParams.phone,
    description:
      'Matches the trailing digits of phone_e164, with the rules of GET /calls: spaces, hyphens, dots and ' +
      'parentheses are ignored and the leading + is optional, so +1 (415) 555-2671, 1.415.555.2671 and ' +
      '4155552671 all find +14155552671; a national number written with its leading 0 also matches without it.',
  },
  q: {
    schema: z.string().min(1).max(Q_MAX_LENGTH).optional(),
    description:
      'Case-insensitive text searched in first_name, last_name (either order), company and email, e.g. "ana lopez" or "@acme.example".',
    accepts: `1 to ${Q_MAX_LENGTH} characters`,
  },
} satisfies QueryParams;

export interface ContactsFilter {
  page: number;
  limit: number;
  phoneDigits: string[] | null;
  text: string | null;
}

/** Reads GET /contacts' query string; 400 BAD_REQUEST naming the parameter. */
export function readListContactsQuery(url: string): ContactsFilter {
  const q: QueryValues<typeof listContactsParams> = readQuery(url, listContactsParams);
  const phone = q.phone === undefined ? null : phoneFilterDigits(q.phone);
  return {
    page: q.page,
    limit: q.limit,
    phoneDigits: phone?.ok ? phone.digits : null,
    text: q.q ?? null,
  };
}

const text = (max: number) =>
  z
    .string({ error: 'must be a string or null' })
    .trim()
    .max(max, `must be at most ${max} characters`)
    .transform((s) => (s === '' ? null : s))
    .nullable()
    .optional();
const phone = z
  .string({ error: (iss) => (iss.input === undefined ? 'is required (a string)' : 'must be a string') })
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters');
const email = z
  .string({ error: 'must be a string or null' })
  .trim()
  .transform((s) => (s === '' ? null : s))
  .nullable()
  .optional();
const tags = z
  .array(z.string({ error: 'must be a string' }).max(50, 'must be at most 50 characters'), {
    error: 'must be an array of strings',
  })
  .max(50, 'must hold at most 50 tags')
  .optional();

const fields = {
  first_name: text(100),
  last_name: text(100),
  email,
  company: text(200),
  notes: text(10_000),
  tags,
};

/** POST /contacts. Types and lengths answer 400; an unusable phone or e-mail 422 (service, checkEmail). */
export const createContactBody = z.strictObject({ phone, ...fields });
/** PATCH /contacts/{id}: any of the writable fields, at least one. */
export const updateContactBody = z.strictObject({ phone: phone.optional(), ...fields });

const EMAIL_CHECK = z.email().max(254);

/** 422 VALIDATION_ERROR (param email) for a string that is no usable e-mail address. */
export function checkEmail(value: string | null | undefined): void {
  if (value === null || value === undefined) return;
  if (!EMAIL_CHECK.safeParse(value).success) {
    throw validationError(
      `email "${value.slice(0, 100)}" is not a usable e-mail address; send one such as ana@example.com, or null.`,
      'email',
    );
  }
}
