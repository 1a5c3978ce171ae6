/** The events the outbox stored: read back, parsed, and checked against the spec's envelope. */
import assert from 'node:assert/strict';
import type { Queryable } from '../../src/db/types.ts';
import { eventIdFor } from '../../src/webhooks/outbox/outbox.ts';
import { T0 } from './deps.ts';

export const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface Envelope {
  api_version: string;
  event_id: string;
  event_type: string;
  resource_id: string;
  created_at: string;
  data: Record<string, unknown>;
}

export interface StoredEvent {
  id: string;
  event_type: string;
  resource_id: string;
  call_id: string | null;
  envelope: Envelope;
}

/** Every event stored for a resource (call or contact), parsed from its stored body. */
export async function eventsOf(db: Queryable, resourceId: string): Promise<StoredEvent[]> {
  const { rows } = await db.query<{
    id: string;
    event_type: string;
    resource_id: string;
    call_id: string | null;
    body: string;
  }>(
    'SELECT id, event_type, resource_id, call_id, body FROM events WHERE resource_id = $1 ORDER BY created_at, event_type',
    [resourceId],
  );
  return rows.map((r) => ({ ...r, envelope: JSON.parse(r.body) as Envelope }));
}

export const typesOf = (events: StoredEvent[]) => events.map((e) => e.event_type).sort();

export function only(events: StoredEvent[], type: string): StoredEvent {
  const found = events.filter((e) => e.event_type === type);
  assert.equal(found.length, 1, `exactly one ${type}, got ${found.length}`);
  return found[0];
}

/**
 * The envelope has exactly the six keys with the right constants, its event id is the UUID v5 of
 * "<type>:<factKey>", and its data has exactly `dataKeys`. Returns data for value checks.
 */
export function checkEnvelope(
  e: StoredEvent,
  x: { type: string; resourceId: string; factKey: string; dataKeys: string[]; createdAt?: string },
): Record<string, unknown> {
  const env = e.envelope;
  assert.deepEqual(Object.keys(env).sort(), [
    'api_version',
    'created_at',
    'data',
    'event_id',
    'event_type',
    'resource_id',
  ]);
  assert.equal(env.api_version, '2026-06-15');
  assert.equal(env.event_type, x.type);
  assert.equal(env.resource_id, x.resourceId);
  assert.match(env.event_id, UUID_V5);
  assert.equal(env.event_id, eventIdFor(x.type, x.factKey));
  assert.equal(env.event_id, e.id);
  assert.equal(env.created_at, x.createdAt ?? T0);
  assert.deepEqual(Object.keys(env.data).sort(), [...x.dataKeys].sort());
  return env.data;
}

export const CALL_COMPLETED_KEYS = [
  'call_id',
  'direction',
  'caller_phone',
  'customer_phone_e164',
  'customer_phone_national',
  'company_phone_e164',
  'call_created_at',
  'app_url',
  'duration',
  'recording_url',
  'transcript_processed',
  'transcript_original',
];
export const ATTEMPTED_KEYS = [
  'call_id',
  'agent_user_id',
  'customer_phone',
  'customer_phone_e164',
  'outbound_lifecycle',
  'duration',
  'attempted_at',
  'has_recording',
];

/** Makes the events table refuse one event type, to prove that a failing step rolls back wholly. */
export async function failEventsOfType(db: Queryable, type: string): Promise<() => Promise<void>> {
  await db.query(`CREATE OR REPLACE FUNCTION test_refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'refused by test'; END $$`);
  await db.query(
    `CREATE TRIGGER test_refuse_event BEFORE INSERT ON events FOR EACH ROW
       WHEN (NEW.event_type = '${type.replace(/'/g, "''")}') EXECUTE FUNCTION test_refuse_event()`,
  );
  return async () => {
    await db.query('DROP TRIGGER test_refuse_event ON events');
  };
}
