import { CliError } from './admin-client.ts';
import type { CommandContext } from './command.ts';
import { apiBase } from './export-command.ts';

/**
 * `callcap trigger <event_type>` (spec/api-v1-additions.md "CLI"; docs/test-mode.md): with a test
 * key, starts a real test call that emits the event, as `stripe trigger` does — an outbound call to
 * a magic number (POST /calls) or an inbound test call (POST /test-helpers/inbound-calls). The
 * simulated carrier plays it through the real pipeline, so the event reaches the key's test
 * subscriptions (and `callcap listen`) a few seconds later, with the rest of that call's events.
 */
interface Trigger {
  path: '/calls' | '/test-helpers/inbound-calls';
  body: Record<string, string>;
  /** what the call does, for the summary */
  plays: string;
}

const INBOUND: Trigger = {
  path: '/test-helpers/inbound-calls',
  body: { scenario: 'conversation' },
  plays: 'an inbound test call: a two-sided lead conversation, recorded, transcribed, analysed',
};
const outbound = (lastFour: string, plays: string): Trigger => ({
  path: '/calls',
  body: { customer_phone: `+1202555${lastFour}` },
  plays,
});

export const TRIGGERS: Readonly<Record<string, Trigger>> = {
  'call.recording.ready': INBOUND,
  'call.transcribed': INBOUND,
  'call.completed': INBOUND,
  'call.followup_email.drafted': INBOUND,
  'call.tracker.matched': {
    ...INBOUND,
    plays: `${INBOUND.plays}; call.tracker.matched follows when one of your trackers matches its words (e.g. "water heater")`,
  },
  'call.outbound.attempted': outbound('0000', 'an outbound test call to a magic number: connected, 30 s'),
  'call.failed': outbound('0001', 'an outbound test call to a magic number: the customer is busy'),
  'call.outbound.lifecycle_repaired': outbound(
    '0004',
    'an outbound test call to a magic number: agent_only, then repaired by a late callback',
  ),
};

/**
 * Whether `callcap trigger` starts a test call: CALLCAP_API_KEY holds a test key (cc_test_…) and the
 * event type is one a test call emits. Otherwise the command does what it did before (listen.ts:
 * webhook.test, or the latest event of a type replayed to the running `callcap listen` sessions).
 */
export function wantsTestCall(c: CommandContext): boolean {
  return (
    (c.io.env.CALLCAP_API_KEY ?? '').startsWith('cc_test_') &&
    c.args[0] !== undefined &&
    c.args[0] in TRIGGERS
  );
}

/** The test-call half of `callcap trigger`; answers its JSON summary. */
export async function triggerTestCall(c: CommandContext): Promise<unknown> {
  const type = c.args[0] as string;
  const trigger = TRIGGERS[type]!;
  const apiKey = c.io.env.CALLCAP_API_KEY as string;
  const url = `${apiBase(c.io.env)}${trigger.path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(trigger.body),
    });
  } catch (err) {
    throw new CliError(`cannot reach ${url}: ${(err as Error).message}`, 1);
  }
  const answer = (await res.json().catch(() => null)) as {
    data?: { call_id?: string };
    error?: { code?: string; message?: string };
  } | null;
  if (res.status !== 201 || !answer?.data?.call_id) {
    const e = answer?.error;
    throw new CliError(
      `POST ${trigger.path} answered ${res.status}${e ? ` ${e.code}: ${e.message}` : ''}`,
      1,
    );
  }
  return {
    event_type: type,
    request: `POST ${trigger.path}`,
    body: trigger.body,
    call_id: answer.data.call_id,
    plays: trigger.plays,
  };
}

/** The lines `callcap trigger --help` adds for test calls. */
export const TRIGGER_TEST_CALL_HELP = [
  'With a test key in CALLCAP_API_KEY (cc_test_…, scope write.calls) it starts a real test call instead, for',
  `${Object.keys(TRIGGERS).join(', ')}:`,
  'an outbound call to a magic number (POST /calls) or an inbound test call (POST /test-helpers/inbound-calls),',
  'played by the simulated carrier in a few seconds; its events reach your test subscriptions (docs/test-mode.md).',
];
