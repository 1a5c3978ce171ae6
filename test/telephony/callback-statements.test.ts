/**
 * The statements of the Twilio callbacks of an inbound call (issue 16: each statement costs the main
 * thread and PostgreSQL): the call is locked, checked and the callback's dedupe key claimed in one
 * statement (lockCallClaiming), with the callback's own write in it where it has one (dial-ended's
 * voicemail, the consent answer); a repeat is that one statement and writes nothing. The answers,
 * the dedupe rows and their outcomes are those of the callbacks' own tests (inbound, callbacks).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { findAccountBySid, type TelephonyAccount } from '../../src/capture/telephony/accounts.ts';
import { consentAnswered, dialEnded, voicemailEnded } from '../../src/capture/telephony/twilio/inbound.ts';
import { recordingStatusCallback } from '../../src/capture/telephony/twilio/recording.ts';
import { callStatusCallback } from '../../src/capture/telephony/twilio/status.ts';
import type { Deps } from '../../src/deps.ts';
import { mp3 } from '../helpers/mp3.ts';
import { statementLog } from '../helpers/statement-log.ts';
import {
  callbacksOf,
  callIdOf,
  callState,
  connectOrg,
  startTelephony,
  type TelephonyEnv,
} from '../helpers/telephony.ts';

let t: TelephonyEnv;
before(async () => {
  t = await startTelephony();
});
after(async () => {
  await t.close();
});

const XML = '<?xml version="1.0" encoding="UTF-8"?>';

/** Deps whose Db records every statement (its prepared name, else its first words), BEGIN for each transaction. */
function recording(): { deps: Deps; take: () => string[] } {
  const { db, take } = statementLog(t.h.db);
  return { deps: { ...t.h.deps, db }, take };
}

