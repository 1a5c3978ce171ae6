/**
 * Every event type of the spec ("Event types"), in one place. Subscriptions select from
 * SELECTABLE_EVENT_TYPES; an empty selection means every type (including ones added later in v1).
 * webhook.test is not selectable: the Test action sends it to that one subscription regardless of
 * its selection.
 */
export const EVENT_TYPES = [
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
export type EventType = (typeof EVENT_TYPES)[number];

export const TEST_EVENT_TYPE = 'webhook.test';

export const SELECTABLE_EVENT_TYPES: readonly string[] = EVENT_TYPES.filter((t) => t !== TEST_EVENT_TYPE);
