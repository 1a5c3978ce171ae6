/**
 * Evidence times (issue 19): the transcribe stage keeps, per turn of the stored (redacted)
 * transcript, where its words were said; the analyse stage times each field's evidence from them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { labelledText } from '../../src/capture/providers/transcript.ts';
import type { TranscriptSegment } from '../../src/capture/providers/types.ts';
import { redactText } from '../../src/capture/redaction/redact.ts';
import { evidenceStart, timedEvidence, transcriptTimes } from '../../src/capture/transcript-times.ts';

const words = (text: string, start: number, step: number) =>
  text.split(' ').map((w, i) => ({ text: w, start: start + i * step, end: start + (i + 1) * step }));

const SEGMENTS: TranscriptSegment[] = [
  { speaker: 'agent', start: 0.5, end: 2, text: 'Acme Plumbing, how can I help?' },
  {
    speaker: 'customer',
    start: 2.5,
    end: 9,
    text: 'my card is 4111 1111 1111 1111 and I live in Springfield',
    words: words('my card is 4111 1111 1111 1111 and I live in Springfield', 2.5, 0.5),
  },
  { speaker: 'customer', start: 10, end: 12, text: 'My name is Jane Miller.' },
];

test('anchors follow the redaction: a word after a redacted card number keeps its time at its new place', () => {
  const text = labelledText(SEGMENTS);
  const r = redactText(text);
  assert.equal(
    r.text,
    'Agent: Acme Plumbing, how can I help?\nCustomer: my card is [card number] and I live in Springfield My name is Jane Miller.',
  );
  const times = transcriptTimes(text, SEGMENTS, r.spans);
  assert.ok(times);
  assert.deepEqual(times[0], [[7, 0.5]]);
  const line = r.text.split('\n')[1];
  // "Springfield" is the 12th word: 2.5 + 11 × 0.5
  assert.deepEqual(
    times[1].find(([o]) => o === line.indexOf('Springfield')),
    [line.indexOf('Springfield'), 8],
  );
  // no anchor inside the token; the segment without words has its start
  const token = line.indexOf('[card number]');
  assert.ok(!times[1].some(([o]) => o > token && o < token + '[card number]'.length));
  assert.deepEqual(
    times[1].find(([o]) => o === line.indexOf('My name')),
    [line.indexOf('My name'), 10],
  );
  assert.equal(evidenceStart(r.text, times, { quote: 'Springfield', turn: 1 }), 8);
  assert.equal(evidenceStart(r.text, times, { quote: 'Jane Miller', turn: 1 }), 10);
  assert.equal(evidenceStart(r.text, times, { quote: 'Acme Plumbing', turn: 0 }), 0.5);
  assert.deepEqual(
    timedEvidence(r.text, times, { client_city: { quote: 'Springfield', turn: 1, start: null } }),
    { client_city: { quote: 'Springfield', turn: 1, start: 8 } },
  );
});

test('no times: a transcript that is not the segments’ text, or evidence without times, keeps start null', () => {
  assert.equal(transcriptTimes('Customer: something else', SEGMENTS, []), null);
  const e = { caller_name: { quote: 'Jane', turn: 0, start: null } };
  assert.deepEqual(timedEvidence('Customer: Jane', null, e), e);
  assert.equal(evidenceStart('Customer: Jane', [[]], { quote: 'Jane', turn: 0 }), null);
});
