import type { Speaker } from './capture-providers.ts';

/**
 * The simulated carrier's pure rules (spec/api-v1-additions.md "Test mode"; docs/test-mode.md
 * "Simulated carrier and magic numbers"): which outcome a test call's customer number asks for,
 * the steps each outcome plays (in the carrier's callback vocabulary, so that the service functions
 * the Twilio callbacks call apply them), the default scripts, and the timeline of a script's turns
 * that both the recording (its audio) and the transcript (its segment times) follow.
 */

/** The documented numbers of a test call when the organization or the agent has none (fictional 555-01xx range). */
export const TEST_SERVICE_NUMBER = '+12025550100';
export const TEST_AGENT_PHONE = '+12025550101';
/** The caller of an inbound test call when none is given. */
export const TEST_CALLER_PHONE = '+12025550199';

/** What an outbound test call does, by the last four digits of customer_phone. */
export const OUTBOUND_SCENARIOS = [
  'connected',
  'customer_busy',
  'agent_no_confirmation',
  'carrier_rejected',
  'late_repair',
] as const;
export type OutboundScenario = (typeof OUTBOUND_SCENARIOS)[number];

export const MAGIC_NUMBERS: Readonly<Record<string, OutboundScenario>> = {
  '0000': 'connected',
  '0001': 'customer_busy',
  '0002': 'agent_no_confirmation',
  '0003': 'carrier_rejected',
  '0004': 'late_repair',
};

/** The scenario of a customer number (E.164): its last four digits, `connected` when not listed. */
export function outboundScenarioOf(customerE164: string): OutboundScenario {
  return MAGIC_NUMBERS[customerE164.replace(/\D/g, '').slice(-4)] ?? 'connected';
}

export const INBOUND_SCENARIOS = ['conversation', 'voicemail', 'recording_refused', 'anonymous'] as const;
export type InboundScenario = (typeof INBOUND_SCENARIOS)[number];
export type SimulatedScenario = OutboundScenario | InboundScenario;

export function isSimulatedScenario(s: string): s is SimulatedScenario {
  return (
    (OUTBOUND_SCENARIOS as readonly string[]).includes(s) ||
    (INBOUND_SCENARIOS as readonly string[]).includes(s)
  );
}

/** A call leg, as the carrier reports it: the agent's (the parent of an outbound call) or the customer's. */
export type SimLeg = 'parent' | 'child';

/**
 * One step of a simulated call, `at` seconds after it was placed. The kinds are the carrier's
 * callbacks (docs/capture.md "Outbound calls", "Connecting Twilio"), with the parameters Twilio
 * would send; `recording` first stores the audio in the simulated store; `no_word` is the periodic
 * check's observation (an agent_only call: the customer leg's outcome never came).
 */
export type SimStep =
  | {
      at: number;
      kind: 'outbound';
      callback: 'answer' | 'confirm' | 'agent-status' | 'customer-status' | 'dial-ended';
      params: Record<string, string>;
    }
  | { at: number; kind: 'status'; leg: SimLeg; params: Record<string, string> }
  | { at: number; kind: 'consent'; params: Record<string, string> }
  | { at: number; kind: 'dial-ended'; params: Record<string, string> }
  | { at: number; kind: 'voicemail-ended' }
  | { at: number; kind: 'recording'; status: 'completed' | 'absent'; channels: 1 | 2 }
  | { at: number; kind: 'no_word' };

/** Seconds of the conversation of a connected outbound test call (the spec's "30 s conversation"). */
export const CONNECTED_SECONDS = 30;

/**
 * The steps of an outbound test call (carrier_rejected has none: the carrier refuses the call when
 * it is placed). Wall time: a few seconds from start to end, whatever the conversation's length.
 */
