import { randomUUID } from 'node:crypto';

/** Random UUID v4 for new rows. Event ids are UUID v5 (eventIdFor in webhooks/outbox/outbox.ts). */
export const newId = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
