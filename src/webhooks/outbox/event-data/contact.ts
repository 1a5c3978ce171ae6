/**
 * data of contact.created and contact.updated. Pure builders, exactly the spec's keys.
 *
 * Fact keys: a contact is created once ("<contact id>"); each effective edit bumps the contact's
 * version, so "<contact id>:<version>" names one edit and never repeats.
 */

import type { ContactCreatedData, ContactDiff, ContactUpdatedData } from '../event-schemas.ts';

export const contactCreatedFactKey = (contactId: string): string => contactId;
export const contactUpdatedFactKey = (contactId: string, version: number): string =>
  `${contactId}:${version}`;

export interface ContactSnapshot {
  id: string;
  phone: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  company: string | null;
}

/** A full snapshot; notes and tags are not included. */
export function contactCreatedData(c: ContactSnapshot): ContactCreatedData {
  return {
    contact: {
      id: c.id,
      phone: c.phone,
      first_name: c.first_name,
      last_name: c.last_name,
      email: c.email,
      company: c.company,
    },
  };
}

/** diff holds only the fields whose value changed (possible keys: first_name, last_name, email, phone, company, notes, tags). */
export function contactUpdatedData(contactId: string, diff: Record<string, unknown>): ContactUpdatedData {
  // The service computes diff over exactly these columns (contacts.ts); the catalogue validates it in tests.
  return { contact_id: contactId, diff: diff as ContactDiff };
}
