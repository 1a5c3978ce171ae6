import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runRetentionSweep } from '../../src/capture/retention.ts';
import { DAY } from '../../src/clock.ts';
import { admin } from '../helpers/http.ts';
import { mp3 } from '../helpers/mp3.ts';
import {
  callIdOf,
  connectOrg,
  deliveredEvents,
  restRecordingUrl,
  startTelephony,
  type TelephonyEnv,
  type TelephonyOrg,
} from '../helpers/telephony.ts';

/**
 * Recording deletion at the provider: the retention sweep and erasure send Twilio's DELETE of the
 * recording first; Twilio's 404 becomes deletion_kind provider_404; an unreachable Twilio holds
 * the retention deletion back, and an erasure goes ahead while the sweep retries the provider.
 */
let t: TelephonyEnv;
before(async () => {
  t = await startTelephony();
});
after(async () => {
  await t.close();
});

/**
 * An organization with redaction off: with it on, Twilio's copy is deleted as soon as ours is stored
 * (test/telephony/carrier-copy.test.ts); these tests are about the copies retention and erasure find.
 */
async function keepingCarrierCopy(): Promise<TelephonyOrg> {
  const org = await connectOrg(t);
  const off = await admin(t.h, 'PATCH', `/organizations/${org.orgId}`, { redaction_enabled: false });
  assert.equal(off.statusCode, 200);
  return org;
}

/** A voicemail with stored audio; answers the call id and the recording sid. */
async function recordedCall(org: TelephonyOrg) {
  const call = await t.fake.inboundCall({ from: '+14155550160', to: org.number, account: org.account });
  const id = await callIdOf(t, call.callSid);
  const vm = await call.recordVoicemail({ recording: mp3(2).bytes, duration: 2 });
  await call.hangup();
  await deliveredEvents(t, org);
  return { id, recordingSid: vm.recordingSid };
}

const deletedEvents = async (org: TelephonyOrg) =>
  (await deliveredEvents(t, org))
    .filter((e) => e.event_type === 'call.recording.deleted')
    .map((e) => e.data as Record<string, unknown>);

const providerDeletedAt = async (id: string) =>
  (
    await t.h.db.query<{ at: Date | null }>(
      'SELECT provider_recording_deleted_at AS at FROM calls WHERE id = $1',
      [id],
    )
  ).rows[0]!.at;

const deletes = (recordingSid: string) =>
  t.fake.restRequests.filter(
    (r) => r.method === 'DELETE' && r.path.endsWith(`/Recordings/${recordingSid}.json`),
  );

test('retention: the recording is deleted at Twilio, then here (hard_deleted); a Twilio 404 is provider_404', async () => {
  const org = await keepingCarrierCopy();
  await admin(t.h, 'PATCH', `/organizations/${org.orgId}`, { retention_days: 30 });
  const a = await recordedCall(org);
  const b = await recordedCall(org);
  t.fake.recordings.get(b.recordingSid)!.deleted = true; // already gone at Twilio
  t.h.clock.advance(31 * DAY);
  try {
    const r = await runRetentionSweep(t.h.deps);
    assert.equal(r.recordingsDeleted, 2);
    assert.equal(t.fake.recordings.get(a.recordingSid)!.deleted, true);
    assert.deepEqual(
      deletes(a.recordingSid).map((d) => d.authorized),
      [true],
    );
    const now = t.h.clock.now().toISOString();
    const events = await deletedEvents(org);
    assert.deepEqual(
      events.sort((x) => (x.call_id === a.id ? -1 : 1)),
      [
        {
          call_id: a.id,
          reason: 'retention_expired',
          recording_sid: a.recordingSid,
          deletion_kind: 'hard_deleted',
          deleted_at: now,
        },
        {
          call_id: b.id,
          reason: 'retention_expired',
          recording_sid: b.recordingSid,
          deletion_kind: 'provider_404',
          deleted_at: now,
        },
      ],
    );
    for (const c of [a, b]) {
      assert.equal((await restRecordingUrl(t, org, c.id)).body.error.code, 'RECORDING_DELETED');
      assert.deepEqual(await providerDeletedAt(c.id), t.h.clock.now());
    }
  } finally {
    t.h.clock.advance(-31 * DAY);
  }
});