export function outboundSteps(scenario: OutboundScenario, seconds: number): SimStep[] {
  const agent = (at: number, CallStatus: string, extra: Record<string, string> = {}): SimStep => ({
    at,
    kind: 'outbound',
    callback: 'agent-status',
    params: { CallStatus, ...extra },
  });
  const customer = (at: number, CallStatus: string, extra: Record<string, string> = {}): SimStep => ({
    at,
    kind: 'outbound',
    callback: 'customer-status',
    params: { CallStatus, ...extra },
  });
  const answered: SimStep[] = [
    agent(0, 'initiated'),
    agent(0.5, 'ringing'),
    {
      at: 1,
      kind: 'outbound',
      callback: 'answer',
      params: { CallStatus: 'in-progress', AnsweredBy: 'human' },
    },
    agent(1, 'in-progress'),
  ];
  const duration = String(Math.round(seconds));
  switch (scenario) {
    case 'carrier_rejected':
      return [];
    case 'agent_no_confirmation':
      return [
        ...answered,
        { at: 2, kind: 'outbound', callback: 'confirm', params: { CallStatus: 'in-progress' } },
        agent(2.5, 'completed', { CallDuration: '12' }),
      ];
    case 'customer_busy':
      return [
        ...answered,
        {
          at: 1.5,
          kind: 'outbound',
          callback: 'confirm',
          params: { CallStatus: 'in-progress', Digits: '1' },
        },
        customer(2, 'initiated'),
        customer(2.5, 'ringing'),
        customer(3, 'busy'),
        { at: 3, kind: 'outbound', callback: 'dial-ended', params: { DialCallStatus: 'busy' } },
        agent(3.5, 'completed', { CallDuration: '20' }),
        { at: 3.5, kind: 'recording', status: 'absent', channels: 2 },
      ];
    case 'connected':
      return [
        ...answered,
        {
          at: 1.5,
          kind: 'outbound',
          callback: 'confirm',
          params: { CallStatus: 'in-progress', Digits: '1' },
        },
        customer(2, 'initiated'),
        customer(2.5, 'ringing'),
        customer(3, 'in-progress'),
        customer(5, 'completed', { CallDuration: duration }),
        {
          at: 5,
          kind: 'outbound',
          callback: 'dial-ended',
          params: { DialCallStatus: 'completed', DialCallDuration: duration },
        },
        agent(5, 'completed', { CallDuration: String(Math.round(seconds) + 8) }),
        { at: 5.5, kind: 'recording', status: 'completed', channels: 2 },
      ];
    case 'late_repair':
      // The customer leg's end never comes while the call is on: reconciliation_required when the
      // agent leg ends, agent_only when the periodic check gives up on it (here after 2 s instead of
      // 10 minutes), then the late customer-status proves the customer answered, and the recording.
      return [
        ...answered,
        {
          at: 1.5,
          kind: 'outbound',
          callback: 'confirm',
          params: { CallStatus: 'in-progress', Digits: '1' },
        },
        customer(2, 'ringing'),
        agent(4, 'completed', { CallDuration: String(Math.round(seconds) + 8) }),
        { at: 6, kind: 'no_word' },
        customer(8, 'completed', { CallDuration: duration }),
        { at: 8.5, kind: 'recording', status: 'completed', channels: 2 },
      ];
  }
}

/** The steps of an inbound test call after the carrier's first request (the call exists from then). */
export function inboundSteps(scenario: InboundScenario, seconds: number): SimStep[] {
  const status = (at: number, CallStatus: string, extra: Record<string, string> = {}): SimStep => ({
    at,
    kind: 'status',
    leg: 'parent',
    params: { CallStatus, ...extra },
  });
  const duration = String(Math.round(seconds));
  switch (scenario) {
    case 'voicemail':
      return [
        status(0.5, 'in-progress'),
        { at: 3, kind: 'voicemail-ended' },
        status(3, 'completed', { CallDuration: String(Math.round(seconds) + 3) }),
        { at: 3.5, kind: 'recording', status: 'completed', channels: 1 },
      ];
    case 'recording_refused':
      return [
        status(0.5, 'in-progress'),
        // the caller presses a key during the consent announcement: no recording at all
        { at: 1.5, kind: 'consent', params: { Digits: '1' } },
        { at: 4, kind: 'dial-ended', params: { DialCallStatus: 'completed', DialCallDuration: duration } },
        status(4, 'completed', { CallDuration: String(Math.round(seconds) + 5) }),
      ];
    case 'conversation':
    case 'anonymous':
      return [
        status(0.5, 'in-progress'),
        { at: 4, kind: 'dial-ended', params: { DialCallStatus: 'completed', DialCallDuration: duration } },
        status(4, 'completed', { CallDuration: String(Math.round(seconds) + 2) }),
        { at: 4.5, kind: 'recording', status: 'completed', channels: 2 },
      ];
  }
}

/** A turn of a script: who says what. */
export interface ScriptTurn {
  speaker: 'agent' | 'customer';
  text: string;
}

/** A turn placed in time, seconds from the start of the recording. */
export interface TimedTurn extends ScriptTurn {
  start: number;
  end: number;
}

const LABEL = /^\s*(agent|customer)\s*:\s*(.*)$/i;

/**
 * The turns of a script: lines `Agent: …` / `Customer: …` (labels in any case); a line without a
 * label continues the turn before it; blank lines are ignored. Null when no turn has words (a
 * script the service cannot play).
 */
