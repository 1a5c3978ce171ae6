/**
 * The SDK's event model (sdk/src/webhooks) must describe exactly what the server sends: the same
 * event types, the same envelope, the same data keys per event type, the same analysis keys.
 * Checked twice: by the compiler (`npm run typecheck` fails when a key differs; the `Check` objects
 * below only compile while every entry is `true`) and at run time, against what the server's
 * builders really produce.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as Sdk from '../../sdk/src/webhooks/index.ts';
import { API_VERSION as SDK_API_VERSION, WEBHOOK_EVENT_TYPES } from '../../sdk/src/webhooks/index.ts';
import { canonicalAnalysis, type ProcessedAnalysis } from '../../src/domain/analysis.ts';
import {
  callCompletedData,
  callTranscribedData,
  followupDraftedData,
  trackerMatchedData,
} from '../../src/webhooks/outbox/event-data/call-processing.ts';
import { contactCreatedData, contactUpdatedData } from '../../src/webhooks/outbox/event-data/contact.ts';
import { deletionScheduledData } from '../../src/webhooks/outbox/event-data/deletion.ts';
import {
  callFailedData,
  lifecycleRepairedData,
  outboundAttemptedData,
} from '../../src/webhooks/outbox/event-data/outbound.ts';
import { recordingDeletedData, recordingReadyData } from '../../src/webhooks/outbox/event-data/recording.ts';
import { EVENT_TYPES, type EventType } from '../../src/webhooks/outbox/event-types.ts';
import { type API_VERSION, serializeEvent } from '../../src/webhooks/outbox/outbox.ts';
import { testEventData } from '../../src/webhooks/subscriptions/test-event.ts';

/** true when A and B are the same type (not merely assignable one way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** The declared keys of T, without an index signature ("unknown extra fields may appear"). */
type KnownKeys<T> = keyof {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};
/** Every declared key of T exactly once: an object literal of this type lists them all, no more. */
type KeySet<T> = Record<KnownKeys<T>, true>;

const ID = '0b5c5f0e-7f37-4d4e-9a0f-1d2c3b4a5968';
const AT = new Date('2026-06-15T10:00:00.000Z');
const sorted = (o: object) => Object.keys(o).sort();

// ---- event types -------------------------------------------------------------------------------

const eventTypesMatch: Equal<EventType, Sdk.WebhookEventType> = true;
const dataMapCoversEveryType: Equal<keyof Sdk.WebhookEventDataMap, EventType> = true;

test('the SDK lists exactly the server’s event types, in the same order', () => {
  assert.ok(eventTypesMatch && dataMapCoversEveryType);
  assert.deepEqual([...WEBHOOK_EVENT_TYPES], [...EVENT_TYPES]);
});

// ---- envelope ----------------------------------------------------------------------------------

const SDK_ENVELOPE_KEYS: KeySet<Sdk.WebhookEventOf<'call.completed'>> = {
  api_version: true,
  event_id: true,
  event_type: true,
  resource_id: true,
  created_at: true,
  data: true,
};
const apiVersionMatches: Equal<typeof API_VERSION, Sdk.ApiVersion> = true;

test('the envelope the server serialises has the SDK’s keys and api_version', () => {
  assert.ok(apiVersionMatches);
  const body = JSON.parse(
    serializeEvent(
      {
        organizationId: ID,
        environment: 'live',
        eventType: 'call.recording.ready',
        resourceId: ID,
        callId: ID,
        factKey: ID,
        data: recordingReadyData(ID, null, null),
        createdAt: AT,
      },
      ID,
    ),
  );
  assert.deepEqual(Object.keys(body), Object.keys(SDK_ENVELOPE_KEYS));
  assert.equal(body.api_version, SDK_API_VERSION);
});

// ---- processed analysis ------------------------------------------------------------------------

const analysisKeysMatch: Equal<keyof ProcessedAnalysis, KnownKeys<Sdk.ProcessedAnalysis>> = true;
const SDK_ANALYSIS_KEYS: KeySet<Sdk.ProcessedAnalysis> = {
  caller_name: true,
  summary: true,
  subject: true,
  service_needed: true,
  services_match: true,
  lead_score: true,
  preferred_date: true,
  client_city: true,
  client_address: true,
  additional_details: true,
  caller_location: true,
  client_country: true,
  counterparty_name: true,
  detected_language: true,
  proposal_items: true,
};

test('the analysis the server writes has exactly the SDK’s ProcessedAnalysis keys', () => {
  assert.ok(analysisKeysMatch);
  const written = canonicalAnalysis({ detected_language: 'en' });
  assert.deepEqual(sorted(written), sorted(SDK_ANALYSIS_KEYS));
});

// ---- data of every event type ------------------------------------------------------------------

const analysis = canonicalAnalysis({ summary: 'Needs a plumber.', detected_language: 'en' });
const completed = callCompletedData(
  {
    id: ID,
    direction: 'inbound',
    callerPhone: '+14155552671',
    customerPhoneE164: '+14155552671',
    customerPhoneNational: '(415) 555-2671',
    companyPhoneE164: '+14155550100',
    createdAt: AT,
    duration: 12,
  },
  { appUrl: `https://x.test/app/calls/${ID}`, recordingUrl: null, analysis, transcriptOriginal: 'Hi' },
);
const contact = {
  id: ID,
  phone: '+14155552671',
  first_name: 'Ana',
  last_name: null,
  email: null,
  company: null,
};
const match = { tracker_id: ID, name: 'Pricing', matched_terms: ['quote'], excerpts: ['a quote'] };

