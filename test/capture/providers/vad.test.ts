/**
 * The voice activity gate (src/capture/providers/vad.ts) on the labelled set in test/fixtures/vad/
 * (scripts/vad-fixtures.ts wrote it: hum, hiss, clicks, key tones, a dial tone, silence, speech at
 * -18..-25 dBFS, quiet speech at -35..-50 dBFS, speech over hum and hiss): every clip answers its
 * label, and the same clip answers the same at every rate the splitter hands it over at and in
 * chunks of any size (the decision is made frame by frame).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { VoiceDetector } from '../../../src/capture/providers/vad.ts';

const DIR = new URL('../../fixtures/vad/', import.meta.url);
interface Clip {
  file: string;
  label: 'speech' | 'noise';
  class: string;
}
const clips = JSON.parse(readFileSync(new URL('labels.json', DIR), 'utf8')) as Clip[];

function samples(file: string): Int16Array {
  const wav = readFileSync(new URL(file, DIR));
  assert.equal(wav.readUInt32LE(24), 8000, file);
  const pcm = new Int16Array(wav.length / 2 - 22);
  for (let i = 0; i < pcm.length; i++) pcm[i] = wav.readInt16LE(44 + i * 2);
  return pcm;
}

/** Each 8 kHz sample repeated: the same audio at 16 kHz (a rate WebRTC's detector takes as it is). */
const doubled = (x: Int16Array) => Int16Array.from({ length: x.length * 2 }, (_, i) => x[i >> 1]!);
/** Linear interpolation up to `rate`: the same audio at a rate the detector brings down to 8 kHz itself. */
const upTo = (x: Int16Array, rate: number) =>
  Int16Array.from({ length: Math.floor(((x.length - 1) * rate) / 8000) }, (_, j) => {
    const at = (j * 8000) / rate;
    const i = Math.floor(at);
    return Math.round(x[i]! + (x[i + 1]! - x[i]!) * (at - i));
  });

async function detect(pcm: Int16Array, rate: number, chunk = pcm.length) {
  const d = await VoiceDetector.create(rate);
  try {
    for (let i = 0; i < pcm.length; i += chunk) d.push(pcm, i, Math.min(chunk, pcm.length - i));
    return d.endWindow();
  } finally {
    d.close();
  }
}

test('every clip of the labelled set is classified as labelled (8 kHz)', async () => {
  assert.equal(clips.length, 20);
  const answers: Record<string, string> = {};
  for (const c of clips) answers[c.file] = (await detect(samples(c.file), 8000)).speech ? 'speech' : 'noise';
  assert.deepEqual(answers, Object.fromEntries(clips.map((c) => [c.file, c.label])));
});

test('exact speech milliseconds per clip, the same whatever the chunk size', async () => {
  const ms: Record<string, number> = {};
  for (const c of clips) {
    const pcm = samples(c.file);
    const whole = await detect(pcm, 8000);
    const chunked = await detect(pcm, 8000, 1001);
    assert.deepEqual(chunked, whole, c.file);
    ms[c.file] = whole.speechMs;
  }
  assert.deepEqual(ms, {
    'silence.wav': 0,
    'silence-dither.wav': 0,
    'hum-50.wav': 0,
    'hum-60-loud.wav': 0,
    'hum-60-quiet.wav': 0,
    'hiss-white.wav': 0,
    'hiss-white-loud.wav': 0,
    'hiss-line.wav': 0,
    'clicks.wav': 0,
    'dtmf.wav': 0,
    'dial-tone.wav': 0,
    'speech-en.wav': 3300,
    'speech-es.wav': 3330,
    'speech-de-female.wav': 2760,
    'speech-yes.wav': 330,
    'quiet-speech-35.wav': 2640,
    'quiet-speech-42.wav': 1560,
    'quiet-speech-50.wav': 630,
    'speech-over-hum.wav': 2970,
    'speech-over-hiss.wav': 2310,
  });
});

test('at 16 kHz and at 11.025 kHz (brought down to 8 kHz) the labels hold too', async () => {
  for (const c of clips) {
    const pcm = samples(c.file);
    const at16 = await detect(doubled(pcm), 16000);
    assert.equal(at16.speech ? 'speech' : 'noise', c.label, `${c.file} at 16 kHz`);
    const at11 = await detect(upTo(pcm, 11025), 11025, 4096);
    assert.equal(at11.speech ? 'speech' : 'noise', c.label, `${c.file} at 11.025 kHz`);
  }
});

test('windows: each endWindow() judges only what came since the last', async () => {
  const d = await VoiceDetector.create(8000);
  try {
    d.push(samples('speech-en.wav'));
    assert.equal(d.endWindow().speech, true);
    d.push(samples('hum-60-loud.wav'));
    assert.equal(d.endWindow().speech, false);
    d.push(samples('silence.wav'));
    const r = d.endWindow();
    // WebRTC's own hangover runs 120 ms into the silence; nothing there is counted
    assert.deepEqual(r, { speech: false, speechMs: 0, voicedMs: 120, ms: 1980 });
  } finally {
    d.close();
  }
});
