import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contactDiff, normalizeTags } from '../../src/contacts/diff.ts';

const before = {
  first_name: 'Ana',
  last_name: null,
  email: 'ana@example.com',
  phone: '+14155552671',
  company: null,
  notes: null,
  tags: ['vip'],
};

test('the diff holds only the fields whose value changed', () => {
  assert.deepEqual(contactDiff(before, { first_name: 'Ana', last_name: 'Lopez', email: 'ana@example.com' }), {
    last_name: 'Lopez',
  });
});

test('clearing a field is a change to null', () => {
  assert.deepEqual(contactDiff(before, { email: null }), { email: null });
});

test('tags compare by value, in order', () => {
  assert.deepEqual(contactDiff(before, { tags: ['vip'] }), {});
  assert.deepEqual(contactDiff(before, { tags: ['vip', 'new'] }), { tags: ['vip', 'new'] });
});

test('nothing sent, or everything unchanged, is an empty diff', () => {
  assert.deepEqual(contactDiff(before, {}), {});
  assert.deepEqual(contactDiff(before, { ...before }), {});
});

test('tags are trimmed and de-duplicated case-insensitively, first spelling kept', () => {
  assert.deepEqual(normalizeTags([' VIP ', 'vip', '', 'Lead']), ['VIP', 'Lead']);
});
