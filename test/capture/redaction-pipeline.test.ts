/**
 * Redaction before the first write (issue 19): a transcript is redacted when it enters the
 * database (queueTranscript: the transcribe stage, POST …/transcript, an imported call), the
 * analysis runs on the redacted text, and the analysis, the draft and the events are redacted again
 * (an analysis provider that invents a card number is caught). Per organization: on by default,
 * off by the operator API's redaction_enabled (and the web app's settings, test/web/settings-http).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { operatorMessage } from '../../src/capture/jobs/error-message.ts';
import { submitTranscript } from '../../src/capture/pipeline.ts';
import type { CaptureProviders } from '../../src/deps.ts';
import { eventsOf } from '../helpers/events.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';

let h: Harness;
let configured: CaptureProviders;

before(async () => {
  h = await createHarness();
  configured = h.deps.capture;
});
afterEach(() => {
  h.deps.capture = configured;
});
after(async () => {
  await h?.close();
});

const CARD = '4111 1111 1111 1111';
const TRANSCRIPT = [
  'Agent: Thanks for calling Acme Plumbing, how can I help?',
  `Customer: Hi, this is Jane Miller, my water heater is leaking. I can pay the deposit now, my card number is ${CARD}, it expires 04/29 and the security code is 737.`,
  'Agent: Thanks. And your date of birth for the account?',
  'Customer: March 3rd, 1985. Call me back at 415 555 0123.',
].join('\n');
const REDACTED = [
  'Agent: Thanks for calling Acme Plumbing, how can I help?',
  'Customer: Hi, this is Jane Miller, my water heater is leaking. I can pay the deposit now, my card number is [card number], it expires [expiry date] and the security code is [security code].',
  'Agent: Thanks. And your date of birth for the account?',
  'Customer: [date of birth]. Call me back at 415 555 0123.',
].join('\n');
const SECRETS = ['4111', '04/29', '737', 'March 3rd', '1985'];

/**
 * Every stored value of the call as one string, its random ids (UUIDs) masked: a secret such as
 * "737" is otherwise found inside a fresh call or organization id now and then.
 */
async function everythingStoredFor(id: string): Promise<string> {
  const a = await h.db.query('SELECT * FROM call_analyses WHERE call_id = $1', [id]);
  const c = await h.db.query('SELECT * FROM calls WHERE id = $1', [id]);
  const e = await eventsOf(h.db, id);
  return JSON.stringify([a.rows, c.rows, e]).replace(UUID, '<uuid>');
}
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

