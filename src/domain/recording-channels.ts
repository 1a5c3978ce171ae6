import type { Speaker } from './capture-providers.ts';
import type { Direction } from './values.ts';

/**
 * Who is on which channel of a dual-channel call recording — the one place the service decides it;
 * every speech-to-text provider labels channels through these functions (docs/capture.md
 * "Transcript format", docs/decisions.md).
 *
 * Twilio records a two-leg call (`<Dial record="record-from-answer-dual">`) with the PARENT call on
 * the first channel and the CHILD call — the leg the `<Dial>` created — on the second (Twilio's Call
 * resource, RecordingChannels: "The first channel of a dual-channel recording contains the parent
 * call and the second channel contains the child call"). Which person a leg is depends on the call:
 *
 *   inbound   the parent is the caller's call to the service number: the customer. The child is
 *             the phone the service rang (the ring-to number): the agent.
 *   outbound  click-to-call: the service first calls the agent through the REST API (the parent);
 *             the agent's TwiML `<Dial>`s the customer (the child).
 *
 * Either way the first channel holds the side that placed the call. A recording uploaded by the
 * operator (PUT /admin/v1/calls/{id}/recording) is read with the same layout.
 */

/** A leg of a two-leg call, as Twilio names them. */
export type CallLeg = 'parent' | 'child';

/** The leg on each channel (0-based) of a dual-channel recording. */
export const CHANNEL_LEGS: readonly [CallLeg, CallLeg] = ['parent', 'child'];

/** The person a leg is, on a call of this direction. */
export function speakerOfLeg(leg: CallLeg, direction: Direction): 'agent' | 'customer' {
  if (direction === 'inbound') return leg === 'parent' ? 'customer' : 'agent';
  return leg === 'parent' ? 'agent' : 'customer';
}

/** Who speaks on a channel (0-based) of a dual-channel recording; `unknown` for any other channel. */
export function speakerOfChannel(channel: number, direction: Direction): Speaker {
  const leg = Number.isInteger(channel) ? CHANNEL_LEGS[channel] : undefined;
  return leg === undefined ? 'unknown' : speakerOfLeg(leg, direction);
}

/** The channel (0-based) of a dual-channel recording on which a side speaks. */
export function channelOfSpeaker(speaker: 'agent' | 'customer', direction: Direction): 0 | 1 {
  return speakerOfLeg('parent', direction) === speaker ? 0 : 1;
}
