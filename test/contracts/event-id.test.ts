import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EVENT_ID_NAMESPACE, eventIdFor } from '../../src/webhooks/outbox/outbox.ts';

/**
 * Golden vectors: event ids are what receivers de-duplicate on, so the derivation must never change
 * (a new namespace or name format would re-deliver every replayed fact under a new id). The
 * expected values were computed independently of this code base (Python's uuid.uuid5 with the
 * namespace below and the name "<event type>:<fact key>") and are written out literally.
 */
test('the event id namespace is fixed', () => {
  assert.equal(EVENT_ID_NAMESPACE, '6f1c9a52-3a57-4e0e-9d8b-2b7c1f0a4c11');
});

test('event_id = UUIDv5(namespace, "<event type>:<fact key>"), golden vectors', () => {
  assert.equal(
    eventIdFor('call.completed', '0b5c5f0e-7f37-4d4e-9a0f-1d2c3b4a5968'),
    'ff048a3e-8ae5-5def-b484-32abc5b139e5',
  );
  assert.equal(
    eventIdFor('contact.updated', '0b5c5f0e-7f37-4d4e-9a0f-1d2c3b4a5968:3'),
    '9e859a61-4dfa-58d2-921a-2d9189bc726e',
  );
});
