import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryEventIdStore } from '../src/webhooks/dedupe.ts';

test('the memory store claims an id once and reports the second claim as a duplicate', async () => {
  const store = new MemoryEventIdStore();
  assert.equal(await store.claim('a'), true);
  assert.equal(await store.claim('a'), false);
  assert.equal(await store.claim('b'), true);
});

test('the memory store forgets an id after its time-to-live', async () => {
  let now = 0;
  const store = new MemoryEventIdStore({ ttlMs: 1000, now: () => now });
  assert.equal(await store.claim('a'), true);
  now = 999;
  assert.equal(await store.claim('a'), false);
  now = 1000;
  assert.equal(await store.claim('a'), true);
  assert.equal(store.size, 1);
});

test('the memory store evicts the oldest ids beyond maxEntries', async () => {
  const store = new MemoryEventIdStore({ maxEntries: 2 });
  for (const id of ['a', 'b', 'c']) assert.equal(await store.claim(id), true);
  assert.equal(store.size, 2);
  assert.equal(await store.claim('c'), false);
  assert.equal(await store.claim('a'), true);
});

test('a released claim can be claimed again', async () => {
  const store = new MemoryEventIdStore();
  await store.claim('a');
  await store.release('a');
  assert.equal(await store.claim('a'), true);
});