export function parseScript(script: string): ScriptTurn[] | null {
  const turns: ScriptTurn[] = [];
  for (const line of script.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const m = LABEL.exec(line);
    if (m) turns.push({ speaker: m[1]!.toLowerCase() as ScriptTurn['speaker'], text: m[2]!.trim() });
    else if (turns.length > 0) turns[turns.length - 1]!.text += ` ${line.trim()}`;
    else return null;
  }
  const said = turns.filter((t) => t.text !== '');
  return said.length > 0 ? said : null;
}

/** The script's text as the transcript of a call: one `Agent: …` / `Customer: …` line per turn. */
export const scriptText = (turns: readonly ScriptTurn[]): string =>
  turns.map((t) => `${t.speaker === 'agent' ? 'Agent' : 'Customer'}: ${t.text}`).join('\n');

/** Speaking pace of the simulated voices: seconds per word, the shortest turn, the pause between turns. */
const SECONDS_PER_WORD = 0.38;
const MIN_TURN_SECONDS = 1.2;
const PAUSE_SECONDS = 0.5;
/**
 * The longest recording the simulated carrier makes: a longer script is spoken faster to fit
 * (10,000 characters, the most a script may have, take about 11 minutes at the steady pace).
 * Five minutes keep the MP3 encoding of one test call to a second or two of CPU.
 */
export const MAX_SIMULATED_SECONDS = 300;

/**
 * When each turn is said: in order, each as long as its words at a steady pace, a pause between
 * turns; scaled to `totalSeconds` when given (the connected outbound call's 30 s). Whole
 * milliseconds, so the audio and the transcript agree to the sample.
 */
export function timeline(turns: readonly ScriptTurn[], totalSeconds?: number): TimedTurn[] {
  const lengths = turns.map((t) => Math.max(MIN_TURN_SECONDS, t.text.split(/\s+/).length * SECONDS_PER_WORD));
  const natural = lengths.reduce((a, b) => a + b, 0) + PAUSE_SECONDS * (turns.length + 1);
  const scale = Math.min(totalSeconds ? totalSeconds / natural : 1, MAX_SIMULATED_SECONDS / natural);
  const ms = (s: number) => Math.round(s * scale * 1000) / 1000;
  let at = PAUSE_SECONDS;
  return turns.map((t, i) => {
    const start = ms(at);
    at += lengths[i]!;
    const end = ms(at);
    at += PAUSE_SECONDS;
    return { ...t, start, end };
  });
}

/** Seconds of audio a timeline fills (a closing pause after the last turn). */
export function timelineSeconds(turns: readonly TimedTurn[]): number {
  const last = turns[turns.length - 1];
  return last ? Math.round((last.end + PAUSE_SECONDS) * 1000) / 1000 : PAUSE_SECONDS;
}

export const speakerOf = (t: ScriptTurn): Speaker => t.speaker;

/** The default script of an outbound test call (the agent calls a lead back). */
export const OUTBOUND_SCRIPT = [
  'Agent: Hi, this is Sam from the office, returning your call about the leaking water heater.',
  'Customer: Oh great, thanks for calling back. Yes, it started leaking yesterday evening.',
  'Agent: Sorry to hear that. We can send a technician on Tuesday morning. Does that work for you?',
  'Customer: Tuesday morning works. My name is Jordan Lee, and the address is 42 Harbor Street, Springfield.',
  'Agent: Perfect, Jordan. You are booked for Tuesday at nine. Anything else I can help with?',
  'Customer: No, that is all. Thank you!',
].join('\n');

/** The default script of an inbound test call: a lead (a name, a service, a date, an address). */
export const INBOUND_SCRIPT = [
  'Agent: Thank you for calling, how can I help you today?',
  'Customer: Hi, my name is Jordan Lee. I need someone to repair a leaking water heater.',
  'Agent: Of course. What is the address?',
  'Customer: 42 Harbor Street in Springfield.',
  'Agent: We can come on Tuesday morning. Does that work for you?',
  'Customer: Yes, Tuesday morning is perfect. Please send me a confirmation by email.',
  'Agent: Will do. Thank you, Jordan, see you on Tuesday.',
].join('\n');

/** The default script of an inbound voicemail: the caller alone. */
export const VOICEMAIL_SCRIPT =
  'Customer: Hi, this is Jordan Lee. I am calling about a leaking water heater at 42 Harbor Street in Springfield. Please call me back. Thank you.';

/** The script a scenario plays when none is given. */
export function defaultScript(scenario: SimulatedScenario): string {
  if (scenario === 'voicemail') return VOICEMAIL_SCRIPT;
  if ((INBOUND_SCENARIOS as readonly string[]).includes(scenario)) return INBOUND_SCRIPT;
  return OUTBOUND_SCRIPT;
}
