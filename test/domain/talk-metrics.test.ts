import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bridgeGaps, customerShare, talkMetrics, talkMetricsOf } from '../../src/domain/talk-metrics.ts';

/** Frames of 1 s for readable tables: '#' talk, '.' silence. */
const f = (s: string) => [...s].map((c) => c === '#');

test('pauses shorter than the bridge between words count as talk; longer ones do not', () => {
  assert.deepEqual(bridgeGaps(f('#..#'), 3), f('####'));
  assert.deepEqual(bridgeGaps(f('#...#'), 3), f('#...#'));
  assert.deepEqual(bridgeGaps(f('..#..'), 3), f('..#..'));
});

test('talk per side, overlap, silence and the longest monologue from the frames', () => {
  //            agent:    ###.......##
  //            customer: ....######.#
  const m = talkMetrics(f('###.......##'), f('....######.#'), 1);
  assert.deepEqual(m, {
    frame_seconds: 1,
    duration_seconds: 12,
    agent_seconds: 5,
    customer_seconds: 7,
    overlap_seconds: 1,
    silence_seconds: 1,
    longest_monologue: { speaker: 'customer', start: 4, seconds: 6 },
  });
  assert.equal(customerShare(m), 7 / 12);
});

test('a pause of the same side within the monologue pause keeps the monologue; the other side ends it', () => {
  // 0.5 s frames: the agent talks 2 s, pauses 1 s (2 frames, within 1.5 s), talks 1 s; the customer answers
  const m = talkMetrics(f('####..##......'), f('........###...'), 0.5);
  assert.deepEqual(m.longest_monologue, { speaker: 'agent', start: 0, seconds: 4 });
  assert.equal(m.agent_seconds, 3);
  assert.equal(m.silence_seconds, 2.5);
});

test('nobody talked: zero talk, no ratio, no monologue', () => {
  const m = talkMetrics(f('....'), f('....'), 1);
  assert.equal(m.silence_seconds, 4);
  assert.equal(m.longest_monologue, null);
  assert.equal(customerShare(m), null);
});

test('a stored value is read back, anything else is null', () => {
  const m = talkMetrics(f('##..'), f('..##'), 1);
  assert.deepEqual(talkMetricsOf(JSON.parse(JSON.stringify(m))), m);
  assert.equal(talkMetricsOf({ agent_seconds: 'x' }), null);
  assert.equal(talkMetricsOf(null), null);
});