/** What the server's builders produce for each event type (webhook.test: the Test action's data). */
const built = {
  'call.completed': completed,
  'call.outbound.attempted': outboundAttemptedData({
    callId: ID,
    agentUserId: ID,
    customerPhone: '415 555 2671',
    customerPhoneE164: '+14155552671',
    outboundLifecycle: 'completed',
    duration: 12,
    attemptedAt: AT,
    hasRecording: true,
  }),
  'call.recording.ready': recordingReadyData(ID, null, 12),
  'call.transcribed': callTranscribedData(ID, 'Hi', analysis),
  'call.failed': callFailedData(ID, 'customer_no_answer', 'customer_busy'),
  'call.outbound.lifecycle_repaired': lifecycleRepairedData(ID, AT),
  'call.deletion_scheduled': deletionScheduledData(ID, AT, 'user_erasure'),
  'call.recording.deleted': recordingDeletedData({
    callId: ID,
    reason: null,
    recordingSid: null,
    deletionKind: 'hard_deleted',
    deletedAt: AT,
  }),
  'call.followup_email.drafted': followupDraftedData(ID, { subject: 's', body: 'b', language: 'en' }),
  'call.tracker.matched': trackerMatchedData(ID, [match]),
  'contact.created': contactCreatedData(contact),
  'contact.updated': contactUpdatedData(ID, { email: 'a@b.test' }),
  'webhook.test': testEventData(ID, AT, 'https://x.test'),
} satisfies Record<EventType, object>;

type Built = typeof built;
/** Compile-time: each builder's keys equal the SDK data type's keys (webhook.test is typed loosely by its builder, so it is checked at run time only). */
type KeysMatch = {
  [T in Exclude<EventType, 'webhook.test'>]: Equal<keyof Built[T], KnownKeys<Sdk.WebhookEventDataMap[T]>>;
};
const dataKeysMatch: KeysMatch = {
  'call.completed': true,
  'call.outbound.attempted': true,
  'call.recording.ready': true,
  'call.transcribed': true,
  'call.failed': true,
  'call.outbound.lifecycle_repaired': true,
  'call.deletion_scheduled': true,
  'call.recording.deleted': true,
  'call.followup_email.drafted': true,
  'call.tracker.matched': true,
  'contact.created': true,
  'contact.updated': true,
};

/** The SDK's data keys per event type, as values (each list checked complete and exact by the compiler). */
const SDK_DATA_KEYS: { [T in EventType]: KeySet<Sdk.WebhookEventDataMap[T]> } = {
  'call.completed': {
    call_id: true,
    direction: true,
    caller_phone: true,
    customer_phone_e164: true,
    customer_phone_national: true,
    company_phone_e164: true,
    call_created_at: true,
    app_url: true,
    duration: true,
    recording_url: true,
    transcript_processed: true,
    transcript_original: true,
  },
  'call.outbound.attempted': {
    call_id: true,
    agent_user_id: true,
    customer_phone: true,
    customer_phone_e164: true,
    outbound_lifecycle: true,
    duration: true,
    attempted_at: true,
    has_recording: true,
  },
  'call.recording.ready': { call_id: true, recording_url: true, duration: true },
  'call.transcribed': { call_id: true, transcript_original: true, transcript_processed: true },
  'call.failed': { call_id: true, outbound_lifecycle: true, failure_reason: true },
  'call.outbound.lifecycle_repaired': {
    call_id: true,
    previous_lifecycle: true,
    new_lifecycle: true,
    repaired_at: true,
  },
  'call.deletion_scheduled': { call_id: true, pending_deletion_at: true, reason: true },
  'call.recording.deleted': {
    call_id: true,
    reason: true,
    recording_sid: true,
    deletion_kind: true,
    deleted_at: true,
  },
  'call.followup_email.drafted': { call_id: true, subject: true, body: true, language: true },
  'call.tracker.matched': { call_id: true, matches: true },
  'contact.created': { contact: true },
  'contact.updated': { contact_id: true, diff: true },
  'webhook.test': {
    call_id: true,
    direction: true,
    caller_phone: true,
    customer_phone_e164: true,
    customer_phone_national: true,
    company_phone_e164: true,
    call_created_at: true,
    app_url: true,
    duration: true,
    recording_url: true,
    transcript_processed: true,
    transcript_original: true,
    _test: true,
    _message: true,
    _sent_at: true,
  },
};

test('for every event type the server’s data has exactly the keys of the SDK’s data type', () => {
  assert.ok(Object.values(dataKeysMatch).every((v) => v === true));
  for (const type of EVENT_TYPES) {
    assert.deepEqual(sorted(built[type]), sorted(SDK_DATA_KEYS[type]), type);
  }
});

const contactKeysMatch: Equal<keyof typeof contact, KnownKeys<Sdk.Contact>> = true;
const matchKeysMatch: Equal<
  keyof Built['call.tracker.matched']['matches'][number],
  KnownKeys<Sdk.TrackerMatch>
> = true;
const SDK_CONTACT_KEYS: KeySet<Sdk.Contact> = {
  id: true,
  phone: true,
  first_name: true,
  last_name: true,
  email: true,
  company: true,
};
const SDK_MATCH_KEYS: KeySet<Sdk.TrackerMatch> = {
  tracker_id: true,
  name: true,
  matched_terms: true,
  excerpts: true,
};

test('nested objects match too: the contact snapshot, tracker matches, the analysis in call data', () => {
  assert.ok(contactKeysMatch && matchKeysMatch);
  assert.deepEqual(sorted(built['contact.created'].contact), sorted(SDK_CONTACT_KEYS));
  assert.deepEqual(sorted(built['call.tracker.matched'].matches[0]), sorted(SDK_MATCH_KEYS));
  for (const type of ['call.completed', 'call.transcribed', 'webhook.test'] as const) {
    const data = built[type] as { transcript_processed: object };
    assert.deepEqual(sorted(data.transcript_processed), sorted(SDK_ANALYSIS_KEYS), type);
  }
});