async function inbound(o: Parameters<typeof connectOrg>[1], from: string) {
  const org = await connectOrg(t, o);
  const call = await t.fake.inboundCall({ from, to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const account: TelephonyAccount = (await findAccountBySid(t.h.deps, org.account.accountSid))!;
  return { org, call, id, account, sid: call.callSid };
}

test('consent, recording, dial-ended and status callbacks: one statement each to lock, check and claim', async () => {
  const { org, id, account, sid } = await inbound(
    { ringTo: '+14155550961', consent: { enabled: true, text: 'This call is recorded.' } },
    '+14155550261',
  );
  const { deps, take } = recording();

  // consent accepted: the call locked, the key claimed and the answer stored in one statement
  const consent = await consentAnswered(deps, account, id, { CallSid: sid, CallStatus: 'in-progress' });
  assert.match(
    consent,
    /<Dial action="[^"]+\/dial-ended" method="POST" timeout="25" record="record-from-answer-dual"/,
  );
  assert.deepEqual(take(), ['BEGIN', 'twilio_lock_claim_id_v1_consent']);
  assert.equal((await callState(t, id)).recording_consent, 'accepted');
  // a repeat: the same answer, nothing written
  assert.equal(await consentAnswered(deps, account, id, { CallSid: sid, Digits: '9' }), consent);
  assert.deepEqual(take(), ['BEGIN', 'twilio_lock_claim_id_v1_consent']);
  assert.equal((await callState(t, id)).recording_consent, 'accepted');

  // the recording: locked + claimed, then the call's update rides in the download's enqueue
  const rec = t.fake.addRecording({ accountSid: org.account.accountSid, callSid: sid, audio: mp3(2).bytes });
  const params = {
    CallSid: sid,
    RecordingSid: rec.sid,
    RecordingUrl: rec.url,
    RecordingStatus: 'completed',
    RecordingChannels: '2',
  };
  assert.deepEqual(await recordingStatusCallback(deps, account, id, params), { download: true });
  assert.deepEqual(take(), [
    'BEGIN',
    'twilio_lock_claim_id_v1',
    'capture_enqueue_stage_v1_recording_callback_v1',
  ]);
  assert.equal((await callState(t, id)).recording_sid, rec.sid);
  // a repeat: no download, nothing written
  assert.deepEqual(await recordingStatusCallback(deps, account, id, params), { download: false });
  assert.deepEqual(take(), ['BEGIN', 'twilio_lock_claim_id_v1']);

  // the <Dial action>: answered, hang up
  const hangup = `${XML}<Response><Hangup/></Response>`;
  assert.equal(await dialEnded(deps, account, id, { CallSid: sid, DialCallStatus: 'completed' }), hangup);
  assert.deepEqual(take(), ['twilio_lock_claim_id_v1_voicemail']);
  assert.equal(await dialEnded(deps, account, id, { CallSid: sid, DialCallStatus: 'completed' }), hangup);
  assert.deepEqual(take(), ['twilio_lock_claim_id_v1_voicemail']);

  // the status callback: locked by CallSid + claimed, then the status stored
  await callStatusCallback(deps, account, { CallSid: sid, CallStatus: 'completed' });
  assert.deepEqual(take(), ['BEGIN', 'twilio_lock_claim_sid_v1', 'UPDATE calls SET provider_call_status = ']);
  await callStatusCallback(deps, account, { CallSid: sid, CallStatus: 'completed' });
  assert.deepEqual(take(), ['BEGIN', 'twilio_lock_claim_sid_v1']);
  // out of order: the claim says it was ignored (and why), in the same transaction
  await callStatusCallback(deps, account, { CallSid: sid, CallStatus: 'ringing' });
  assert.deepEqual(take(), ['BEGIN', 'twilio_lock_claim_sid_v1', 'twilio_claim_ignored_v1']);
  assert.equal((await callState(t, id)).provider_call_status, 'completed');

  assert.deepEqual(await callbacksOf(t, id), [
    { dedupe_key: `consent:${sid}`, kind: 'consent', outcome: 'applied', detail: 'accepted' },
    { dedupe_key: `dial-ended:${sid}`, kind: 'dial-ended', outcome: 'applied', detail: 'completed' },
    { dedupe_key: `recording:${rec.sid}:completed`, kind: 'recording', outcome: 'applied', detail: null },
    { dedupe_key: `status:${sid}:completed`, kind: 'status', outcome: 'applied', detail: null },
    { dedupe_key: `status:${sid}:ringing`, kind: 'status', outcome: 'ignored', detail: 'after completed' },
    { dedupe_key: `voice:${sid}`, kind: 'voice', outcome: 'applied', detail: null },
  ]);
});

test('dial-ended unanswered: the voicemail switch rides in the lock statement, once; a foreign CallSid is a 404 and writes nothing', async () => {
  const { id, account, sid } = await inbound({ ringTo: '+14155550962' }, '+14155550262');
  const { deps, take } = recording();
  await assert.rejects(
    dialEnded(deps, account, id, { CallSid: 'CA-not-this-one', DialCallStatus: 'no-answer' }),
    { code: 'NOT_FOUND', message: "The CallSid is not this call's." },
  );
  assert.deepEqual(take(), ['twilio_lock_claim_id_v1_voicemail']);
  assert.equal((await callbacksOf(t, id)).length, 1); // the voice callback's alone

  const voicemail = await dialEnded(deps, account, id, { CallSid: sid, DialCallStatus: 'no-answer' });
  assert.match(voicemail, /<Record action="[^"]+\/voicemail-ended"/);
  assert.deepEqual(take(), ['twilio_lock_claim_id_v1_voicemail']);
  const s = await callState(t, id);
  assert.deepEqual([s.voicemail, s.recording_channels], [true, 1]);
  // the <Record action>: the call locked and checked, one statement, no transaction
  assert.equal(
    await voicemailEnded(deps, account, id, { CallSid: sid }),
    `${XML}<Response><Hangup/></Response>`,
  );
  assert.deepEqual(take(), ['twilio_lock_call_id_v1']);
  // a repeat (even with another status) answers from the stored call and writes nothing
  assert.equal(await dialEnded(deps, account, id, { CallSid: sid, DialCallStatus: 'busy' }), voicemail);
  assert.deepEqual(take(), ['twilio_lock_claim_id_v1_voicemail']);
  // (one received_at: ordered by key)
  assert.deepEqual(
    (await callbacksOf(t, id)).filter((c) => c.kind === 'dial-ended'),
    [{ dedupe_key: `dial-ended:${sid}`, kind: 'dial-ended', outcome: 'applied', detail: 'no-answer' }],
  );

  // a recording callback without a RecordingSid: keyed by the call's sid, claimed then marked ignored
  assert.deepEqual(
    await recordingStatusCallback(deps, account, id, { CallSid: sid, RecordingStatus: 'completed' }),
    { download: false },
  );
  assert.deepEqual(take(), ['BEGIN', 'twilio_lock_claim_id_v1', 'twilio_claim_ignored_v1']);
  assert.deepEqual(
    (await callbacksOf(t, id)).filter((c) => c.kind === 'recording'),
    [
      {
        dedupe_key: `recording:${sid}:completed`,
        kind: 'recording',
        outcome: 'ignored',
        detail: 'RecordingSid missing',
      },
    ],
  );
});

test('a call of another account: 404, nothing claimed', async () => {
  const { id, sid } = await inbound({ ringTo: '+14155550963' }, '+14155550263');
  const other = await inbound({ ringTo: '+14155550964' }, '+14155550264');
  const { deps, take } = recording();
  await assert.rejects(dialEnded(deps, other.account, id, { CallSid: sid, DialCallStatus: 'completed' }), {
    code: 'NOT_FOUND',
    message: 'No call of this account at this URL.',
  });
  assert.deepEqual(take(), ['twilio_lock_claim_id_v1_voicemail']);
  // the status callback of another account's CallSid: answered, nothing claimed
  await callStatusCallback(deps, other.account, { CallSid: sid, CallStatus: 'completed' });
  assert.deepEqual(take(), ['BEGIN', 'twilio_lock_claim_sid_v1']);
  assert.deepEqual(
    (await callbacksOf(t, id)).map((c) => c.kind),
    ['voice'],
  );
});
