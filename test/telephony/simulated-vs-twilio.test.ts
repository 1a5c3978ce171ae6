/**
 * One pipeline (issue 17): for each outbound outcome, the events of a simulated call equal — types
 * and data, ids, times, URLs and the organizations' own numbers set aside — those of a Twilio call
 * to which the fake Twilio sends the same callbacks (the simulated carrier's steps, translated into
 * the fake's requests over a real socket) with the same recording, transcribed by a provider that
 * answers the same script.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { captureStageHandlers } from '../../src/capture/jobs/stages/index.ts';
import { scriptTranscription } from '../../src/capture/providers/script.ts';
import { telephonyStageHandlers } from '../../src/capture/telephony/download-stage.ts';
import { placeCall as placeAnyCall } from '../../src/capture/telephony/place-call.ts';
import { simulatedRecording } from '../../src/capture/telephony/simulated/audio.ts';
import { reconcileOutboundCalls } from '../../src/capture/telephony/twilio/outbound.ts';
import {
  CONNECTED_SECONDS,
  OUTBOUND_SCRIPT,
  type OutboundScenario,
  outboundSteps,
  parseScript,
  timeline,
  timelineSeconds,
} from '../../src/domain/simulated-call.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { T0 } from '../helpers/deps.ts';
import type { FakeOutboundCall } from '../helpers/fake-twilio.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { eventsAtReceiver, type OutboundOrg, outboundOrg, placeCall } from '../helpers/outbound.ts';
import { playOut, type SimOrg, simEvents, simOrg } from '../helpers/simulated.ts';
import { startTelephony, type TelephonyEnv } from '../helpers/telephony.ts';
import { drain } from '../helpers/webhooks.ts';

let t: TelephonyEnv;
let sim: SimOrg;
let live: OutboundOrg;
before(async () => {
  t = await startTelephony();
  sim = await simOrg(t);
  live = await outboundOrg(t);
});
after(async () => {
  await t?.close();
});

const turns = timeline(parseScript(OUTBOUND_SCRIPT)!, CONNECTED_SECONDS);
const seconds = timelineSeconds(turns);

/** The Twilio call: the simulated carrier's steps as the fake Twilio's callbacks. */
async function twilioCall(scenario: OutboundScenario, customer: string) {
  t.h.clock.set(T0);
  const { callId, leg } = await placeCall(t, live, { customer_phone: customer });
  assert.ok(leg);
  const l = leg as FakeOutboundCall;
  let shift = 0; // the live grace period, which the simulated carrier plays in seconds
  for (const step of outboundSteps(scenario, seconds)) {
    t.h.clock.set(new Date(Date.parse(T0) + step.at * 1000 + shift));
    if (step.kind === 'no_word') {
      // the periodic check, after its grace period
      shift = 10 * 60_000 + 1;
      t.h.clock.advance(shift);
      await reconcileOutboundCalls(t.h.deps);
      continue;
    }
    if (step.kind === 'recording') {
      if (step.status === 'absent') await l.recording({ status: 'absent' });
      else
        await l.recording({
          audio: await simulatedRecording(turns, 2, 'outbound'),
          duration: Math.round(seconds),
        });
      continue;
    }
    if (step.kind !== 'outbound') throw new Error(`not an outbound step: ${step.kind}`);
    const { CallStatus, Digits, DialCallStatus, DialCallDuration, AnsweredBy, ...extra } = step.params;
    if (step.callback === 'answer') await l.answer({ answeredBy: AnsweredBy });
    else if (step.callback === 'confirm') await (Digits ? l.pressDigits(Digits) : l.noKey());
    else if (step.callback === 'agent-status') await l.agentStatus(CallStatus!, extra);
    else if (step.callback === 'customer-status') await l.customerStatus(CallStatus!, extra);
    else await l.dialEnded(DialCallStatus!, Number(DialCallDuration ?? 0));
  }
  await settleJobs(t.h.deps, { handlers: { ...captureStageHandlers(), ...telephonyStageHandlers() } });
  await drain(t.h.deps);
  return { callId, events: await eventsAtReceiver(t, live, callId) };
}

async function simulatedCall(customer: string) {
  t.h.clock.set(T0);
  const placed = await placeAnyCall(t.h.deps, tenantScope(sim.orgId, 'test'), {
    agentUserId: sim.ownerId,
    agentPhone: '+12025550101',
    customerPhone: customer,
    fromNumber: '+12025550100',
  });
  await playOut(t.h, placed.call_id);
  return { callId: placed.call_id, events: await simEvents(t, sim, placed.call_id) };
}

/** Events as comparable values: ids, agents, times, links and the two organizations' numbers set aside. */
function comparable(
  events: { event_type: string; data: unknown }[],
  o: { callId: string; agent: string; numbers: string[] },
) {
  return events
    .map((e) => {
      let s = JSON.stringify({ type: e.event_type, data: e.data });
      s = s.replaceAll(o.callId, '<call>').replaceAll(o.agent, '<agent>');
      for (const n of o.numbers) s = s.replaceAll(n, '<service number>');
      s = s
        .replaceAll(/\(\d{3}\) \d{3}-\d{4}/g, '<national>')
        .replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"<time>"')
        .replace(/https:\/\/[^"]+/g, '<url>');
      return s;
    })
    .sort();
}

for (const [scenario, lastFour] of [
  ['connected', '0000'],
  ['customer_busy', '0001'],
  ['agent_no_confirmation', '0002'],
  ['late_repair', '0004'],
] as const) {
  test(`${lastFour} (${scenario}): the simulated call's events are the Twilio call's`, async () => {
    const customer = `+1415555${lastFour}`;
    const capture = t.h.deps.capture;
    // the Twilio call's speech-to-text answers what was said: the same script
    t.h.deps.capture = { ...capture, transcription: scriptTranscription(OUTBOUND_SCRIPT, CONNECTED_SECONDS) };
    let twilio: Awaited<ReturnType<typeof twilioCall>>;
    try {
      twilio = await twilioCall(scenario, customer);
    } finally {
      t.h.deps.capture = capture;
    }
    const simulated = await simulatedCall(customer);
    const a = comparable(simulated.events, {
      callId: simulated.callId,
      agent: sim.ownerId,
      numbers: ['+12025550100'],
    });
    const b = comparable(twilio.events, {
      callId: twilio.callId,
      agent: live.ownerId,
      numbers: [live.number],
    });
    assert.ok(a.length >= 2, a.join('\n'));
    assert.deepEqual(a, b);
  });
}

test("0003 (carrier_rejected): the simulated refusal's events are those of Twilio refusing the REST call", async () => {
  const customer = '+14155550003';
  t.h.clock.set(T0);
  t.fake.failNextCreateCall(400, 21211, 'The number is not a valid phone number.');
  const { callId } = await placeCall(t, live, { customer_phone: customer });
  await drain(t.h.deps);
  const twilio = await eventsAtReceiver(t, live, callId);
  const simulated = await simulatedCall(customer);
  const a = comparable(simulated.events, { callId: simulated.callId, agent: sim.ownerId, numbers: [] });
  const b = comparable(twilio, { callId, agent: live.ownerId, numbers: [] });
  assert.equal(a.length, 2);
  assert.deepEqual(a, b);
});