test('on by default: the transcript is stored redacted, the analysis runs on it, events carry no PII; the same post again is no conflict', async () => {
  const { orgId } = await insertOrg(h.db, { country: 'US' });
  const org = await admin(h, 'GET', `/organizations/${orgId}`);
  assert.equal(org.json().redaction_enabled, true);
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  const seen: string[] = [];
  h.deps.capture = {
    transcription: null,
    analysis: {
      name: 'spy',
      analyze: async (input) => {
        seen.push(input.transcript);
        return configured.analysis.analyze(input);
      },
    },
  };
  assert.deepEqual(await submitTranscript(h.deps, id, { text: TRANSCRIPT, language: 'en' }), {
    call_id: id,
    processing_state: 'queued',
    queued: true,
  });
  const pending = await h.db.query<{ pending_transcript: string }>(
    'SELECT pending_transcript FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(pending.rows[0].pending_transcript, REDACTED);
  // an adapter's transcript comes without word times: nothing could be silenced in any audio
  const flag = await h.db.query<{ a: string | null }>(
    'SELECT audio_redaction AS a FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(flag.rows[0].a, 'no_word_times');
  await settleJobs(h.deps);
  assert.deepEqual(seen, [REDACTED]);
  const stored = await h.db.query<{ transcript_original: string }>(
    'SELECT transcript_original FROM call_analyses WHERE call_id = $1',
    [id],
  );
  assert.equal(stored.rows[0].transcript_original, REDACTED);
  const all = await everythingStoredFor(id);
  for (const s of SECRETS) assert.ok(!all.includes(s), `${s} is stored somewhere`);
  assert.ok(all.includes('415 555 0123'), 'the phone number survives');
  const transcribed = (await eventsOf(h.db, id)).find((ev) => ev.event_type === 'call.transcribed');
  assert.ok(transcribed);
  assert.equal((transcribed.envelope.data as { transcript_original: string }).transcript_original, REDACTED);

  // the adapter's retry of the same (unredacted) text is recognised, not a 409
  const again = await admin(h, 'POST', `/calls/${id}/transcript`, { text: TRANSCRIPT });
  assert.equal(again.statusCode, 202);
  const different = await admin(h, 'POST', `/calls/${id}/transcript`, { text: `${TRANSCRIPT} More.` });
  assert.equal(different.statusCode, 409);
});

test('an analysis that invents a card number, and an imported call, are redacted at the second line', async () => {
  const { orgId } = await insertOrg(h.db);
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  h.deps.capture = {
    transcription: null,
    analysis: {
      name: 'inventing',
      analyze: async (input) => {
        const r = await configured.analysis.analyze(input);
        return {
          analysis: { ...r.analysis, summary: `Paid with ${CARD}, CVV 737.` },
          followup: {
            subject: 'Your card',
            body: `We charged the card 4111111111111111 (exp 04/29).`,
            language: 'en',
          },
        };
      },
    },
  };
  await submitTranscript(h.deps, id, { text: 'Customer: I want a quote for a new boiler, please call me.' });
  await settleJobs(h.deps);
  const a = await h.db.query<{ analysis: { summary: string }; followup_email: { body: string } }>(
    'SELECT analysis, followup_email FROM call_analyses WHERE call_id = $1',
    [id],
  );
  assert.equal(a.rows[0].analysis.summary, 'Paid with [card number], CVV [security code].');
  assert.equal(a.rows[0].followup_email.body, 'We charged the card [card number] (exp [expiry date]).');

  const imported = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: '+14155550123',
    recording_mode: 'no_recording',
    transcript_original: TRANSCRIPT,
    transcript_processed: { summary: `Card ${CARD} given`, caller_name: 'Jane Miller' },
  });
  assert.equal(imported.statusCode, 201);
  const callId = imported.json().call_id as string;
  const all = await everythingStoredFor(callId);
  for (const s of SECRETS) assert.ok(!all.includes(s), `${s} is stored somewhere`);
  assert.ok(all.includes('Card [card number] given'));
});

test('off, by the operator API: the organization chose to keep every word; validated as a boolean', async () => {
  const { orgId } = await insertOrg(h.db);
  const bad = await admin(h, 'PATCH', `/organizations/${orgId}`, { redaction_enabled: 'no' });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().error.param, 'redaction_enabled');
  const off = await admin(h, 'PATCH', `/organizations/${orgId}`, { redaction_enabled: false });
  assert.equal(off.statusCode, 200);
  assert.equal(off.json().redaction_enabled, false);
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  await submitTranscript(h.deps, id, { text: TRANSCRIPT });
  await settleJobs(h.deps);
  const stored = await h.db.query<{ transcript_original: string }>(
    'SELECT transcript_original FROM call_analyses WHERE call_id = $1',
    [id],
  );
  assert.equal(stored.rows[0].transcript_original, TRANSCRIPT);
  const flag = await h.db.query<{ a: string | null }>(
    'SELECT audio_redaction AS a FROM calls WHERE id = $1',
    [id],
  );
  assert.equal(flag.rows[0].a, null);
  const on = await admin(h, 'PATCH', `/organizations/${orgId}`, { redaction_enabled: true });
  assert.equal(on.json().redaction_enabled, true);
});

test("a provider's error message never carries what redaction finds to the operator", () => {
  assert.equal(
    operatorMessage('openai answered 400: could not parse "card 4111 1111 1111 1111 exp 04/29"'),
    'openai answered 400: could not parse "card [card number] exp [expiry date]"',
  );
});
