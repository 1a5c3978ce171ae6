import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { migrate, splitSql } from '../../src/db/migrate.ts';
import type { Db } from '../../src/db/types.ts';
import { createTestDb, engine } from '../helpers/db.ts';

let db: Db;
before(async () => {
  db = await createTestDb({ fresh: true });
});
after(async () => {
  await db.close();
});

test(`migrating an empty ${engine} database creates every table`, async () => {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  assert.deepEqual(
    rows.map((r) => r.table_name),
    [
      'api_keys',
      'call_analyses',
      'calls',
      'contacts',
      'email_outbox',
      'events',
      'idempotency_keys',
      'invitations',
      'organizations',
      'password_reset_tokens',
      'phone_numbers',
      'processing_job_outcomes',
      'processing_jobs',
      'rate_limit_windows',
      'schema_migrations',
      'secret_reveals',
      'sessions',
      'settings',
      'simulated_calls',
      'telephony_accounts',
      'telephony_callbacks',
      'trackers',
      'users',
      'webhook_attempts',
      'webhook_call_reach',
      'webhook_deliveries',
      'webhook_secrets',
      'webhook_subscriptions',
    ],
  );
});

test('migrating twice applies nothing the second time', async () => {
  assert.deepEqual(await migrate(db), []);
});

test('splitSql keeps dollar-quoted bodies whole and drops comment lines', () => {
  const parts = splitSql('-- c\nCREATE TABLE a (x int);\nDO $$ BEGIN\n PERFORM 1;\nEND $$;\nSELECT 2;');
  assert.deepEqual(parts, ['CREATE TABLE a (x int)', 'DO $$ BEGIN\n PERFORM 1;\nEND $$', 'SELECT 2']);
});
