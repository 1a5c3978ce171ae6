/**
 * Who said what, on real calls through the Twilio adapter (issue 15, item 9). The fake Twilio
 * records a two-leg call as Twilio does — the parent leg on the first channel, the <Dial>'s child
 * leg on the second — and each person says something different (a tone the fake speech-to-text
 * server on loopback hears as that side's words). An inbound call's parent is the caller (the
 * customer); a click-to-call's parent is the agent, whom the service calls first. The signed
 * callbacks, the download job, speech-to-text (each provider protocol) and the rule-based analysis
 * run for real; each side's words must come out under its own label — in the stored transcript,
 * in the signed call.transcribed / call.completed webhooks — and the analysis REST serves must be
 * read from the right side (the caller's name is the customer's, not the agent's greeting).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { downloadStage } from '../../src/capture/telephony/twilio/download.ts';
import { type FakeProviders, STEREO_TRANSCRIPT, startFakeProviders } from '../helpers/fake-providers.ts';
import { settleJobs } from '../helpers/jobs.ts';
import {
  eventsAtReceiver,
  outboundOrg,
  restCall as outboundRestCall,
  placeCall,
} from '../helpers/outbound.ts';
import { AGENT_TONE_HZ, CUSTOMER_TONE_HZ } from '../helpers/stereo-mp3.ts';
import {
  callIdOf,
  connectOrg,
  deliveredEvents,
  restCall,
  startTelephony,
  type TelephonyEnv,
} from '../helpers/telephony.ts';

const download = { download: downloadStage };
const SECONDS = 9;

/** Every job due now, then the durable download job's fallback (due minutes later), then again. */
async function settle(t: TelephonyEnv): Promise<void> {
  await settleJobs(t.h.deps, { handlers: download });
  t.h.clock.advance(3 * 60_000);
  await settleJobs(t.h.deps, { handlers: download });
}

async function storedTranscript(t: TelephonyEnv, id: string): Promise<unknown> {
  const { rows } = await t.h.db.query<{ transcript_original: string | null; direction: string }>(
    `SELECT a.transcript_original, c.direction
       FROM calls c LEFT JOIN call_analyses a ON a.call_id = c.id WHERE c.id = $1`,
    [id],
  );
  return rows[0];
}

/** The transcript each webhook carrying one holds, by event type. */
function webhookTranscripts(events: { event_type: string; data: unknown }[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of events) {
    const d = e.data as { transcript_original?: unknown };
    if ('transcript_original' in d) out[e.event_type] = d.transcript_original;
  }
  return out;
}

const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));

for (const provider of ['openai', 'deepgram'] as const) {
  describe(`${provider} speech-to-text`, () => {
    let t: TelephonyEnv;
    let fake: FakeProviders;
    before(async () => {
      fake = await startFakeProviders();
      t = await startTelephony({
        TRANSCRIPTION_PROVIDER: provider,
        TRANSCRIPTION_BASE_URL: provider === 'openai' ? fake.openaiBaseUrl : fake.deepgramBaseUrl,
        TRANSCRIPTION_API_KEY: 'sk-test-transcription-key-0123456789',
        ANALYSIS_PROVIDER: 'rules',
      });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test(`inbound: the caller's words are the Customer's and the answering agent's the Agent's (${provider})`, async () => {
      const org = await connectOrg(t, { ringTo: '+14155550999' });
      const call = await t.fake.inboundCall({ from: '+14155550123', to: org.number, account: org.account });
      const id = await callIdOf(t, call.callSid);
      const dial = await call.answerDial({
        voices: { caller: CUSTOMER_TONE_HZ, answerer: AGENT_TONE_HZ },
        duration: SECONDS,
      });
      assert.equal(dial.recordingReply?.status, 204);
      assert.equal((await call.hangup()).status, 204);
      await deliveredEvents(t, org);
      await settle(t);

      assert.deepEqual(await storedTranscript(t, id), {
        transcript_original: STEREO_TRANSCRIPT,
        direction: 'inbound',
      });
      const events = await deliveredEvents(t, org);
      assert.deepEqual(
        events
          .filter((e) => (e.data as { call_id: string }).call_id === id)
          .map((e) => e.event_type)
          .sort(),
        ['call.completed', 'call.followup_email.drafted', 'call.recording.ready', 'call.transcribed'],
      );
      assert.deepEqual(
        webhookTranscripts(events.filter((e) => (e.data as { call_id: string }).call_id === id)),
        { 'call.transcribed': STEREO_TRANSCRIPT, 'call.completed': STEREO_TRANSCRIPT },
      );
      const rest = await restCall(t, org, id);
      assert.equal(rest.status, 200);
      assert.equal(rest.body.data.direction, 'inbound');
      assert.deepEqual(
        pick(rest.body.data.transcript_processed, ['caller_name', 'service_needed']),
        { caller_name: 'Jane Miller', service_needed: 'someone to fix my leaking water heater' },
        "the caller's name and need, read from the customer's side",
      );
    });

    test(`outbound click-to-call: the agent's words are the Agent's and the customer's the Customer's (${provider})`, async () => {
      const org = await outboundOrg(t);
      const { res, callId: id, leg } = await placeCall(t, org);
      assert.equal(res.statusCode, 201, res.body);
      assert.ok(leg);
      await leg.agentStatus('initiated');
      await leg.answer();
      await leg.agentStatus('in-progress');
      await leg.pressDigits('1');
      await leg.customerStatus('in-progress');
      await leg.customerStatus('completed', { CallDuration: String(SECONDS) });
      await leg.dialEnded('completed', SECONDS);
      await leg.agentStatus('completed', { CallDuration: String(SECONDS + 5) });
      const rec = await leg.recording({
        voices: { agent: AGENT_TONE_HZ, customer: CUSTOMER_TONE_HZ },
        duration: SECONDS,
      });
      assert.equal(rec.reply.status, 204);
      await eventsAtReceiver(t, org, id);
      await settle(t);

      assert.deepEqual(await storedTranscript(t, id), {
        transcript_original: STEREO_TRANSCRIPT,
        direction: 'outbound',
      });
      const events = await eventsAtReceiver(t, org, id);
      assert.deepEqual(webhookTranscripts(events), {
        'call.transcribed': STEREO_TRANSCRIPT,
        'call.completed': STEREO_TRANSCRIPT,
      });
      const completed = events.find((e) => e.event_type === 'call.completed')!.data as {
        transcript_processed: Record<string, unknown>;
      };
      assert.deepEqual(
        pick(completed.transcript_processed, ['caller_name', 'counterparty_name', 'service_needed']),
        {
          caller_name: null,
          counterparty_name: 'Jane Miller',
          service_needed: 'someone to fix my leaking water heater',
        },
        "the customer's name and need, read from the customer's side",
      );
      const rest = await outboundRestCall(t, org, id);
      assert.equal(rest.statusCode, 200);
      assert.equal(rest.json().data.direction, 'outbound');
      assert.equal(
        rest.json().data.transcript_processed.service_needed,
        'someone to fix my leaking water heater',
        "the customer's need, read from the customer's side",
      );
    });
  });
}
