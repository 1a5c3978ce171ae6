/** The agent leg's TwiML, checked against the official twilio package's VoiceResponse. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import {
  AGENT_NO_KEY,
  AGENT_PROMPT,
  agentAnswerTwiml,
  customerDialTwiml,
  hangupTwiml,
  xmlEscape,
} from '../../src/capture/telephony/twilio/outbound-twiml.ts';

const base = 'https://calls.example.test/telephony/twilio/outbound/4b1c1f52-5d1e-4b7e-9a55-2d1f0c3e9a10';

test('the answer TwiML asks for one key and reports even an empty result, as VoiceResponse writes it', () => {
  const confirm = `${base}/confirm?a=1&b="2"`;
  const r = new VoiceResponse();
  const g = r.gather({
    input: ['dtmf'],
    numDigits: 1,
    timeout: 10,
    action: confirm,
    method: 'POST',
    actionOnEmptyResult: true,
  });
  g.say(AGENT_PROMPT);
  r.say(AGENT_NO_KEY);
  r.hangup();
  assert.equal(agentAnswerTwiml(confirm), r.toString());
});

test('the dial TwiML records dual-channel from answer and names every callback, as VoiceResponse writes it', () => {
  const d = {
    callerId: '+14155550100',
    customer: '+14155552671',
    actionUrl: `${base}/dial-ended`,
    customerStatusUrl: `${base}/customer-status`,
    recordingStatusUrl: 'https://calls.example.test/telephony/twilio/recording?call=x&y=1',
  };
  const r = new VoiceResponse();
  const dial = r.dial({
    callerId: d.callerId,
    timeout: 30,
    action: d.actionUrl,
    method: 'POST',
    record: 'record-from-answer-dual',
    recordingStatusCallback: d.recordingStatusUrl,
    recordingStatusCallbackMethod: 'POST',
    recordingStatusCallbackEvent: ['completed absent'] as never,
  });
  dial.number(
    {
      statusCallback: d.customerStatusUrl,
      statusCallbackMethod: 'POST',
      statusCallbackEvent: ['initiated ringing answered completed'] as never,
    },
    d.customer,
  );
  assert.equal(customerDialTwiml(d), r.toString());
});

test('in no_recording mode the dial carries no recording attribute', () => {
  const xml = customerDialTwiml({
    callerId: '+14155550100',
    customer: '+14155552671',
    actionUrl: `${base}/dial-ended`,
    customerStatusUrl: `${base}/customer-status`,
    recordingStatusUrl: null,
  });
  assert.equal(
    xml,
    `<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="+14155550100" timeout="30" action="${base}/dial-ended" method="POST"><Number statusCallback="${base}/customer-status" statusCallbackMethod="POST" statusCallbackEvent="initiated ringing answered completed">+14155552671</Number></Dial></Response>`,
  );
  assert.doesNotMatch(xml, /record/i);
});

test('hang-up TwiML, with and without words, as VoiceResponse writes it', () => {
  const r = new VoiceResponse();
  r.hangup();
  assert.equal(hangupTwiml(), r.toString());
  const s = new VoiceResponse();
  s.say('Bye & <thanks>');
  s.hangup();
  assert.equal(hangupTwiml('Bye & <thanks>'), s.toString());
});

test('xmlEscape escapes the five entities and nothing else', () => {
  assert.equal(xmlEscape(`a&b<c>d"e'f ✓`), 'a&amp;b&lt;c&gt;d&quot;e&apos;f ✓');
});
