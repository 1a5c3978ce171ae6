import type { Deps } from '../../../deps.ts';
import { INITIAL_OUTBOUND_LIFECYCLE } from '../../../domain/outbound-lifecycle.ts';
import { normalizePhone } from '../../../domain/phone.ts';
import {
  CONNECTED_SECONDS,
  defaultScript,
  type InboundScenario,
  outboundScenarioOf,
  parseScript,
  scriptText,
  TEST_AGENT_PHONE,
  TEST_CALLER_PHONE,
  TEST_SERVICE_NUMBER,
} from '../../../domain/simulated-call.ts';
import type { TenantScope } from '../../../domain/tenant.ts';
import { validationError } from '../../../errors.ts';
import { createInboundCall } from '../twilio/inbound.ts';
import {
  checkOutboundCall,
  failToInitiate,
  insertOutboundCall,
  type PlacedOutboundCall,
  type PlaceOutboundCall,
} from '../twilio/outbound.ts';
import { parentSid, SIMULATED_ACCOUNT_SID, simulatedAccount, startSimulation } from './store.ts';

/**
 * The simulated carrier of test mode (spec/api-v1-additions.md "Test mode"; docs/test-mode.md
 * "Simulated carrier and magic numbers"): the carrier placeCall uses for a test scope
 * (capture/telephony/place-call.ts CARRIERS.test), and the inbound test calls of
 * POST /api/v1/test-helpers/inbound-calls. It stores the call as Twilio's adapter does (the same
 * checks and insert), then plays the carrier's side as the durable `simulate` job (play.ts): the
 * same callbacks, state machines, jobs and outbox as a live call. Nothing reaches Twilio or a
 * provider.
 */

/** The outbound carrier of a test scope: the magic number decides the outcome. */
export async function placeSimulatedCall(
  deps: Deps,
  scope: TenantScope,
  input: PlaceOutboundCall,
): Promise<PlacedOutboundCall> {
  const orgId = scope.organizationId;
  const checked = await checkOutboundCall(deps, orgId, input, {
    testMode: true,
    testServiceNumber: TEST_SERVICE_NUMBER,
  });
  const scenario = outboundScenarioOf(checked.customer.e164);
  if (scenario === 'carrier_rejected') {
    // The carrier refuses the agent leg when asked: the call exists, failed_to_initiate, nothing rang.
    const id = await insertOutboundCall(deps.db, deps, orgId, input, checked, {
      provider: 'simulated',
      accountSid: SIMULATED_ACCOUNT_SID,
    });
    deps.log.info(
      { call_id: id, organization_id: orgId },
      'simulated carrier refused the call (magic number 0003)',
    );
    return failToInitiate(deps, id, 'provider_rejected');
  }
  const connected = scenario === 'connected' || scenario === 'late_repair';
  const id = await deps.db.transaction(async (tx) => {
    const callId = await insertOutboundCall(tx, deps, orgId, input, checked, {
      provider: 'simulated',
      accountSid: SIMULATED_ACCOUNT_SID,
      callSidOf: parentSid,
    });
    await startSimulation(tx, deps, {
      callId,
      organizationId: orgId,
      scenario,
      script: defaultScript(scenario),
      targetSeconds: connected ? CONNECTED_SECONDS : null,
    });
    return callId;
  });
  return { call_id: id, outbound_lifecycle: INITIAL_OUTBOUND_LIFECYCLE, failure_reason: null };
}

export interface InboundTestCall {
  scenario?: InboundScenario;
  callerPhone?: string;
  callerName?: string;
  script?: string;
}

/** The most characters of a test call's script. */
export const MAX_SCRIPT_CHARS = 10_000;

/**
 * An inbound test call: the simulated carrier rings the organization's test service number and
 * plays the scenario. conversation (default): a two-sided call, the agent rung answers, recorded
 * dual-channel; voicemail: nobody to ring, the caller leaves a message (one-sided, no draft);
 * recording_refused: the consent announcement is played and the caller presses a key (no
 * recording: recording-url 409); anonymous: a withheld caller id. Answers the call's id.
 */
export async function startInboundTestCall(
  deps: Deps,
  scope: TenantScope,
  input: InboundTestCall,
): Promise<string> {
  const scenario = input.scenario ?? 'conversation';
  const org = await deps.db.query<{ country: string | null }>(
    'SELECT country FROM organizations WHERE id = $1',
    [scope.organizationId],
  );
  const country = org.rows[0]?.country ?? null;
  if (scenario === 'anonymous' && input.callerPhone !== undefined) {
    throw validationError(
      'caller_phone: an anonymous call withholds its number; leave caller_phone out, or pick another scenario.',
      'caller_phone',
    );
  }
  if (input.callerPhone !== undefined && !normalizePhone(input.callerPhone, country)) {
    throw validationError(
      `caller_phone "${input.callerPhone}" is not a usable phone number; send it in E.164 (+14155552671).`,
      'caller_phone',
    );
  }
  let script = defaultScript(scenario);
  if (input.script !== undefined) {
    const turns = input.script.length <= MAX_SCRIPT_CHARS ? parseScript(input.script) : null;
    if (!turns) {
      throw validationError(
        `script must be 1 to ${MAX_SCRIPT_CHARS} characters of lines "Agent: …" / "Customer: …", each turn with words.`,
        'script',
      );
    }
    script = scriptText(turns);
  }
  const account = simulatedAccount(scope.organizationId);
  const callSid = `SIMIN${crypto.randomUUID().replace(/-/g, '')}`;
  const call = await createInboundCall(
    deps,
    account,
    {
      id: null,
      number_e164: TEST_SERVICE_NUMBER,
      // voicemail: nobody is rung, the caller is sent to the recorder at once
      ring_to_e164: scenario === 'voicemail' ? null : TEST_AGENT_PHONE,
      recording_mode: 'normal',
    },
    {
      AccountSid: account.accountSid,
      CallSid: callSid,
      From: scenario === 'anonymous' ? 'anonymous' : (input.callerPhone ?? TEST_CALLER_PHONE),
      To: TEST_SERVICE_NUMBER,
      CallStatus: 'ringing',
      ...(input.callerName ? { CallerName: input.callerName } : {}),
    },
    {
      announceConsent: scenario === 'recording_refused',
      inTransaction: async (tx, c) => {
        // the carrier's sids are the call's own (play.ts names the legs from the call id)
        await tx.query('UPDATE calls SET provider_call_sid = $2 WHERE id = $1', [c.id, parentSid(c.id)]);
        await startSimulation(tx, deps, {
          callId: c.id,
          organizationId: scope.organizationId,
          scenario,
          script,
          targetSeconds: null,
        });
      },
    },
  );
  return call.id;
}
