import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { AppError, ERROR_STATUS, parseInput } from '../src/errors.ts';

/** The one zod → 400 formatter: its wording is what every body and query check answers. */
const body = z.strictObject({
  name: z.string(),
  scopes: z.array(z.string()).optional(),
  state: z.enum(['active', 'inactive']).optional(),
});

const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'BAD_REQUEST');
    assert.equal(err.status, 400);
    return err.message;
  }
  throw new Error('expected a 400');
};

test('a valid body comes back parsed', () => {
  assert.deepEqual(parseInput(body, { name: 'Acme' }), { name: 'Acme' });
});

test('a missing field is named as required, a wrong one with what it accepts', () => {
  assert.equal(
    messageOf(() => parseInput(body, {})),
    'Field "name" is required (string).',
  );
  assert.equal(
    messageOf(() => parseInput(body, { name: 'Acme', state: 'paused' })),
    'Field "state": Invalid option: expected one of "active"|"inactive".',
  );
});

test('array items are named by index, several issues in one answer', () => {
  assert.equal(
    messageOf(() => parseInput(body, { name: 1, scopes: ['a', 2] })),
    'Field "name": Invalid input: expected string, received number; Field "scopes[1]": Invalid input: expected string, received number.',
  );
});

test('an unknown field lists the accepted ones; a non-object body says what to send', () => {
  assert.equal(
    messageOf(() => parseInput(body, { name: 'Acme', colour: 'red' })),
    'Unknown field "colour"; accepted fields: name, scopes, state.',
  );
  assert.equal(
    messageOf(() => parseInput(body, [])),
    'The request body must be a JSON object with the fields name, scopes, state.',
  );
});

test('query input names the query parameter', () => {
  const query = z.object({ limit: z.coerce.number().int().max(100) });
  assert.equal(
    messageOf(() => parseInput(query, { limit: '500' }, 'query')),
    'Query parameter "limit": Too big: expected number to be <=100.',
  );
});

test('every code has its status; an explicit status is kept', () => {
  assert.equal(new AppError('RATE_LIMITED', 'x').status, ERROR_STATUS.RATE_LIMITED);
  assert.equal(new AppError('SUBSCRIPTION_INACTIVE', 'x').status, 402);
  assert.equal(new AppError('SUBSCRIPTION_INACTIVE', 'x', { status: 409 }).status, 409);
  assert.equal(new AppError('RATE_LIMITED', 'x', { retryAfterSeconds: 7 }).retryAfterSeconds, 7);
});
