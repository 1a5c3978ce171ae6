import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { labelledText } from '../../src/capture/providers/transcript.ts';
import { audioRedaction, SILENCE_PAD_SECONDS } from '../../src/capture/redaction/audio-spans.ts';
import type { TranscriptSegment } from '../../src/domain/capture-providers.ts';
import { fakeWords } from '../helpers/fake-providers.ts';

const seg = (
  speaker: TranscriptSegment['speaker'],
  start: number,
  end: number,
  text: string,
  words = true,
) => ({
  speaker,
  start,
  end,
  text,
  ...(words
    ? { words: fakeWords(text, start, end).map((w) => ({ text: w.word, start: w.start, end: w.end })) }
    : {}),
});

describe('audioRedaction: redacted words back to their times', () => {
  it('maps a card number said over two segments of the customer, the agent between, to the customer channel', () => {
    const segments: TranscriptSegment[] = [
      seg('agent', 0, 2, 'What is the card number?'),
      seg('customer', 2, 6, 'four one one one one one one one'),
      seg('agent', 6, 6.5, 'mhm'),
      seg('customer', 7, 11, 'one one one one one one one one.'),
      seg('customer', 11, 13, 'Call me at 415 555 0123.'),
    ];
    const r = audioRedaction(segments);
    assert.equal(r.text, labelledText(segments));
    assert.equal(r.complete, true);
    assert.deepEqual(
      r.spans.map((s) => [s.speaker, s.kind, +s.start.toFixed(2), +s.end.toFixed(2)]),
      [
        ['customer', 'card_number', 2 - SILENCE_PAD_SECONDS, 6 + SILENCE_PAD_SECONDS],
        ['customer', 'card_number', 7 - SILENCE_PAD_SECONDS, 11 + SILENCE_PAD_SECONDS],
      ],
    );
  });

  it('only the words of the span: "my card is 4111 1111 1111 1111 thanks"', () => {
    const r = audioRedaction([seg('customer', 10, 18, 'my card is 4111 1111 1111 1111 thanks')]);
    // 8 words over 8 seconds: the number is words 4-7, seconds 13 to 17
    assert.deepEqual(
      r.spans.map((s) => [s.speaker, +s.start.toFixed(2), +s.end.toFixed(2)]),
      [['customer', +(13 - SILENCE_PAD_SECONDS).toFixed(2), +(17 + SILENCE_PAD_SECONDS).toFixed(2)]],
    );
    assert.equal(r.complete, true);
  });

  it('without word times it says it could not place them', () => {
    const r = audioRedaction([seg('customer', 0, 5, 'card 4111 1111 1111 1111', false)]);
    assert.deepEqual(r.spans, []);
    assert.equal(r.complete, false);
    const none = audioRedaction([seg('customer', 0, 5, 'call me at 415 555 0123', false)]);
    assert.deepEqual(none, { text: 'Customer: call me at 415 555 0123', spans: [], complete: true });
  });
});
