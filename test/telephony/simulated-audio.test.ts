/**
 * The simulated carrier's recordings are synthesised once per script (src/capture/telephony/
 * simulated/audio.ts cachedRecordings): the same script, timeline, channels and direction come from
 * a bounded least-recently-used cache; anything else, or a script pushed out of it, is encoded
 * again. Counted by an injected encoder wrapping the real one (lamejs), not timed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cachedRecordings,
  encodeMp3,
  type RecordingEncoder,
  synthesiseRecording,
} from '../../src/capture/telephony/simulated/audio.ts';
import { parseScript, timeline } from '../../src/domain/simulated-call.ts';

/** The real encoder, counting its invocations. */
function counting() {
  const counter = {
    encoded: 0,
    encode: (async (pcm) => {
      counter.encoded++;
      return encodeMp3(pcm);
    }) as RecordingEncoder,
  };
  return counter;
}

const turnsOf = (script: string) => timeline(parseScript(script) ?? []);
const A = turnsOf('Agent: Hello, this is Sam.\nCustomer: Hi Sam.');
const B = turnsOf('Agent: Good morning.\nCustomer: Morning.');
const C = turnsOf('Agent: Anything else?\nCustomer: No, thanks.');

test('the same script twice: encoded once, the same MP3 as a synthesis without the cache', async () => {
  const c = counting();
  const recording = cachedRecordings({ encode: c.encode });
  const first = await recording(A, 2, 'outbound');
  const second = await recording(A, 2, 'outbound');
  assert.equal(c.encoded, 1);
  assert.equal(second, first, 'the cached buffer itself');
  assert.deepEqual(first, await synthesiseRecording(A, 2, 'outbound'));
  // an equal script parsed again (a new array, the same content) is the same entry
  await recording(turnsOf('Agent: Hello, this is Sam.\nCustomer: Hi Sam.'), 2, 'outbound');
  assert.equal(c.encoded, 1);
});

test('asked for twice while it is being synthesised: encoded once', async () => {
  const c = counting();
  const recording = cachedRecordings({ encode: c.encode });
  const [x, y] = await Promise.all([recording(A, 2, 'inbound'), recording(A, 2, 'inbound')]);
  assert.equal(c.encoded, 1);
  assert.equal(x, y);
});

test('another script, channel count or direction is encoded on its own', async () => {
  const c = counting();
  const recording = cachedRecordings({ encode: c.encode });
  await recording(A, 2, 'outbound');
  await recording(B, 2, 'outbound');
  await recording(A, 1, 'outbound');
  await recording(A, 2, 'inbound');
  assert.equal(c.encoded, 4);
  await recording(A, 2, 'outbound');
  assert.equal(c.encoded, 4);
});

test('bounded: the least recently used recording goes first', async () => {
  const c = counting();
  const recording = cachedRecordings({ entries: 2, encode: c.encode });
  await recording(A, 2, 'outbound');
  await recording(B, 2, 'outbound');
  await recording(A, 2, 'outbound'); // A used again: B is now the oldest
  assert.equal(c.encoded, 2);
  await recording(C, 2, 'outbound'); // pushes B out
  assert.equal(c.encoded, 3);
  await recording(A, 2, 'outbound');
  await recording(C, 2, 'outbound');
  assert.equal(c.encoded, 3, 'A and C kept');
  await recording(B, 2, 'outbound');
  assert.equal(c.encoded, 4, 'B encoded again');
});

test('a synthesis that failed is not kept: the next call encodes again', async () => {
  let calls = 0;
  const recording = cachedRecordings({
    encode: async (pcm) => {
      calls++;
      if (calls === 1) throw new Error('encoder failed');
      return encodeMp3(pcm);
    },
  });
  await assert.rejects(recording(A, 2, 'outbound'), /encoder failed/);
  const audio = await recording(A, 2, 'outbound');
  assert.equal(calls, 2);
  assert.ok(audio.length > 0);
});
