import { v5 as uuidv5 } from 'uuid';
import { inScope } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import type { Environment } from '../../domain/tenant.ts';

export const API_VERSION = '2026-06-15';
/** Namespace of event ids: event_id = UUIDv5(namespace, "<event_type>:<fact key>"). */
export const EVENT_ID_NAMESPACE = '6f1c9a52-3a57-4e0e-9d8b-2b7c1f0a4c11';

export const DELETION_EVENT_TYPES = new Set(['call.deletion_scheduled', 'call.recording.deleted']);

export interface NewEvent {
  organizationId: string;
  /**
   * The data environment of the fact (the call's or contact's): the event goes only to subscriptions
   * of this environment, and each delivery says it in the header service-environment. Not in the
   * envelope (spec/api-v1-additions.md "Test mode": the envelope is unchanged).
   */
  environment: Environment;
  eventType: string;
  /** call id for call events, contact id for contact events, subscription id for webhook.test */
  resourceId: string;
  /** groups events of one call; null for contact events */
  callId: string | null;
  /**
   * What makes this fact unique, e.g. the call id for call.completed of a call, or
   * "<contact id>:<version>" for a contact edit. The same fact never yields two event ids.
   */
  factKey: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

export function eventIdFor(eventType: string, factKey: string): string {
  return uuidv5(`${eventType}:${factKey}`, EVENT_ID_NAMESPACE);
}

/** Serialises the envelope once; these exact bytes are stored, signed and resent. */
export function serializeEvent(e: NewEvent, eventId: string): string {
  return JSON.stringify({
    api_version: API_VERSION,
    event_id: eventId,
    event_type: e.eventType,
    resource_id: e.resourceId,
    created_at: e.createdAt.toISOString(),
    data: e.data,
  });
}

/**
 * Transactional outbox: call inside the transaction that makes the domain change. Stores the event
 * and creates one delivery per matching subscription (active or paused: a paused subscription's
 * deliveries are held, migration 0003, and wait for re-verification) of the event's environment
 * (a test event never reaches a live subscription, nor the reverse). Deletion events go only to
 * subscriptions that successfully received content of that call. Returns inserted=false when the
 * same fact was already recorded.
 */
export async function emitEvent(tx: Queryable, e: NewEvent): Promise<{ eventId: string; inserted: boolean }> {
  const eventId = eventIdFor(e.eventType, e.factKey);
  const body = serializeEvent(e, eventId);
  const { rows } = await tx.query<{ inserted: boolean }>(
    EMIT_EVENT_SQL,
    [
      eventId,
      e.organizationId,
      e.eventType,
      e.resourceId,
      e.callId,
      body,
      e.createdAt,
      DELETION_EVENT_TYPES.has(e.eventType),
      e.environment,
    ],
    { name: 'outbox_emit_event_v2' },
  );
  return { eventId, inserted: rows[0]?.inserted === true };
}

/**
 * The event, its deliveries and the wake-up in one statement (one round trip, planned once per
 * connection): the fan-out runs only when the event row is new (ON CONFLICT DO NOTHING returned it),
 * and the NOTIFY only when a delivery was created.
 * ORDER BY s.id: each new delivery share-locks its subscription (migration 0003 trigger); taking
 * those locks in id order, like every other writer, rules out deadlocks with the delivery worker.
 * Deletion events ($8) go only to subscriptions that received content of that call. $9 is the
 * event's environment: the fan-out asks the subscriptions of (organization, environment).
 * One empty payload: PostgreSQL folds identical notifications of a transaction into one, so a
 * transaction emitting many events wakes the workers once, at commit.
 */
const EMIT_EVENT_SQL = `
WITH ev AS (
  INSERT INTO events (id, organization_id, environment, event_type, resource_id, call_id, body, created_at)
  VALUES ($1, $2, $9::text, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING
  RETURNING id
), fanned AS (
  INSERT INTO webhook_deliveries (id, organization_id, subscription_id, event_id, event_type, status,
    next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), s.organization_id, s.id, $1, $3, 'pending', $7, $7, $7
    FROM webhook_subscriptions s
   WHERE EXISTS (SELECT 1 FROM ev)
     AND ${inScope('s', 2, 9)} AND s.deleted_at IS NULL AND s.state IN ('active', 'paused')
     AND (cardinality(s.event_types) = 0 OR $3 = ANY (s.event_types))
     AND (NOT $8::boolean OR EXISTS (
           SELECT 1 FROM webhook_call_reach r WHERE r.subscription_id = s.id AND r.call_id = $5))
   ORDER BY s.id
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM ev) AS inserted,
       (SELECT pg_notify('webhook_deliveries', '') FROM fanned LIMIT 1) IS NOT NULL AS notified`;

/**
 * emitEvent for several events of one fact group at once — the same organization, environment,
 * resource, call and time (the completion's call.transcribed, call.completed, the draft and the
 * tracker matches) — in ONE statement instead of one each: the events in the given order, each one's
 * deliveries as emitEvent creates them (in subscription order, so the subscriptions' locks are
 * taken in id order as everywhere else), one NOTIFY. Not for deletion events (their fan-out asks
 * webhook_call_reach): those go through emitEvent. Answers, per event, whether it was new.
 */
export async function emitEvents(
  tx: Queryable,
  common: Pick<NewEvent, 'organizationId' | 'environment' | 'resourceId' | 'callId' | 'createdAt'>,
  events: readonly Pick<NewEvent, 'eventType' | 'factKey' | 'data'>[],
): Promise<{ eventId: string; inserted: boolean }[]> {
  if (events.some((e) => DELETION_EVENT_TYPES.has(e.eventType))) {
    const out: { eventId: string; inserted: boolean }[] = [];
    for (const e of events) out.push(await emitEvent(tx, { ...common, ...e }));
    return out;
  }
  const ids = events.map((e) => eventIdFor(e.eventType, e.factKey));
  const { rows } = await tx.query<{ inserted: string[] | null }>(
    EMIT_EVENTS_SQL,
    [
      ids,
      common.organizationId,
      events.map((e) => e.eventType),
      common.resourceId,
      common.callId,
      events.map((e, i) => serializeEvent({ ...common, ...e }, ids[i]!)),
      common.createdAt,
      common.environment,
    ],
    { name: 'outbox_emit_events_v1' },
  );
  const inserted = new Set(rows[0]?.inserted ?? []);
  return ids.map((eventId) => ({ eventId, inserted: inserted.has(eventId) }));
}

const EMIT_EVENTS_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::uuid[], $3::text[], $6::text[]) WITH ORDINALITY AS i(id, event_type, body, ord)
), ev AS (
  INSERT INTO events (id, organization_id, environment, event_type, resource_id, call_id, body, created_at)
  SELECT i.id, $2, $8::text, i.event_type, $4, $5, i.body, $7 FROM input i ORDER BY i.ord
  ON CONFLICT (id) DO NOTHING
  RETURNING id, event_type
), fanned AS (
  INSERT INTO webhook_deliveries (id, organization_id, subscription_id, event_id, event_type, status,
    next_attempt_at, created_at, updated_at)
  SELECT gen_random_uuid(), s.organization_id, s.id, ev.id, ev.event_type, 'pending', $7, $7, $7
    FROM ev JOIN input i ON i.id = ev.id
    JOIN webhook_subscriptions s ON cardinality(s.event_types) = 0 OR ev.event_type = ANY (s.event_types)
   WHERE ${inScope('s', 2, 8)} AND s.deleted_at IS NULL AND s.state IN ('active', 'paused')
   ORDER BY s.id, i.ord
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT (SELECT array_agg(id) FROM ev)::text[] AS inserted,
       (SELECT pg_notify('webhook_deliveries', '') FROM fanned LIMIT 1) IS NOT NULL AS notified`;
