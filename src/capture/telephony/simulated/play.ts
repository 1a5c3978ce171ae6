import { Readable } from 'node:stream';
import type { Deps } from '../../../deps.ts';
import {
  type InboundScenario,
  inboundSteps,
  OUTBOUND_SCENARIOS,
  type OutboundScenario,
  outboundSteps,
  parseScript,
  type SimStep,
  type SimulatedScenario,
  timeline,
  timelineSeconds,
} from '../../../domain/simulated-call.ts';
import { AppError } from '../../../errors.ts';
import type { StageHandler } from '../../jobs/types.ts';
import { consentAnswered, dialEnded, voicemailEnded } from '../twilio/inbound.ts';
import { handleOutboundCallback, settleSilentCall } from '../twilio/outbound.ts';
import { recordingStatusCallback } from '../twilio/recording.ts';
import { callStatusCallback } from '../twilio/status.ts';
import { simulatedRecording } from './audio.ts';
import {
  childSid,
  parentSid,
  recordingSidOf,
  SIMULATED_URL_PREFIX,
  simulatedAccount,
  simulatedRecordingKey,
} from './store.ts';

/**
 * The `simulate` processing stage: plays a simulated call's carrier steps (domain/simulated-call.ts)
 * as they fall due on deps.clock — each through the service function the matching Twilio callback
 * calls (handleOutboundCallback, callStatusCallback, consentAnswered, dialEnded, voicemailEnded,
 * recordingStatusCallback; the periodic check's settleSilentCall for the agent_only scenario) — then
 * waits (the job's `waiting` state, due at the next step) or ends. Progress (simulated_calls.step)
 * is written after each step; a step replayed after a crash is a callback Twilio repeated, which
 * those functions apply at most once. Nothing here emits an event or changes a call by itself.
 */
interface SimRow {
  call_id: string;
  organization_id: string;
  scenario: SimulatedScenario;
  script: string;
  target_seconds: number | null;
  step: number;
  started_at: Date;
  direction: 'inbound' | 'outbound';
  erased_at: Date | null;
}

export const simulateStage: StageHandler = async ({ deps, job }) => {
  const { rows } = await deps.db.query<SimRow>(
    `SELECT s.call_id, s.organization_id, s.scenario, s.script, s.target_seconds, s.step, s.started_at,
            c.direction, c.erased_at
       FROM simulated_calls s JOIN calls c ON c.id = s.call_id
      WHERE s.call_id = $1`,
    [job.callId],
  );
  const sim = rows[0];
  if (!sim || sim.erased_at) return { kind: 'cancelled', reason: 'the call was erased' };
  const steps = stepsOf(sim);
  const started = new Date(sim.started_at).getTime();
  let i = sim.step;
  while (i < steps.length && started + steps[i]!.at * 1000 <= deps.clock.now().getTime()) {
    try {
      await playStep(deps, sim, steps[i]!);
    } catch (err) {
      // the call was erased or deleted meanwhile: nothing more to play
      if (err instanceof AppError && err.code === 'NOT_FOUND') {
        return { kind: 'cancelled', reason: 'the call was erased' };
      }
      throw err;
    }
    i++;
    await deps.db.query('UPDATE simulated_calls SET step = $2 WHERE call_id = $1', [sim.call_id, i]);
  }
  if (i >= steps.length) return { kind: 'succeeded' };
  return { kind: 'waiting', until: new Date(started + steps[i]!.at * 1000) };
};

const isOutbound = (s: SimulatedScenario): s is OutboundScenario =>
  (OUTBOUND_SCENARIOS as readonly string[]).includes(s);

export function stepsOf(sim: Pick<SimRow, 'scenario' | 'script' | 'target_seconds'>): SimStep[] {
  const seconds = timelineSeconds(timeline(parseScript(sim.script) ?? [], sim.target_seconds ?? undefined));
  return isOutbound(sim.scenario)
    ? outboundSteps(sim.scenario, seconds)
    : inboundSteps(sim.scenario as InboundScenario, seconds);
}

async function playStep(deps: Deps, sim: SimRow, step: SimStep): Promise<void> {
  const account = simulatedAccount(sim.organization_id);
  const id = sim.call_id;
  const base = { AccountSid: account.accountSid, CallSid: parentSid(id) };
  switch (step.kind) {
    case 'outbound': {
      const params: Record<string, string> = { ...base, ...step.params };
      if (step.callback === 'customer-status') {
        params.CallSid = childSid(id);
        params.ParentCallSid = parentSid(id);
      }
      if (step.callback === 'dial-ended') params.DialCallSid = childSid(id);
      await handleOutboundCallback(deps, account, id, step.callback, params);
      return;
    }
    case 'status':
      await callStatusCallback(deps, account, {
        ...base,
        CallSid: step.leg === 'parent' ? parentSid(id) : childSid(id),
        ...step.params,
      });
      return;
    case 'consent':
      await consentAnswered(deps, account, id, { ...base, ...step.params });
      return;
    case 'dial-ended':
      await dialEnded(deps, account, id, { ...base, DialCallSid: childSid(id), ...step.params });
      return;
    case 'voicemail-ended':
      await voicemailEnded(deps, account, id, base);
      return;
    case 'no_word':
      await settleSilentCall(deps, id, null);
      return;
    case 'recording': {
      const key = simulatedRecordingKey(sim.organization_id, id);
      const turns = timeline(parseScript(sim.script) ?? [], sim.target_seconds ?? undefined);
      if (step.status === 'completed') {
        const audio = await simulatedRecording(turns, step.channels, sim.direction);
        await deps.store.put(key, Readable.from([audio]));
      }
      await recordingStatusCallback(deps, account, id, {
        ...base,
        RecordingSid: recordingSidOf(id),
        RecordingUrl: `${SIMULATED_URL_PREFIX}${key}`,
        RecordingStatus: step.status,
        RecordingChannels: String(step.channels),
        RecordingDuration: String(Math.round(timelineSeconds(turns))),
      });
      return;
    }
  }
}
