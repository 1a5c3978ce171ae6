import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { analyzeByRules } from '../../../src/capture/analyzer.ts';
import { deepgramTranscription } from '../../../src/capture/providers/deepgram.ts';
import { openAiTranscription } from '../../../src/capture/providers/openai-transcription.ts';
import type { TranscriptionInput } from '../../../src/capture/providers/types.ts';
import { FakeClock } from '../../../src/clock.ts';
import {
  AGENT_SEGMENTS,
  CUSTOMER_SEGMENTS,
  type FakeProviders,
  STEREO_TRANSCRIPT,
  startFakeProviders,
  VOICEMAIL_TRANSCRIPT,
} from '../../helpers/fake-providers.ts';
import {
  AGENT_TONE_HZ,
  CUSTOMER_TONE_HZ,
  INBOUND_TONES,
  monoMp3,
  OUTBOUND_TONES,
  stereoMp3,
  VOICEMAIL_TONE_HZ,
} from '../../helpers/stereo-mp3.ts';

const clock = new FakeClock('2026-06-15T10:00:00.000Z');
const KEY = 'sk-test-secret-key-0123456789';
let fake: FakeProviders;
let stereo: Buffer;
let mono: Buffer;

before(async () => {
  fake = await startFakeProviders();
  // the inputs below are inbound calls: the caller (customer) on channel 0, the agent on channel 1
  stereo = stereoMp3({ seconds: 3, ...INBOUND_TONES });
  mono = monoMp3({ seconds: 3 });
});
after(() => fake.close());

const audio = (
  bytes: Buffer,
  channels: 1 | 2,
  extra: Partial<TranscriptionInput> = {},
): TranscriptionInput => ({
  openAudio: async () => Readable.from([bytes.subarray(0, 5000), bytes.subarray(5000)]),
  byteLength: bytes.length,
  contentType: 'audio/mpeg',
  channels,
  direction: 'inbound',
  ...extra,
});

/** The providers' time-out: the fake always answers, so far above any answer's time on a loaded machine. */
const ANSWERS_WITHIN_MS = 60_000;

const openai = (extra: Partial<Parameters<typeof openAiTranscription>[0]> = {}) =>
  openAiTranscription({
    baseUrl: fake.openaiBaseUrl,
    apiKey: KEY,
    timeoutMs: ANSWERS_WITHIN_MS,
    clock,
    ...extra,
  });
const deepgram = (extra: Partial<Parameters<typeof deepgramTranscription>[0]> = {}) =>
  deepgramTranscription({
    baseUrl: fake.deepgramBaseUrl,
    apiKey: KEY,
    timeoutMs: ANSWERS_WITHIN_MS,
    clock,
    ...extra,
  });

