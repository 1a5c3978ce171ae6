/** src/queue.ts kickedRounds: one round at a time, no wake-up lost, errors reported, stop waits. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kickedRounds } from '../src/queue.ts';

/** A round the test lets finish: resolves with what `release` is given. */
function gate() {
  const rounds: ((more: boolean) => void)[] = [];
  return {
    round: () => new Promise<boolean>((resolve) => rounds.push(resolve)),
    started: () => rounds.length,
    release: (i: number, more = false) => rounds[i]!(more),
  };
}
const tick = () => new Promise<void>((r) => setImmediate(r));

test('kicks during a round run exactly one more round after it; a full round runs again at once', async () => {
  const g = gate();
  const errors: Error[] = [];
  const r = kickedRounds({ round: g.round, onError: (e) => errors.push(e) });
  r.kick();
  r.kick(); // started on the next microtask: still one round
  await tick();
  assert.equal(g.started(), 1);
  r.kick();
  r.kick();
  await tick();
  assert.equal(g.started(), 1, 'no second round beside the first');
  g.release(0);
  await tick();
  assert.equal(g.started(), 2, 'the kicks during the round: one more');
  g.release(1, true);
  await tick();
  assert.equal(g.started(), 3, 'a full round: again');
  g.release(2);
  await tick();
  assert.equal(g.started(), 3, 'idle until the next kick');
  r.kick();
  await tick();
  assert.equal(g.started(), 4);
  const stopped = r.stop();
  let done = false;
  void stopped.then(() => {
    done = true;
  });
  await tick();
  assert.equal(done, false, 'stop waits for the round in progress');
  g.release(3, true);
  await stopped;
  r.kick();
  await tick();
  assert.equal(g.started(), 4, 'nothing after stop');
  assert.deepEqual(errors, []);
});

test('a round that throws (even synchronously) is reported and the next kick starts again', async () => {
  const errors: string[] = [];
  let n = 0;
  const r = kickedRounds({
    round: () => {
      n++;
      if (n === 1) throw new Error('sync');
      if (n === 2) return Promise.reject(new Error('async'));
      return Promise.resolve(false);
    },
    onError: (e) => errors.push(e.message),
  });
  for (let i = 0; i < 3; i++) {
    r.kick();
    await tick();
  }
  assert.equal(n, 3);
  assert.deepEqual(errors, ['sync', 'async']);
  await r.stop();
});
