/**
 * The typed event model of the Call Capture webhooks, API version 2026-06-15.
 *
 * Every event is an envelope `{api_version, event_id, event_type, resource_id, created_at, data}`;
 * `event_type` discriminates the shape of `data`. New event types and new optional fields may be added
 * within v1, so `data` objects may carry keys not listed here and `verifyWebhook` can return an
 * {@link UnknownWebhookEvent}: narrow with {@link isKnownEvent} before switching on `event_type`.
 */
import type {
  CallCompletedData,
  CallDeletionScheduledData,
  CallFailedData,
  CallFollowupEmailDraftedData,
  CallOutboundAttemptedData,
  CallOutboundLifecycleRepairedData,
  CallRecordingDeletedData,
  CallRecordingReadyData,
  CallTrackerMatchedData,
  CallTranscribedData,
  ContactCreatedData,
  ContactUpdatedData,
  WebhookTestData,
} from './event-data.ts';

/** The only api_version this SDK understands; carried by every event. */
export const API_VERSION = '2026-06-15';
export type ApiVersion = typeof API_VERSION;

/** Every event type of v1, in the order the spec lists them. */
export const WEBHOOK_EVENT_TYPES = [
  'call.completed',
  'call.outbound.attempted',
  'call.recording.ready',
  'call.transcribed',
  'call.failed',
  'call.outbound.lifecycle_repaired',
  'call.deletion_scheduled',
  'call.recording.deleted',
  'call.followup_email.drafted',
  'call.tracker.matched',
  'contact.created',
  'contact.updated',
  'webhook.test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Maps each event type to its `data` shape. */
export interface WebhookEventDataMap {
  'call.completed': CallCompletedData;
  'call.outbound.attempted': CallOutboundAttemptedData;
  'call.recording.ready': CallRecordingReadyData;
  'call.transcribed': CallTranscribedData;
  'call.failed': CallFailedData;
  'call.outbound.lifecycle_repaired': CallOutboundLifecycleRepairedData;
  'call.deletion_scheduled': CallDeletionScheduledData;
  'call.recording.deleted': CallRecordingDeletedData;
  'call.followup_email.drafted': CallFollowupEmailDraftedData;
  'call.tracker.matched': CallTrackerMatchedData;
  'contact.created': ContactCreatedData;
  'contact.updated': ContactUpdatedData;
  'webhook.test': WebhookTestData;
}

/** The envelope of one event type. */
export interface WebhookEventOf<T extends WebhookEventType> {
  api_version: ApiVersion;
  /** UUID v5, unique per event; de-duplicate on it. */
  event_id: string;
  event_type: T;
  /** Call id for call events, contact id for contact events, subscription id for webhook.test. */
  resource_id: string;
  /** When the event was sent; can be days after the call for a repaired event. */
  created_at: string;
  data: WebhookEventDataMap[T];
}

/** Discriminated union over every event type of v1: `switch (event.event_type)` narrows `data`. */
export type WebhookEvent = { [T in WebhookEventType]: WebhookEventOf<T> }[WebhookEventType];

/** A verified event whose type this SDK does not know yet (added within v1 after this release). */
export interface UnknownWebhookEvent {
  api_version: ApiVersion;
  event_id: string;
  event_type: string;
  resource_id: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** What `verifyWebhook` returns: a known event or one of a type added later. */
export type VerifiedWebhookEvent = WebhookEvent | UnknownWebhookEvent;

const KNOWN = new Set<string>(WEBHOOK_EVENT_TYPES);

export function isKnownEventType(type: string): type is WebhookEventType {
  return KNOWN.has(type);
}

/** Narrows a verified event to the known union, after which `switch (event.event_type)` narrows `data`. */
export function isKnownEvent(event: VerifiedWebhookEvent): event is WebhookEvent {
  return KNOWN.has(event.event_type);
}

/** True for webhook.test deliveries, which carry data._test = true and must not reach business logic. */
export function isTestEvent(event: VerifiedWebhookEvent): boolean {
  return event.event_type === 'webhook.test' || (event.data as Record<string, unknown>)._test === true;
}
