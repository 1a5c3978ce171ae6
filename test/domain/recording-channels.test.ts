import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CHANNEL_LEGS,
  channelOfSpeaker,
  speakerOfChannel,
  speakerOfLeg,
} from '../../src/domain/recording-channels.ts';

// Twilio: the first channel of a dual-channel recording is the parent call, the second the child.
// Inbound: the parent is the caller (customer), the child the phone the service rang (agent).
// Outbound click-to-call: the parent is the agent's leg (placed by the REST API), the child the customer.
// [direction, channel, leg, speaker]
const table = [
  ['inbound', 0, 'parent', 'customer'],
  ['inbound', 1, 'child', 'agent'],
  ['outbound', 0, 'parent', 'agent'],
  ['outbound', 1, 'child', 'customer'],
] as const;

test('each channel of a dual-channel recording is a leg, and each leg a side, by the call direction', () => {
  for (const [direction, channel, leg, speaker] of table) {
    const label = `${direction} channel ${channel}`;
    assert.equal(CHANNEL_LEGS[channel], leg, label);
    assert.equal(speakerOfLeg(leg, direction), speaker, label);
    assert.equal(speakerOfChannel(channel, direction), speaker, label);
    assert.equal(channelOfSpeaker(speaker, direction), channel, label);
  }
});

test('the two channels of one call are always the two sides', () => {
  for (const direction of ['inbound', 'outbound'] as const) {
    assert.deepEqual(
      [speakerOfChannel(0, direction), speakerOfChannel(1, direction)].sort(),
      ['agent', 'customer'],
      direction,
    );
  }
});

test('a channel that is not 0 or 1 is nobody the service can place', () => {
  for (const direction of ['inbound', 'outbound'] as const) {
    for (const channel of [-1, 2, 3, 0.5, Number.NaN]) {
      assert.equal(speakerOfChannel(channel, direction), 'unknown', `${direction} ${channel}`);
    }
  }
});
