/**
 * Audio redaction (issue 19): a speech-to-text answer with word times → the redacted words'
 * spans silenced in the stored recording, on the speaker's channel only, before the transcript is
 * written; the call is flagged 'silenced'. Without word times the call is flagged 'no_word_times'.
 * The stored MP3 is decoded again (mpg123) and its samples measured.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MPEGDecoder } from 'mpg123-decoder';
import { builtInCaptureProviders } from '../../src/capture/jobs/providers.ts';
import { labelledText } from '../../src/capture/providers/transcript.ts';
import type { TranscriptionResult, TranscriptSegment } from '../../src/domain/capture-providers.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { INBOUND_TONES, stereoMp3 } from '../helpers/stereo-mp3.ts';

let h: Harness;
let orgId: string;
before(async () => {
  h = await createHarness();
  ({ orgId } = await insertOrg(h.db, { country: 'US' }));
});
after(async () => {
  h.deps.capture = builtInCaptureProviders();
  await h.close();
});

function words(text: string, start: number, end: number) {
  const ws = text.split(' ');
  const step = (end - start) / ws.length;
  return ws.map((w, i) => ({ text: w, start: start + i * step, end: start + (i + 1) * step }));
}

function provider(segments: TranscriptSegment[], withWords: boolean) {
  const segs = segments.map((s) => (withWords ? { ...s, words: words(s.text, s.start, s.end) } : s));
  const text = labelledText(segs);
  const result: TranscriptionResult = { text, language: 'en', segments: segs };
  return { name: 'fake-stt', maxUploadBytes: 25 * 1024 * 1024, transcribe: async () => result };
}

const SEGMENTS: TranscriptSegment[] = [
  { speaker: 'agent', start: 0, end: 2, text: 'Acme Plumbing, the card number please?' },
  // 8 words over 8 seconds: the card number is words 5 to 8, seconds 6 to 10
  { speaker: 'customer', start: 2, end: 10, text: 'yes my card is 4111 1111 1111 1111' },
];

async function decoded(key: string): Promise<{ ch: Float32Array[]; rate: number }> {
  const d = new MPEGDecoder();
  await d.ready;
  const chunks: Buffer[] = [];
  for await (const c of h.deps.store.read(key)) chunks.push(c as Buffer);
  const r = d.decode(new Uint8Array(Buffer.concat(chunks)));
  d.free();
  return { ch: r.channelData.map((c) => c.subarray(0, r.samplesDecoded)), rate: r.sampleRate };
}

/** A call whose recording the adapter PUTs (POST …/recording queues the transcribe stage); its blob key. */
async function callWithAudio(audio: Buffer): Promise<{ callId: string; key: string }> {
  const callId = await insertCall(h.db, { orgId });
  const res = await h.operator.inject({
    method: 'PUT',
    url: `/admin/v1/calls/${callId}/recording`,
    headers: { ...adminHeaders, 'content-type': 'audio/mpeg' },
    payload: audio,
  });
  assert.equal(res.statusCode, 204, res.body);
  const { rows } = await h.db.query<{ k: string }>('SELECT recording_key AS k FROM calls WHERE id = $1', [
    callId,
  ]);
  return { callId, key: rows[0].k };
}

const peak = (c: Float32Array, rate: number, from: number, to: number) =>
  c.subarray(Math.floor(from * rate), Math.floor(to * rate)).reduce((m, v) => Math.max(m, Math.abs(v)), 0);

test('with word times: the card number is silenced on the customer channel only, the call says silenced', async () => {
  h.deps.capture = { ...builtInCaptureProviders(), transcription: provider(SEGMENTS, true) };
  const { callId, key } = await callWithAudio(stereoMp3({ seconds: 12, ...INBOUND_TONES }));
  await settleJobs(h.deps);
  const { rows } = await h.db.query<{ audio_redaction: string; recording_bytes: number; t: string }>(
    `SELECT c.audio_redaction, c.recording_bytes, ca.transcript_original AS t
       FROM calls c JOIN call_analyses ca ON ca.call_id = c.id WHERE c.id = $1`,
    [callId],
  );
  assert.equal(rows[0].audio_redaction, 'silenced');
  assert.equal(
    rows[0].t,
    'Agent: Acme Plumbing, the card number please?\nCustomer: yes my card is [card number]',
  );
  assert.equal(rows[0].recording_bytes, await h.deps.store.size(key));
  const { ch, rate } = await decoded(key);
  // inbound: the customer (the caller, Twilio's parent leg) is channel 0
  // (the re-encoding shifts the audio by the encoder's delay, a few hundredths: the pad covers it)
  assert.ok(
    peak(ch[0], rate, 6, 10) < 0.001,
    `customer channel over the number: ${peak(ch[0], rate, 6, 10)}`,
  );
  assert.ok(peak(ch[0], rate, 2.5, 5.5) > 0.2, 'the customer before the number is heard');
  assert.ok(peak(ch[0], rate, 10.5, 11.5) > 0.2, 'and after it');
  assert.ok(peak(ch[1], rate, 6, 10) > 0.2, 'the agent channel is untouched');
});

test('without word times: the transcript is redacted, the audio left, the call flagged no_word_times', async () => {
  h.deps.capture = { ...builtInCaptureProviders(), transcription: provider(SEGMENTS, false) };
  const audio = stereoMp3({ seconds: 12, ...INBOUND_TONES });
  const { callId, key } = await callWithAudio(audio);
  await settleJobs(h.deps);
  const { rows } = await h.db.query<{ audio_redaction: string }>(
    'SELECT audio_redaction FROM calls WHERE id = $1',
    [callId],
  );
  assert.equal(rows[0].audio_redaction, 'no_word_times');
  assert.equal(await h.deps.store.size(key), audio.length);
});

test('evidence carries the time its words were said: the word’s own time with word times, the segment’s start without', async () => {
  const segments: TranscriptSegment[] = [
    { speaker: 'agent', start: 0.5, end: 2, text: 'Acme Plumbing, how can I help you?' },
    // six words over three seconds, half a second each: the quote "my name is Jane Miller" begins
    // with the second word, at 3.0 s
    { speaker: 'customer', start: 2.5, end: 5.5, text: 'Hi, my name is Jane Miller.' },
    { speaker: 'customer', start: 6, end: 9, text: 'My water heater is leaking, please call me back.' },
  ];
  for (const [withWords, start] of [
    [true, 3],
    [false, 2.5],
  ] as const) {
    h.deps.capture = { ...builtInCaptureProviders(), transcription: provider(segments, withWords) };
    const { callId } = await callWithAudio(stereoMp3({ seconds: 10, ...INBOUND_TONES }));
    await settleJobs(h.deps);
    const { rows } = await h.db.query<{
      evidence: Record<string, { quote: string; turn: number; start: number | null }>;
      times: unknown;
    }>(
      `SELECT ca.evidence, c.pending_transcript_times AS times
         FROM call_analyses ca JOIN calls c ON c.id = ca.call_id WHERE ca.call_id = $1`,
      [callId],
    );
    assert.deepEqual(
      rows[0].evidence.caller_name,
      { quote: 'my name is Jane Miller', turn: 1, start },
      `words: ${withWords}`,
    );
    assert.equal(rows[0].times, null, 'the times leave with the inbox');
  }
});
