import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOutcomeOrder } from '../../src/webhooks/delivery/outcome-order.ts';

/** A write the test finishes by hand; `log` records when writes start. */
function manualWrite(log: string[], name: string) {
  let finish = () => {};
  const write = () => {
    log.push(`start ${name}`);
    return new Promise<void>((r) => {
      finish = () => {
        log.push(`end ${name}`);
        r();
      };
    });
  };
  return { write, finish: () => finish() };
}

const turn = () => new Promise((r) => setImmediate(r));

test('a failure waits for the earlier successes of its subscription, not for those of another', async () => {
  const order = createOutcomeOrder();
  const log: string[] = [];
  const s1 = manualWrite(log, 's1');
  const other = manualWrite(log, 'other');
  const written = order.success('A', s1.write);
  void order.success('B', other.write);
  let failureTurn = false;
  const failure = order.failure('A').then((end) => {
    failureTurn = true;
    return end;
  });
  const otherFailure = await order.failure('C');
  otherFailure();
  await turn();
  assert.equal(failureTurn, false, 'the success of A is not written yet');
  s1.finish();
  await written;
  const end = await failure;
  assert.equal(failureTurn, true);
  end();
  other.finish();
});

test('a success received during a failure is handed to the writer once the failure is written', async () => {
  const order = createOutcomeOrder();
  const log: string[] = [];
  const end = await order.failure('A');
  const s = manualWrite(log, 's');
  const done = order.success('A', s.write);
  await turn();
  assert.deepEqual(log, [], 'not started during the failure');
  end();
  await turn();
  assert.deepEqual(log, ['start s']);
  s.finish();
  await done;
  // Nothing left pending: a new failure of A has its turn at once.
  const again = await order.failure('A');
  again();
});

test('failures of one subscription take turns in the order they came in', async () => {
  const order = createOutcomeOrder();
  const seen: number[] = [];
  const first = await order.failure('A');
  const second = order.failure('A').then((end) => {
    seen.push(2);
    end();
  });
  await turn();
  assert.equal(seen.length, 0, 'the second waits for the first');
  seen.push(1);
  first();
  await second;
  assert.deepEqual(seen, [1, 2]);
});

test('a failed success write still lets the next failure have its turn', async () => {
  const order = createOutcomeOrder();
  const rejected = order.success('A', () => Promise.reject(new Error('db down')));
  await assert.rejects(rejected, /db down/);
  const end = await order.failure('A');
  end();
});
