import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hashApiKey } from '../../src/accounts/api-key-format.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { insertApiKey, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let c: ConsoleClient;

before(async () => {
  h = await createHarness();
  const { email } = await orgWithLogin(h.db, await passwordHash());
  c = await login(h, email);
});
after(() => h.close());

test('POST /api-keys answers 201 with the key once; the row stores only its hash, owned by the session user', async () => {
  const res = await c.post('/app/api/api-keys', {
    name: 'CRM sync',
    scopes: ['read.calls', 'read.recordings'],
  });
  assert.equal(res.status, 201);
  assert.deepEqual(Object.keys(res.json).sort(), ['api_key_id', 'environment', 'key']);
  assert.match(res.json.key, /^cc_live_[A-Za-z0-9_-]{43}$/);
  const { rows } = await h.db.query<{
    key_hash: string;
    user_id: string;
    organization_id: string;
    scopes: string[];
    name: string;
  }>('SELECT key_hash, user_id, organization_id, scopes, name FROM api_keys WHERE id = $1', [
    res.json.api_key_id,
  ]);
  assert.equal(rows[0]?.key_hash, hashApiKey(res.json.key));
  assert.equal(rows[0]?.user_id, c.userId);
  assert.equal(rows[0]?.organization_id, c.orgId);
  assert.deepEqual(rows[0]?.scopes, ['read.calls', 'read.recordings']);
  assert.equal(rows[0]?.name, 'CRM sync');
});

test("GET /api-keys lists the organization's keys as {items}, never the key or its hash", async () => {
  const created = await c.post('/app/api/api-keys', { scopes: ['read.calls'] });
  const res = await c.get('/app/api/api-keys');
  assert.equal(res.status, 200);
  assert.ok(Array.isArray(res.json.items));
  const item = res.json.items.find((k: { api_key_id: string }) => k.api_key_id === created.json.api_key_id);
  assert.ok(item);
  assert.deepEqual(item.scopes, ['read.calls']);
  assert.equal(item.revoked, false);
  const text = JSON.stringify(res.json);
  assert.ok(!text.includes(created.json.key));
  assert.ok(!text.includes(hashApiKey(created.json.key)));
  assert.ok(!('key' in item) && !('key_hash' in item));
});

test("GET /api-keys does not list another organization's keys", async () => {
  const other = await insertOrg(h.db);
  const { keyId } = await insertApiKey(h.db, { orgId: other.orgId, userId: other.ownerId });
  const res = await c.get('/app/api/api-keys');
  assert.ok(!res.json.items.some((k: { api_key_id: string }) => k.api_key_id === keyId));
});

test('POST /api-keys with an unknown scope answers 400 BAD_REQUEST naming it', async () => {
  const res = await c.post('/app/api/api-keys', { scopes: ['read.everything'] });
  assert.equal(res.status, 400);
  assert.equal(res.json.error.code, 'BAD_REQUEST');
  assert.match(res.json.error.message, /read\.everything/);
});

test('POST /api-keys without scopes answers 400 BAD_REQUEST', async () => {
  const res = await c.post('/app/api/api-keys', { name: 'x' });
  assert.equal(res.status, 400);
  assert.match(res.json.error.message, /scopes/);
});

test('DELETE /api-keys/:id answers 204 and revokes the key', async () => {
  const created = await c.post('/app/api/api-keys', { scopes: ['read.calls'] });
  const res = await c.del(`/app/api/api-keys/${created.json.api_key_id}`);
  assert.equal(res.status, 204);
  const { rows } = await h.db.query<{ revoked_at: Date | null }>(
    'SELECT revoked_at FROM api_keys WHERE id = $1',
    [created.json.api_key_id],
  );
  assert.ok(rows[0]?.revoked_at instanceof Date);
  const list = await c.get('/app/api/api-keys');
  const item = list.json.items.find((k: { api_key_id: string }) => k.api_key_id === created.json.api_key_id);
  assert.equal(item.revoked, true);
});

test("DELETE of another organization's key answers 404 NOT_FOUND and leaves it alone", async () => {
  const other = await insertOrg(h.db);
  const { keyId } = await insertApiKey(h.db, { orgId: other.orgId, userId: other.ownerId });
  const res = await c.del(`/app/api/api-keys/${keyId}`);
  assert.equal(res.status, 404);
  assert.equal(res.json.error.code, 'NOT_FOUND');
  const { rows } = await h.db.query<{ revoked_at: Date | null }>(
    'SELECT revoked_at FROM api_keys WHERE id = $1',
    [keyId],
  );
  assert.equal(rows[0]?.revoked_at, null);
});

test('DELETE of an id that is not a UUID answers 404 NOT_FOUND', async () => {
  assert.equal((await c.del('/app/api/api-keys/nope')).status, 404);
});
