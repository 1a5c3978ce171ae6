/**
 * The TwiML of an outbound (click-to-call) call's agent leg, as Twilio documents it. Pure: the URLs
 * and numbers come in, XML text goes out. Twilio follows the URLs named here back to the service
 * (outbound-callbacks.ts says what each request means).
 *
 * 1. When the agent's phone answers: a <Gather> for one key (actionOnEmptyResult: the action is
 *    requested even when no key was pressed, so "no confirmation" is reported, not guessed).
 * 2. When a key was pressed: <Dial> the customer from the service number; the customer leg reports
 *    its progress to its own status callback; the dial is recorded dual-channel from answer (agent
 *    and customer on separate channels) unless the call runs in no_recording mode.
 * 3. Otherwise (and after the dial): hang up.
 */

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>';

/** Escapes text and attribute values (the five XML entities). */
export function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&apos;',
  );
}

function attrs(a: Record<string, string | number | undefined>): string {
  return Object.entries(a)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlEscape(String(v))}"`)
    .join('');
}

/** Seconds the agent has to press a key. */
export const CONFIRM_TIMEOUT_SECONDS = 10;
/** Seconds the customer's phone rings before the dial gives up (no-answer). */
export const CUSTOMER_RING_SECONDS = 30;

export const AGENT_PROMPT = 'Press any key to call the customer.';
export const AGENT_NO_KEY = 'No key was pressed. Goodbye.';

/** The agent answered: ask for a key press, reported to confirmUrl. */
export function agentAnswerTwiml(confirmUrl: string): string {
  return (
    `${XML_HEAD}<Response>` +
    `<Gather${attrs({
      input: 'dtmf',
      numDigits: 1,
      timeout: CONFIRM_TIMEOUT_SECONDS,
      action: confirmUrl,
      method: 'POST',
      actionOnEmptyResult: 'true',
    })}><Say>${xmlEscape(AGENT_PROMPT)}</Say></Gather>` +
    `<Say>${xmlEscape(AGENT_NO_KEY)}</Say><Hangup/></Response>`
  );
}

export interface CustomerDial {
  /** the service number the customer sees (E.164) */
  callerId: string;
  /** the customer's number (E.164) */
  customer: string;
  /** requested when the dial is over (DialCallStatus) */
  actionUrl: string;
  /** the customer leg's status callback */
  customerStatusUrl: string;
  /** where Twilio reports the recording; null = no_recording mode, the dial is not recorded */
  recordingStatusUrl: string | null;
}

/** The agent confirmed: dial the customer. */
export function customerDialTwiml(d: CustomerDial): string {
  const recording =
    d.recordingStatusUrl === null
      ? {}
      : {
          record: 'record-from-answer-dual',
          recordingStatusCallback: d.recordingStatusUrl,
          recordingStatusCallbackMethod: 'POST',
          recordingStatusCallbackEvent: 'completed absent',
        };
  return (
    `${XML_HEAD}<Response>` +
    `<Dial${attrs({
      callerId: d.callerId,
      timeout: CUSTOMER_RING_SECONDS,
      action: d.actionUrl,
      method: 'POST',
      ...recording,
    })}>` +
    `<Number${attrs({
      statusCallback: d.customerStatusUrl,
      statusCallbackMethod: 'POST',
      statusCallbackEvent: 'initiated ringing answered completed',
    })}>${xmlEscape(d.customer)}</Number></Dial></Response>`
  );
}

/** The agent did not confirm, the dial is over, or the call is no longer ours to continue. */
export function hangupTwiml(say?: string): string {
  return `${XML_HEAD}<Response>${say ? `<Say>${xmlEscape(say)}</Say>` : ''}<Hangup/></Response>`;
}
