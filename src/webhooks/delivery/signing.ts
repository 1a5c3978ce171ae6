/**
 * Webhook signatures (spec "Authentication" 6 and 8): HMAC-SHA256 keyed by the subscription's signing
 * secret over `<unix seconds>.<exact body bytes>`, hex encoded, sent as
 * `service-signature: t=<unix seconds>,v1=<64 lowercase hex>` with exactly one v1. The same scheme as
 * Stripe's, so `stripe.webhooks.constructEvent` verifies our deliveries too.
 */
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'service-signature';
export const EVENT_ID_HEADER = 'service-event-id';
export const EVENT_TYPE_HEADER = 'service-event-type';
/** The data environment of the event: live or test (spec/api-v1-additions.md "Test mode"); every delivery. */
export const ENVIRONMENT_HEADER = 'service-environment';
/** Only on a rotation test signed with a pending secret (spec "Authentication" 10). */
export const SECRET_ROTATION_ID_HEADER = 'service-secret-rotation-id';

export function signatureHeader(secret: string, body: string, timestampSeconds: number): string {
  const digest = createHmac('sha256', secret)
    .update(`${timestampSeconds}.`)
    .update(body, 'utf8')
    .digest('hex');
  return `t=${timestampSeconds},v1=${digest}`;
}

/**
 * Exactly the headers of a delivery; the HTTP client adds only host, content-length and connection.
 * `rotationSecretId` is set when the delivery is a rotation test signed with that (pending) secret.
 */
export function deliveryHeaders(d: {
  secret: string;
  body: string;
  timestampSeconds: number;
  eventId: string;
  eventType: string;
  /** the event's data environment (never in the envelope, which is unchanged) */
  environment: 'live' | 'test';
  rotationSecretId?: string | null;
}): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [SIGNATURE_HEADER]: signatureHeader(d.secret, d.body, d.timestampSeconds),
    [EVENT_ID_HEADER]: d.eventId,
    [EVENT_TYPE_HEADER]: d.eventType,
    [ENVIRONMENT_HEADER]: d.environment,
  };
  if (d.rotationSecretId) headers[SECRET_ROTATION_ID_HEADER] = d.rotationSecretId;
  return headers;
}
