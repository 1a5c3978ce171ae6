import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CONNECTED_SECONDS,
  MAX_SIMULATED_SECONDS,
  OUTBOUND_SCRIPT,
  outboundScenarioOf,
  outboundSteps,
  parseScript,
  scriptText,
  timeline,
  timelineSeconds,
} from '../../src/domain/simulated-call.ts';

test('the magic number is the last four digits of the customer number, any country; unlisted is connected', () => {
  const table: [string, string][] = [
    ['+14155550000', 'connected'],
    ['+14155550001', 'customer_busy'],
    ['+442079460002', 'agent_no_confirmation'],
    ['+4915550000003', 'carrier_rejected'],
    ['+14155550004', 'late_repair'],
    ['+14155550005', 'connected'],
    ['+14155552671', 'connected'],
  ];
  for (const [number, scenario] of table) assert.equal(outboundScenarioOf(number), scenario, number);
});

test('a script: labelled lines in any case, continuation lines, blank lines; none without a turn', () => {
  assert.deepEqual(parseScript('agent: Hello\n\nCUSTOMER:  Hi there\n  and more\nAgent:'), [
    { speaker: 'agent', text: 'Hello' },
    { speaker: 'customer', text: 'Hi there and more' },
  ]);
  assert.equal(parseScript('Hello'), null);
  assert.equal(parseScript('Agent:\nCustomer: '), null);
  assert.equal(scriptText(parseScript(OUTBOUND_SCRIPT)!), OUTBOUND_SCRIPT);
});

test('the timeline: turns in order without overlap; scaled to a length; never over the cap', () => {
  const turns = parseScript(OUTBOUND_SCRIPT)!;
  const timed = timeline(turns, CONNECTED_SECONDS);
  for (let i = 1; i < timed.length; i++) assert.ok(timed[i]!.start > timed[i - 1]!.end);
  assert.ok(Math.abs(timelineSeconds(timed) - CONNECTED_SECONDS) < 0.6);
  const long = parseScript(`Agent: ${'word '.repeat(2000)}`)!;
  assert.ok(timelineSeconds(timeline(long)) <= MAX_SIMULATED_SECONDS + 1);
});

test('steps are in time order, and the refused call has none', () => {
  for (const s of ['connected', 'customer_busy', 'agent_no_confirmation', 'late_repair'] as const) {
    const steps = outboundSteps(s, 30);
    for (let i = 1; i < steps.length; i++) assert.ok(steps[i]!.at >= steps[i - 1]!.at, s);
    assert.ok(steps.at(-1)!.at <= 10, s);
  }
  assert.deepEqual(outboundSteps('carrier_rejected', 30), []);
});
