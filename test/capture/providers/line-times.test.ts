import assert from 'node:assert/strict';
import { test } from 'node:test';
import { labelledText, lineTimes, mergeSegments } from '../../../src/capture/providers/transcript.ts';
import type { TranscriptSegment } from '../../../src/domain/capture-providers.ts';

test('each line of the labelled transcript gets its first segment start and its last segment end', () => {
  const segments: TranscriptSegment[] = mergeSegments([
    { speaker: 'customer', start: 4.25, end: 6, text: 'my boiler is broken.' },
    { speaker: 'agent', start: 0.5, end: 2, text: 'Acme Plumbing.' },
    { speaker: 'customer', start: 2.5, end: 4, text: 'Hi,' },
    { speaker: 'agent', start: 7, end: 9.1234, text: 'We can come on Friday.' },
  ]);
  assert.equal(
    labelledText(segments),
    'Agent: Acme Plumbing.\nCustomer: Hi, my boiler is broken.\nAgent: We can come on Friday.',
  );
  assert.deepEqual(lineTimes(segments), [
    [0.5, 2],
    [2.5, 6],
    [7, 9.123],
  ]);
});

test('no segments, no lines', () => {
  assert.deepEqual(lineTimes([]), []);
});
