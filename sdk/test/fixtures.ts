/** Shared fixtures: a realistic signed delivery built the way the service builds it. */
import { signPayload } from '../src/webhooks/sign.ts';

export const SECRET = 'whsec_test_6f1c2a9e0b7d4c3f8a5e';
export const T = 1_781_000_000;
/** A clock frozen at T (milliseconds). */
export const atT =
  (offsetSeconds = 0) =>
  () =>
    (T + offsetSeconds) * 1000;

export const EVENT_ID = '8d6a3c1e-5b7f-5d2a-9c4e-1f0b2a3c4d5e';
export const CALL_ID = '0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a';

export function callCompletedBody(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    api_version: '2026-06-15',
    event_id: EVENT_ID,
    event_type: 'call.completed',
    resource_id: CALL_ID,
    created_at: '2026-06-20T10:00:00.000Z',
    data: {
      call_id: CALL_ID,
      direction: 'inbound',
      caller_phone: '+4915112345678',
      customer_phone_e164: '+4915112345678',
      duration: 73,
      recording_url: null,
      transcript_processed: {
        caller_name: 'Jana Novak',
        summary: 'Asks for a quote to fix a leaking roof.',
        subject: 'Roof repair quote',
        service_needed: 'roof repair',
        services_match: true,
        lead_score: 8,
        preferred_date: null,
        client_city: 'Leipzig',
        client_address: null,
        additional_details: null,
        sentiment_hint: 'positive',
      },
      transcript_original: 'Hello, my roof is leaking…',
    },
    ...overrides,
  });
}

/** Headers as the service sends them, signed with `secret` at `timestamp`. */
export function deliveryHeaders(body: string, secret = SECRET, timestamp = T): Record<string, string> {
  const parsed = JSON.parse(body) as { event_id: string; event_type: string };
  return {
    'content-type': 'application/json',
    'service-signature': signPayload(body, secret, timestamp),
    'service-event-id': parsed.event_id,
    'service-event-type': parsed.event_type,
  };
}