test('retention while Twilio fails: nothing is deleted here; the next run deletes both', async () => {
  const org = await keepingCarrierCopy();
  await admin(t.h, 'PATCH', `/organizations/${org.orgId}`, { retention_days: 30 });
  const a = await recordedCall(org);
  t.h.clock.advance(31 * DAY);
  try {
    t.fake.failRecordingDeletes = 503;
    const r1 = await runRetentionSweep(t.h.deps);
    assert.equal(r1.recordingsDeleted, 0);
    assert.equal((await restRecordingUrl(t, org, a.id)).status, 200);
    assert.deepEqual(await deletedEvents(org), []);
    t.fake.failRecordingDeletes = null;
    const r2 = await runRetentionSweep(t.h.deps);
    assert.equal(r2.recordingsDeleted, 1);
    assert.deepEqual(
      (await deletedEvents(org)).map((d) => d.deletion_kind),
      ['hard_deleted'],
    );
    assert.equal(t.fake.recordings.get(a.recordingSid)!.deleted, true);
  } finally {
    t.fake.failRecordingDeletes = null;
    t.h.clock.advance(-31 * DAY);
  }
});

test('erasure deletes the recording at Twilio (hard_deleted; provider_404 when already gone)', async () => {
  const org = await keepingCarrierCopy();
  const a = await recordedCall(org);
  const b = await recordedCall(org);
  t.fake.recordings.get(b.recordingSid)!.deleted = true;
  for (const c of [a, b]) assert.equal((await admin(t.h, 'POST', `/calls/${c.id}/erase`)).statusCode, 204);
  assert.equal(t.fake.recordings.get(a.recordingSid)!.deleted, true);
  const events = await deletedEvents(org);
  assert.deepEqual(
    events.map((d) => [d.call_id, d.reason, d.recording_sid, d.deletion_kind]),
    [
      [a.id, 'call_erased', a.recordingSid, 'hard_deleted'],
      [b.id, 'call_erased', b.recordingSid, 'provider_404'],
    ],
  );
  // The erased call keeps only what the provider deletion needs (the recording's sid and account).
  const { rows } = await t.h.db.query(
    `SELECT caller_phone, customer_phone_e164, provider_recording_url, agent_phone_e164, recording_state
       FROM calls WHERE id = $1`,
    [a.id],
  );
  assert.deepEqual(rows[0], {
    caller_phone: '',
    customer_phone_e164: null,
    provider_recording_url: null,
    agent_phone_e164: null,
    recording_state: 'deleted',
  });
});

test('erasure while Twilio fails goes ahead; the retention sweep deletes the recording at Twilio later', async () => {
  const org = await keepingCarrierCopy();
  const a = await recordedCall(org);
  t.fake.failRecordingDeletes = 500;
  try {
    assert.equal((await admin(t.h, 'POST', `/calls/${a.id}/erase`)).statusCode, 204);
  } finally {
    t.fake.failRecordingDeletes = null;
  }
  assert.equal(t.fake.recordings.get(a.recordingSid)!.deleted, false);
  assert.equal(await providerDeletedAt(a.id), null);
  assert.deepEqual(
    (await deletedEvents(org)).map((d) => d.deletion_kind),
    ['hard_deleted'],
  );
  const r = await runRetentionSweep(t.h.deps);
  assert.equal(r.providerRecordingsDeleted, 1);
  assert.equal(t.fake.recordings.get(a.recordingSid)!.deleted, true);
  assert.deepEqual(await providerDeletedAt(a.id), t.h.clock.now());
  // nothing left to retry, and no second event
  assert.equal((await runRetentionSweep(t.h.deps)).providerRecordingsDeleted, 0);
  assert.equal((await deletedEvents(org)).length, 1);
});
