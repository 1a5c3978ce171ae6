import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { test } from 'node:test';
import { ENVIRONMENT_HEADER, getHeader, webhookEnvironment } from '../src/webhooks/headers.ts';
import { signPayload } from '../src/webhooks/sign.ts';
import { verifyWebhook } from '../src/webhooks/verify.ts';
import { atT, callCompletedBody, EVENT_ID, SECRET, T } from './fixtures.ts';

const body = callCompletedBody();
const signature = signPayload(body, SECRET, T);

test('header lookup is case-insensitive in a fetch Headers object', () => {
  const headers = new Headers({ 'Service-Signature': signature, 'SERVICE-EVENT-ID': EVENT_ID });
  assert.equal(getHeader(headers, 'service-signature'), signature);
  assert.equal(verifyWebhook(body, headers, SECRET, { now: atT() }).event_id, EVENT_ID);
});

test('header lookup is case-insensitive in a plain object', () => {
  const headers = { 'Service-Signature': signature, 'Service-Event-Type': 'call.completed' };
  assert.equal(getHeader(headers, 'SERVICE-SIGNATURE'), signature);
  assert.equal(getHeader(headers, 'service-event-id'), undefined);
  assert.equal(verifyWebhook(body, headers, SECRET, { now: atT() }).event_id, EVENT_ID);
});

test("Node's IncomingHttpHeaders with an array value are joined and verified", () => {
  const [t, v1] = signature.split(',');
  const headers: IncomingHttpHeaders = { 'service-signature': [t, v1], host: 'receiver.example' };
  assert.equal(getHeader(headers, 'service-signature'), `${t}, ${v1}`);
  assert.equal(verifyWebhook(body, headers, SECRET, { now: atT() }).event_id, EVENT_ID);
});

test('undefined values in a plain object count as absent', () => {
  assert.equal(getHeader({ 'service-signature': undefined }, 'service-signature'), undefined);
});

test('webhookEnvironment reads service-environment as live or test, in any case, and nothing else', () => {
  assert.equal(webhookEnvironment({ 'service-environment': 'live' }), 'live');
  assert.equal(webhookEnvironment({ 'Service-Environment': ' TEST ' }), 'test');
  assert.equal(webhookEnvironment(new Headers({ 'service-environment': 'test' })), 'test');
  assert.equal(webhookEnvironment({}), undefined);
  assert.equal(webhookEnvironment({ 'service-environment': 'prod' }), undefined);
  assert.equal(ENVIRONMENT_HEADER, 'service-environment');
});