test('openai: each channel of a dual-channel MP3 goes up as its own WAV and the answers merge by time into Agent/Customer lines', async () => {
  const before = fake.requests.length;
  const r = await openai().transcribe(audio(stereo, 2));
  assert.equal(r.text, STEREO_TRANSCRIPT);
  assert.equal(r.language, 'en');
  assert.deepEqual(
    r.segments.map((s) => [s.speaker, s.start]),
    [
      ['agent', 0.5],
      ['customer', 2.4],
      ['customer', 4.1],
      ['agent', 6],
      ['customer', 7.8],
    ],
  );
  const reqs = fake.requests.slice(before);
  assert.equal(reqs.length, 2);
  const byName = Object.fromEntries(reqs.map((q) => [q.file?.filename, q]));
  assert.deepEqual(Object.keys(byName).sort(), ['agent-0.wav', 'customer-0.wav']);
  for (const q of reqs) {
    assert.equal(q.path, '/v1/audio/transcriptions');
    assert.equal(q.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual(q.fields, {
      model: 'whisper-1',
      response_format: 'verbose_json',
      'timestamp_granularities[]': 'segment,word',
      temperature: '0',
    });
    assert.equal(q.file?.type, 'audio/wav');
    assert.equal(q.file?.bytes.subarray(0, 4).toString('ascii'), 'RIFF');
    assert.equal(q.file?.bytes.readUInt16LE(22), 1, 'mono WAV');
    assert.equal(q.file?.bytes.readUInt16LE(34), 16, '16-bit');
  }
  // the fake heard the agent's tone on the agent's file and the customer's on the customer's
  assert.ok(Math.abs((byName['agent-0.wav'].tones?.[0] ?? 0) - AGENT_TONE_HZ) < 20);
  assert.ok(Math.abs((byName['customer-0.wav'].tones?.[0] ?? 0) - CUSTOMER_TONE_HZ) < 40);
  // the rules analyzer and the draft read the labelled transcript as a two-sided call
  const a = analyzeByRules({
    transcript: r.text,
    direction: 'inbound',
    organization: { name: 'Acme Plumbing', language: 'en' },
  });
  assert.equal(a.analysis.caller_name, 'Jane Miller');
  assert.equal(a.analysis.service_needed, 'someone to fix my leaking water heater');
  assert.ok(a.followup);
});

test('openai: telephone-rate (8 kHz) audio keeps its rate in the WAVs; CD-rate (44.1 kHz) goes up at 16 kHz', async () => {
  for (const [sampleRate, kbps, uploaded] of [
    [8000, 24, 8000],
    [44100, 128, 16000],
  ]) {
    const before = fake.requests.length;
    const r = await openai().transcribe(
      audio(stereoMp3({ seconds: 2, sampleRate, kbps, ...INBOUND_TONES }), 2),
    );
    // the fake still hears each side's tone in its channel's file
    assert.equal(r.text, STEREO_TRANSCRIPT);
    const reqs = fake.requests.slice(before);
    assert.equal(reqs.length, 2);
    for (const q of reqs) {
      assert.equal(q.file?.bytes.readUInt32LE(24), uploaded, 'sample rate');
      assert.equal(q.file?.bytes.readUInt32LE(28), uploaded * 2, 'byte rate');
      // two seconds of audio, and the encoder's padding (no gapless header to trim it)
      const seconds = (q.file?.bytes.readUInt32LE(40) ?? 0) / 2 / uploaded;
      assert.ok(seconds >= 1.95 && seconds < 2.25, `${seconds} s`);
    }
  }
});

test('openai: the temporary WAV files are removed afterwards', async () => {
  const tmp = `${tmpdir()}/callcap-wav-test-${process.pid}`;
  const { mkdir } = await import('node:fs/promises');
  await mkdir(tmp, { recursive: true });
  await openai({ tmpDir: tmp }).transcribe(audio(stereo, 2));
  assert.deepEqual(await readdir(tmp), []);
});

test('openai: a silent channel is not uploaded', async () => {
  const before = fake.requests.length;
  // an inbound call whose agent (channel 1) never speaks
  const silentAgent = stereoMp3({ seconds: 2, left: CUSTOMER_TONE_HZ, right: null });
  const r = await openai().transcribe(audio(silentAgent, 2));
  const reqs = fake.requests.slice(before);
  assert.deepEqual(
    reqs.map((q) => q.file?.filename),
    ['customer-0.wav'],
  );
  assert.equal(
    r.text,
    'Customer: Hi, my name is Jane Miller. I need someone to fix my leaking water heater. Great, thank you.',
  );
});

test('openai: a long channel is sent in windows that fit the upload limit, each offset by its start', async () => {
  // 2 s windows at 16 kHz: 44 + 64000 bytes; a 5 s recording makes windows at 0, 2 and 4 s
  const maxUploadBytes = 44 + 2 * 16000 * 2;
  const seg = (text: string) => ({
    ok: { language: 'english', text, segments: [{ start: 0.25, end: 1.5, text }] },
  });
  fake.script('transcriptions', seg('a0'), seg('c0'), seg('a1'), seg('c1'), seg('a2'), seg('c2'));
  const before = fake.requests.length;
  const r = await openai({ maxUploadBytes }).transcribe(
    audio(stereoMp3({ seconds: 5, ...INBOUND_TONES }), 2),
  );
  const reqs = fake.requests.slice(before);
  assert.deepEqual(reqs.map((q) => q.file?.filename).sort(), [
    'agent-0.wav',
    'agent-1.wav',
    'agent-2.wav',
    'customer-0.wav',
    'customer-1.wav',
    'customer-2.wav',
  ]);
  for (const q of reqs) assert.ok((q.file?.bytes.length ?? 0) <= maxUploadBytes);
  // window i starts at 2i s; the fake answered each request in arrival order, so only the offsets are fixed
  assert.deepEqual(
    r.segments.map((s) => s.start),
    [0.25, 0.25, 2.25, 2.25, 4.25, 4.25],
  );
  assert.deepEqual(
    r.segments.map((s) => s.speaker),
    ['agent', 'customer', 'agent', 'customer', 'agent', 'customer'],
  );
});

test('openai: mono audio (voicemail) goes up as it is and every segment is the customer', async () => {
  const before = fake.requests.length;
  const r = await openai({ model: 'whisper-large-v3' }).transcribe(audio(mono, 1));
  assert.equal(r.text, VOICEMAIL_TRANSCRIPT);
  const [q] = fake.requests.slice(before);
  assert.equal(q.file?.filename, 'recording.mp3');
  assert.equal(q.file?.type, 'audio/mpeg');
  assert.deepEqual(q.file?.bytes, mono);
  assert.equal(q.fields?.model, 'whisper-large-v3');
  assert.ok(Math.abs((q.tones?.[0] ?? 0) - VOICEMAIL_TONE_HZ) < 30);
  // one side only: the rules give no follow-up draft
  const a = analyzeByRules({
    transcript: r.text,
    direction: 'inbound',
    organization: { name: 'Acme', language: 'en' },
  });
  assert.equal(a.followup, null);
});

test('openai: without a key no Authorization header is sent (self-hosted servers)', async () => {
  const before = fake.requests.length;
  await openai({ apiKey: undefined }).transcribe(audio(mono, 1));
  assert.equal(fake.requests[before].headers.authorization, undefined);
});

test('openai: mono audio over the upload limit is refused as too_large, naming the limit, before any upload', async () => {
  const before = fake.requests.length;
  await assert.rejects(openai({ maxUploadBytes: 1000 }).transcribe(audio(mono, 1)), {
    name: 'ProviderError',
    kind: 'too_large',
    provider: 'openai',
    message: `the recording is ${mono.length} bytes; openai accepts at most 1000 bytes (0 MB) per upload`,
  });
  assert.equal(fake.requests.length, before);
});

test('openai: a dual-channel recording longer than the longest transcribed is too_large, nothing uploaded, nothing left behind', async () => {
  const tmp = `${tmpdir()}/callcap-wav-long-${process.pid}`;
  const { mkdir } = await import('node:fs/promises');
  await mkdir(tmp, { recursive: true });
  const before = fake.requests.length;
  await assert.rejects(openai({ maxRecordingSeconds: 2, tmpDir: tmp }).transcribe(audio(stereo, 2)), {
    name: 'ProviderError',
    kind: 'too_large',
    message: 'the recording is longer than 2 seconds, the longest this service transcribes',
  });
  assert.equal(fake.requests.length, before);
  assert.deepEqual(await readdir(tmp), []);
});

test('openai: a dual-channel "recording" that is not MP3 is fatal', async () => {
  const junk = Buffer.alloc(20_000, 7);
  await assert.rejects(openai().transcribe(audio(junk, 2)), {
    kind: 'fatal',
    message: 'the recording holds no MP3 audio that could be decoded',
  });
});

test('openai: a whisper server that answers a language code, and no segments, still gives one segment', async () => {
  fake.script('transcriptions', {
    ok: { text: ' Hallo, ich brauche Hilfe.', language: 'de', duration: 2.5 },
  });
  const r = await openai().transcribe(audio(mono, 1));
  assert.deepEqual(r, {
    text: 'Customer: Hallo, ich brauche Hilfe.',
    language: 'de',
    segments: [{ speaker: 'customer', start: 0, end: 2.5, text: 'Hallo, ich brauche Hilfe.' }],
  });
});

test('deepgram: a dual-channel recording is posted as it is with multichannel=true and parsed by channel', async () => {
  const before = fake.requests.length;
  const r = await deepgram().transcribe(audio(stereo, 2));
  assert.equal(r.text, STEREO_TRANSCRIPT);
  assert.equal(r.language, 'en');
  // each utterance keeps its words as its text writes them (punctuated_word), with their times:
  // what audio redaction silences by
  const jane = r.segments.find((s) => s.text === 'Hi, my name is Jane Miller.');
  assert.deepEqual(
    jane?.words?.map((w) => w.text),
    ['Hi,', 'my', 'name', 'is', 'Jane', 'Miller.'],
  );
  assert.equal(jane?.words?.[0].start, jane?.start);
  assert.equal(jane?.words?.at(-1)?.end, jane?.end);
  const [q] = fake.requests.slice(before);
  assert.equal(q.path, '/v1/listen');
  assert.deepEqual(q.query, {
    model: 'nova-3',
    punctuate: 'true',
    smart_format: 'true',
    utterances: 'true',
    detect_language: 'true',
    multichannel: 'true',
  });
  assert.equal(q.headers.authorization, `Token ${KEY}`);
  assert.equal(q.headers['content-type'], 'audio/mpeg');
  assert.equal(q.headers['content-length'], String(stereo.length));
  assert.deepEqual(q.body, stereo);
});

test('deepgram: a mono recording is sent with diarize=true; one voice is the customer', async () => {
  const before = fake.requests.length;
  const r = await deepgram({ model: 'nova-2' }).transcribe(audio(mono, 1));
  assert.equal(r.text, VOICEMAIL_TRANSCRIPT);
  const [q] = fake.requests.slice(before);
  assert.equal(q.query.diarize, 'true');
  assert.equal(q.query.multichannel, undefined);
  assert.equal(q.query.model, 'nova-2');
});

test('deepgram: diarized mono with two voices labels the first voice as the side that picks up', async () => {
  fake.tones.set(VOICEMAIL_TONE_HZ, {
    language: 'en',
    segments: [
      { start: 0, end: 1, text: 'Acme, good morning.', voice: 1 },
      { start: 1.2, end: 2, text: 'Hello, I need a plumber.', voice: 0 },
      { start: 2.1, end: 3, text: 'Sure.', voice: 1 },
    ],
  });
  try {
    const inbound = await deepgram().transcribe(audio(mono, 1));
    assert.equal(
      inbound.text,
      'Agent: Acme, good morning.\nCustomer: Hello, I need a plumber.\nAgent: Sure.',
    );
    const outbound = await deepgram().transcribe(audio(mono, 1, { direction: 'outbound' }));
    assert.equal(
      outbound.text,
      'Customer: Acme, good morning.\nAgent: Hello, I need a plumber.\nCustomer: Sure.',
    );
  } finally {
    fake.tones.delete(VOICEMAIL_TONE_HZ);
  }
});

test('deepgram: an answer without utterances falls back to one segment per channel', async () => {
  fake.script('listen', {
    ok: {
      results: {
        channels: [
          { alternatives: [{ transcript: 'Hello.', words: [{ start: 0.2, end: 0.6 }] }] },
          {
            detected_language: 'fr',
            alternatives: [{ transcript: 'Bonjour.', words: [{ start: 0.7, end: 1.1 }] }],
          },
        ],
      },
    },
  });
  // outbound: the agent's leg on channel 0; the customer's channel has the only detected language
  const r = await deepgram().transcribe(audio(stereo, 2, { direction: 'outbound' }));
  assert.deepEqual(r, {
    text: 'Agent: Hello.\nCustomer: Bonjour.',
    language: 'fr',
    segments: [
      { speaker: 'agent', start: 0.2, end: 0.6, text: 'Hello.' },
      { speaker: 'customer', start: 0.7, end: 1.1, text: 'Bonjour.' },
    ],
  });
});

// Twilio records the parent leg on channel 0: the caller on an inbound call, the agent on a
// click-to-call. The same two voices, laid out for each direction, give the same labelled lines;
// an inbound layout read as outbound gives the other labels (the direction decides, not the file).
for (const [name, transcribe] of [
  ['openai', (i: TranscriptionInput) => openai().transcribe(i)],
  ['deepgram', (i: TranscriptionInput) => deepgram().transcribe(i)],
] as const) {
  test(`${name}: each channel is labelled by the call's direction — the parent leg on channel 0`, async () => {
    const inbound = stereoMp3({ seconds: 3, ...INBOUND_TONES });
    const outbound = stereoMp3({ seconds: 3, ...OUTBOUND_TONES });
    assert.equal((await transcribe(audio(inbound, 2, { direction: 'inbound' }))).text, STEREO_TRANSCRIPT);
    assert.equal((await transcribe(audio(outbound, 2, { direction: 'outbound' }))).text, STEREO_TRANSCRIPT);
    const swapped = await transcribe(audio(inbound, 2, { direction: 'outbound' }));
    assert.deepEqual(
      swapped.segments.filter((s) => s.speaker === 'agent').map((s) => s.text),
      CUSTOMER_SEGMENTS.map((s) => s.text),
      "read as outbound, channel 0 (the customer's tone here) is the agent",
    );
    assert.deepEqual(
      swapped.segments.filter((s) => s.speaker === 'customer').map((s) => s.text),
      AGENT_SEGMENTS.map((s) => s.text),
    );
  });

  test(`${name}: the reported language is the customer's channel's, on either direction`, async () => {
    const agent = fake.tones.get(AGENT_TONE_HZ)!;
    const customer = fake.tones.get(CUSTOMER_TONE_HZ)!;
    fake.tones.set(CUSTOMER_TONE_HZ, { ...customer, language: 'german' });
    try {
      for (const [direction, tones] of [
        ['inbound', INBOUND_TONES],
        ['outbound', OUTBOUND_TONES],
      ] as const) {
        const r = await transcribe(audio(stereoMp3({ seconds: 3, ...tones }), 2, { direction }));
        assert.equal(r.language, 'de', direction);
      }
    } finally {
      fake.tones.set(AGENT_TONE_HZ, agent);
      fake.tones.set(CUSTOMER_TONE_HZ, customer);
    }
  });
}

test('deepgram: audio over its limit is refused as too_large before any upload', async () => {
  const before = fake.requests.length;
  await assert.rejects(deepgram({ maxUploadBytes: 100 }).transcribe(audio(stereo, 2)), {
    kind: 'too_large',
    provider: 'deepgram',
  });
  assert.equal(fake.requests.length, before);
});

test('an unreadable transcription answer is fatal', async () => {
  fake.script('transcriptions', { ok: { segments: 'nope' } });
  await assert.rejects(openai().transcribe(audio(mono, 1)), {
    kind: 'fatal',
    message: 'openai answered a transcription that cannot be read: the answer has no text',
  });
  fake.script('listen', { ok: { metadata: {} } });
  await assert.rejects(deepgram().transcribe(audio(mono, 1)), {
    kind: 'fatal',
    message: 'deepgram answered a transcription that cannot be read: the answer has no results.channels',
  });
});
