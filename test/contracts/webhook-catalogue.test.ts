/**
 * The OpenAPI `webhooks` catalogue against what the product builds, and the receiver hook that
 * validates every delivery of the test suite: a payload of every event type built by the product's
 * builders matches its catalogue entry (and its zod schema), and a receiver given a delivery outside
 * the catalogue fails the test that closes it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/ids.ts';
import { signatureHeader } from '../../src/webhooks/delivery/signing.ts';
import { EVENT_DATA_SCHEMAS, EVENT_ENVELOPE_SCHEMAS } from '../../src/webhooks/outbox/event-schemas.ts';
import { EVENT_TYPES } from '../../src/webhooks/outbox/event-types.ts';
import { serializeEvent } from '../../src/webhooks/outbox/outbox.ts';
import { sampleEventData } from '../helpers/event-samples.ts';
import { openApiDocument, webhookDeliveryProblems } from '../helpers/openapi-check.ts';
import { startReceiver } from '../helpers/receiver.ts';

const AT = new Date('2026-06-15T10:00:00.000Z');

function delivery(eventType: string, data?: Record<string, unknown>) {
  const id = newId();
  const eventId = newId();
  const body = serializeEvent(
    {
      organizationId: newId(),
      environment: 'live',
      eventType,
      resourceId: id,
      callId: id,
      factKey: eventId,
      data: data ?? sampleEventData(eventType, id, AT),
      createdAt: AT,
    },
    eventId,
  );
  return {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'service-signature': signatureHeader('whsec_x', body, 1_781_517_600),
      'service-event-id': eventId,
      'service-event-type': eventType,
      'service-environment': 'live',
    },
  };
}

test('the catalogue has one entry per event type, in the spec’s order, then the handshake', () => {
  assert.deepEqual(Object.keys(openApiDocument.webhooks), [...EVENT_TYPES, 'webhook.subscription.verify']);
});

test('a payload of every event type built by the product matches its zod schema and its catalogue entry', () => {
  for (const type of EVENT_TYPES) {
    const d = delivery(type);
    const envelope = JSON.parse(d.body);
    assert.doesNotThrow(() => EVENT_DATA_SCHEMAS[type].parse(envelope.data), type);
    assert.doesNotThrow(() => EVENT_ENVELOPE_SCHEMAS[type].parse(envelope), type);
    assert.deepEqual(webhookDeliveryProblems(d), [], type);
  }
  const handshake = JSON.stringify({ event_type: 'webhook.subscription.verify', challenge: 'c-1' });
  assert.deepEqual(
    webhookDeliveryProblems({
      method: 'POST',
      body: handshake,
      headers: { 'content-type': 'application/json' },
    }),
    [],
  );
});

test('deliveries outside the catalogue are named: a missing key, an extra key, a bad header, an unknown type', () => {
  const good = delivery('call.recording.ready');
  const data = JSON.parse(good.body).data as Record<string, unknown>;
  const { duration: _dropped, ...missing } = data;
  assert.match(webhookDeliveryProblems(delivery('call.recording.ready', missing)).join('\n'), /duration/);
  assert.match(
    webhookDeliveryProblems(delivery('call.recording.ready', { ...data, note: 'x' })).join('\n'),
    /additional properties/,
  );
  assert.match(
    webhookDeliveryProblems({
      ...good,
      headers: { ...good.headers, 'service-event-type': 'call.failed' },
    }).join('\n'),
    /service-event-type/,
  );
  assert.match(
    webhookDeliveryProblems(delivery('call.exploded', data)).join('\n'),
    /not in the webhooks catalogue/,
  );
  assert.match(
    webhookDeliveryProblems({
      method: 'POST',
      body: '{"challenge":1}',
      headers: { 'content-type': 'application/json' },
    }).join('\n'),
    /handshake/,
  );
});

test('a receiver that got a delivery outside the catalogue fails close(); a valid one closes cleanly', async () => {
  const rx = await startReceiver();
  const valid = await startReceiver();
  try {
    const bad = delivery('contact.updated', { contact_id: 'not-a-uuid', diff: {} });
    const ok = delivery('contact.updated');
    for (const [target, d] of [
      [rx, bad],
      [valid, ok],
    ] as const) {
      const res = await fetch(target.url, { method: 'POST', headers: d.headers, body: d.body });
      assert.equal(res.status, 200, 'the answer is not disturbed');
    }
    assert.equal(rx.violations.length, 1);
  } finally {
    await assert.rejects(rx.close(), /does not match the OpenAPI webhooks catalogue[\s\S]*contact_id/);
    await valid.close();
  }
});
