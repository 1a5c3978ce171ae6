import { z } from 'zod';

/** Bodies of the contact operations (spec/operator-api.md). Empty strings clear a field (stored as null). */
const PHONE_MAX = 64;
const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .transform((s) => (s === '' ? null : s))
    .nullish();
const email = z
  .email({ error: 'must be an e-mail address such as ana@example.com' })
  .max(254)
  .nullish()
  .or(z.literal('').transform(() => null));

export const createContactSchema = z.strictObject({
  phone: z.string().trim().min(1).max(PHONE_MAX),
  first_name: optionalText(100),
  last_name: optionalText(100),
  email,
  company: optionalText(200),
});

export const updateContactSchema = z.strictObject({
  phone: z.string().trim().min(1).max(PHONE_MAX).optional(),
  first_name: optionalText(100),
  last_name: optionalText(100),
  email: email.optional(),
  company: optionalText(200),
  notes: optionalText(10_000),
  tags: z.array(z.string().max(50)).max(50).optional(),
});
