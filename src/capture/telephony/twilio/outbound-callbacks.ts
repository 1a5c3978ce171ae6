/**
 * Twilio's callbacks of an outbound (click-to-call) call, read as observations of the two legs
 * (domain/outbound-progress.ts decides what they do to the lifecycle). Pure: parameters in, an
 * observation (or null: the request says nothing about the lifecycle) out.
 *
 * The service names one URL per kind in the REST call and the TwiML it returns
 * (outbound-twiml.ts); the kind is known from the path, never guessed from the parameters:
 * - answer:          the agent leg's Url, fetched when the agent's phone answers (CallStatus, AnsweredBy)
 * - confirm:         the agent's <Gather> action (Digits; empty when no key was pressed)
 * - agent-status:    the agent leg's StatusCallback (CallStatus: initiated ringing in-progress completed
 *                    busy no-answer failed canceled; AnsweredBy with answering-machine detection)
 * - customer-status: the customer leg's <Number statusCallback> (CallStatus, as above)
 * - dial-ended:      the <Dial action> on the agent leg when the customer leg is over (DialCallStatus:
 *                    completed answered busy no-answer failed canceled)
 */
import type { OutboundObservation } from '../../../domain/outbound-progress.ts';

export const OUTBOUND_CALLBACK_KINDS = [
  'answer',
  'confirm',
  'agent-status',
  'customer-status',
  'dial-ended',
] as const;
export type OutboundCallbackKind = (typeof OUTBOUND_CALLBACK_KINDS)[number];

export function isOutboundCallbackKind(s: string): s is OutboundCallbackKind {
  return (OUTBOUND_CALLBACK_KINDS as readonly string[]).includes(s);
}

/** AnsweredBy values of answering-machine detection that are not a person. */
const isMachine = (answeredBy: string | undefined) =>
  !!answeredBy && (answeredBy.startsWith('machine') || answeredBy === 'fax');

export function observeOutboundCallback(
  kind: OutboundCallbackKind,
  p: Readonly<Record<string, string | undefined>>,
): OutboundObservation | null {
  switch (kind) {
    case 'answer':
      return isMachine(p.AnsweredBy)
        ? { kind: 'agent_unconfirmed', reason: 'agent_voicemail' }
        : { kind: 'agent_answered' };
    case 'confirm':
      return (p.Digits ?? '').trim() !== ''
        ? { kind: 'agent_confirmed' }
        : { kind: 'agent_unconfirmed', reason: 'agent_no_confirmation' };
    case 'agent-status':
      switch (p.CallStatus) {
        case 'queued':
        case 'initiated':
        case 'ringing':
          return { kind: 'agent_ringing' };
        case 'in-progress':
          return isMachine(p.AnsweredBy)
            ? { kind: 'agent_unconfirmed', reason: 'agent_voicemail' }
            : { kind: 'agent_answered' };
        case 'completed':
          return { kind: 'agent_ended' };
        case 'busy':
          return { kind: 'agent_unreached', reason: 'agent_busy' };
        case 'no-answer':
          return { kind: 'agent_unreached', reason: 'agent_no_answer' };
        case 'failed':
          return { kind: 'agent_unreached', reason: 'carrier_failed' };
        case 'canceled':
          return { kind: 'agent_unreached', reason: 'agent_canceled' };
        default:
          return null;
      }
    case 'customer-status':
      switch (p.CallStatus) {
        case 'queued':
        case 'initiated':
        case 'ringing':
          return { kind: 'customer_ringing' };
        case 'in-progress':
        case 'answered':
          return { kind: 'customer_answered' };
        case 'completed':
          return { kind: 'customer_ended' };
        default:
          return customerUnreached(p.CallStatus);
      }
    case 'dial-ended':
      switch (p.DialCallStatus) {
        case 'completed':
        case 'answered':
          return { kind: 'customer_ended' };
        default:
          return customerUnreached(p.DialCallStatus);
      }
  }
}

function customerUnreached(status: string | undefined): OutboundObservation | null {
  switch (status) {
    case 'busy':
      return { kind: 'customer_unreached', reason: 'customer_busy' };
    case 'no-answer':
      return { kind: 'customer_unreached', reason: 'customer_no_answer' };
    case 'failed':
      return { kind: 'customer_unreached', reason: 'carrier_failed' };
    case 'canceled':
      return { kind: 'customer_unreached', reason: 'customer_canceled' };
    default:
      return null;
  }
}

/**
 * The at-most-once key of an outbound callback: one per leg, kind and reported status (Twilio
 * retries a request with the same parameters; a second report of the same status is a duplicate).
 */
export function outboundCallbackKey(
  callId: string,
  kind: OutboundCallbackKind,
  p: Readonly<Record<string, string | undefined>>,
): string {
  const status =
    kind === 'confirm'
      ? (p.Digits ?? '').trim() === ''
        ? 'none'
        : 'pressed'
      : kind === 'dial-ended'
        ? (p.DialCallStatus ?? '')
        : kind === 'answer'
          ? 'answered'
          : (p.CallStatus ?? '');
  return `outbound:${callId}:${kind}:${p.CallSid ?? ''}:${status}`;
}
