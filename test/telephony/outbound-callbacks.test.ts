/** Twilio's outbound callback parameters, read as observations of the two legs. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type OutboundCallbackKind,
  observeOutboundCallback,
  outboundCallbackKey,
} from '../../src/capture/telephony/twilio/outbound-callbacks.ts';

const TABLE: [OutboundCallbackKind, Record<string, string>, unknown][] = [
  ['answer', { CallStatus: 'in-progress' }, { kind: 'agent_answered' }],
  ['answer', { CallStatus: 'in-progress', AnsweredBy: 'human' }, { kind: 'agent_answered' }],
  ['answer', { AnsweredBy: 'machine_end_beep' }, { kind: 'agent_unconfirmed', reason: 'agent_voicemail' }],
  ['answer', { AnsweredBy: 'fax' }, { kind: 'agent_unconfirmed', reason: 'agent_voicemail' }],
  ['confirm', { Digits: '1' }, { kind: 'agent_confirmed' }],
  ['confirm', { Digits: '#' }, { kind: 'agent_confirmed' }],
  ['confirm', { Digits: '' }, { kind: 'agent_unconfirmed', reason: 'agent_no_confirmation' }],
  ['confirm', {}, { kind: 'agent_unconfirmed', reason: 'agent_no_confirmation' }],
  ['agent-status', { CallStatus: 'queued' }, { kind: 'agent_ringing' }],
  ['agent-status', { CallStatus: 'initiated' }, { kind: 'agent_ringing' }],
  ['agent-status', { CallStatus: 'ringing' }, { kind: 'agent_ringing' }],
  ['agent-status', { CallStatus: 'in-progress' }, { kind: 'agent_answered' }],
  [
    'agent-status',
    { CallStatus: 'in-progress', AnsweredBy: 'machine_start' },
    { kind: 'agent_unconfirmed', reason: 'agent_voicemail' },
  ],
  ['agent-status', { CallStatus: 'completed' }, { kind: 'agent_ended' }],
  ['agent-status', { CallStatus: 'busy' }, { kind: 'agent_unreached', reason: 'agent_busy' }],
  ['agent-status', { CallStatus: 'no-answer' }, { kind: 'agent_unreached', reason: 'agent_no_answer' }],
  ['agent-status', { CallStatus: 'failed' }, { kind: 'agent_unreached', reason: 'carrier_failed' }],
  ['agent-status', { CallStatus: 'canceled' }, { kind: 'agent_unreached', reason: 'agent_canceled' }],
  ['agent-status', { CallStatus: 'mystery' }, null],
  ['agent-status', {}, null],
  ['customer-status', { CallStatus: 'initiated' }, { kind: 'customer_ringing' }],
  ['customer-status', { CallStatus: 'ringing' }, { kind: 'customer_ringing' }],
  ['customer-status', { CallStatus: 'in-progress' }, { kind: 'customer_answered' }],
  ['customer-status', { CallStatus: 'answered' }, { kind: 'customer_answered' }],
  ['customer-status', { CallStatus: 'completed', CallDuration: '42' }, { kind: 'customer_ended' }],
  ['customer-status', { CallStatus: 'busy' }, { kind: 'customer_unreached', reason: 'customer_busy' }],
  [
    'customer-status',
    { CallStatus: 'no-answer' },
    { kind: 'customer_unreached', reason: 'customer_no_answer' },
  ],
  ['customer-status', { CallStatus: 'failed' }, { kind: 'customer_unreached', reason: 'carrier_failed' }],
  [
    'customer-status',
    { CallStatus: 'canceled' },
    { kind: 'customer_unreached', reason: 'customer_canceled' },
  ],
  ['customer-status', {}, null],
  ['dial-ended', { DialCallStatus: 'completed', DialCallDuration: '42' }, { kind: 'customer_ended' }],
  ['dial-ended', { DialCallStatus: 'answered' }, { kind: 'customer_ended' }],
  ['dial-ended', { DialCallStatus: 'busy' }, { kind: 'customer_unreached', reason: 'customer_busy' }],
  [
    'dial-ended',
    { DialCallStatus: 'no-answer' },
    { kind: 'customer_unreached', reason: 'customer_no_answer' },
  ],
  ['dial-ended', { DialCallStatus: 'failed' }, { kind: 'customer_unreached', reason: 'carrier_failed' }],
  ['dial-ended', { DialCallStatus: 'canceled' }, { kind: 'customer_unreached', reason: 'customer_canceled' }],
  ['dial-ended', { CallStatus: 'completed' }, null],
];

for (const [kind, params, obs] of TABLE) {
  test(`${kind} ${JSON.stringify(params)} → ${JSON.stringify(obs)}`, () => {
    assert.deepEqual(observeOutboundCallback(kind, params), obs);
  });
}

test('the at-most-once key names the call, the kind, the leg and the reported status', () => {
  const id = '4b1c1f52-5d1e-4b7e-9a55-2d1f0c3e9a10';
  assert.equal(
    outboundCallbackKey(id, 'agent-status', { CallSid: 'CA1', CallStatus: 'ringing' }),
    `outbound:${id}:agent-status:CA1:ringing`,
  );
  assert.equal(
    outboundCallbackKey(id, 'confirm', { CallSid: 'CA1', Digits: '5' }),
    `outbound:${id}:confirm:CA1:pressed`,
  );
  assert.equal(
    outboundCallbackKey(id, 'confirm', { CallSid: 'CA1', Digits: '' }),
    `outbound:${id}:confirm:CA1:none`,
  );
  assert.equal(
    outboundCallbackKey(id, 'dial-ended', { CallSid: 'CA1', DialCallStatus: 'busy' }),
    `outbound:${id}:dial-ended:CA1:busy`,
  );
  assert.equal(outboundCallbackKey(id, 'answer', { CallSid: 'CA1' }), `outbound:${id}:answer:CA1:answered`);
});
