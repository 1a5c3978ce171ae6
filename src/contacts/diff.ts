/**
 * What an edit of a contact changes (contact.updated's diff): only the fields whose value actually
 * differs from the stored one; a field sent with its current value is not a change. Pure.
 */

export const EDITABLE_CONTACT_FIELDS = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'company',
  'notes',
  'tags',
] as const;
export type EditableContactField = (typeof EDITABLE_CONTACT_FIELDS)[number];

export interface ContactFields {
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string;
  company: string | null;
  notes: string | null;
  tags: string[];
}

export type ContactPatch = Partial<ContactFields>;

const same = (a: unknown, b: unknown): boolean =>
  Array.isArray(a) && Array.isArray(b) ? a.length === b.length && a.every((v, i) => v === b[i]) : a === b;

export function contactDiff(before: ContactFields, patch: ContactPatch): ContactPatch {
  const diff: Record<string, unknown> = {};
  for (const field of EDITABLE_CONTACT_FIELDS) {
    if (!(field in patch) || patch[field] === undefined) continue;
    if (!same(before[field], patch[field])) diff[field] = patch[field];
  }
  return diff as ContactPatch;
}

/** Tags as stored: trimmed, empty ones dropped, case-insensitive duplicates removed (first spelling wins). */
export function normalizeTags(tags: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of tags) {
    const t = raw.trim();
    if (!t || seen.has(t.toLowerCase())) continue;
    seen.add(t.toLowerCase());
    out.push(t);
  }
  return out;
}
