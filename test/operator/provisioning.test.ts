import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hashApiKey } from '../../src/accounts/api-key-format.ts';
import { verifyPassword } from '../../src/accounts/passwords.ts';
import { newId } from '../../src/ids.ts';
import { ADMIN_TOKEN, T0 } from '../helpers/deps.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, errorBody, errorJson } from '../helpers/http.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let n = 0;
const email = () => `user${++n}@example.com`;

async function createOrg(extra: Record<string, unknown> = {}) {
  const res = await admin(h, 'POST', '/organizations', {
    name: 'Acme Plumbing',
    owner_email: email(),
    owner_password: 'correct horse battery',
    ...extra,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { organization_id: string; owner_user_id: string };
}

const count = async (table: string) =>
  (await h.db.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)).rows[0].n;

// --- POST /organizations ---------------------------------------------------------------------------

test('POST /organizations creates the organization and its owner and answers 201 with both ids', async () => {
  const res = await admin(h, 'POST', '/organizations', {
    name: 'Bright Electric',
    owner_email: 'Owner@Bright.example',
    owner_password: 'correct horse battery',
    country: 'gb',
  });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['organization_id', 'owner_user_id']);
  assert.match(body.organization_id, UUID_RE);
  assert.match(body.owner_user_id, UUID_RE);
  const org = await h.db.query<{ name: string; country: string; entitlement: string; created_at: Date }>(
    'SELECT name, country, entitlement, created_at FROM organizations WHERE id = $1',
    [body.organization_id],
  );
  assert.deepEqual(org.rows[0], {
    name: 'Bright Electric',
    country: 'GB',
    entitlement: 'active',
    created_at: new Date(T0),
  });
  const user = await h.db.query<{
    organization_id: string;
    email: string;
    role: string;
    password_hash: string;
  }>('SELECT organization_id, email, role, password_hash FROM users WHERE id = $1', [body.owner_user_id]);
  assert.equal(user.rows[0].organization_id, body.organization_id);
  assert.equal(user.rows[0].email, 'owner@bright.example');
  assert.equal(user.rows[0].role, 'owner');
  assert.match(user.rows[0].password_hash, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
  assert.equal(await verifyPassword('correct horse battery', user.rows[0].password_hash), true);
  assert.equal(await verifyPassword('correct horse batterY', user.rows[0].password_hash), false);
});

test('POST /organizations without a name answers 400 BAD_REQUEST naming the field', async () => {
  const res = await admin(h, 'POST', '/organizations', {
    owner_email: email(),
    owner_password: 'long-enough',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody('BAD_REQUEST', 'Field "name" is required (string).', T0, 'name'),
  );
});

test('POST /organizations with a malformed owner_email answers 400 naming owner_email and creates nothing', async () => {
  const before = await count('organizations');
  const res = await admin(h, 'POST', '/organizations', {
    name: 'X',
    owner_email: 'nope',
    owner_password: 'long-enough',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Field "owner_email" must be an e-mail address such as name@example.com.',
      T0,
      'owner_email',
    ),
  );
  assert.equal(await count('organizations'), before);
});

test('POST /organizations with a short owner_password answers 400 naming owner_password', async () => {
  const res = await admin(h, 'POST', '/organizations', {
    name: 'X',
    owner_email: email(),
    owner_password: 'short',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Field "owner_password" must be 8 to 256 characters long.',
      T0,
      'owner_password',
    ),
  );
});

test('POST /organizations with an unknown country answers 400 naming country', async () => {
  const res = await admin(h, 'POST', '/organizations', {
    name: 'X',
    owner_email: email(),
    owner_password: 'long-enough',
    country: 'ZZ',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Field "country" must be an ISO 3166-1 alpha-2 country code such as "US" or "GB".',
      T0,
      'country',
    ),
  );
});

test('POST /organizations with an unknown field answers 400 naming it and the accepted fields', async () => {
  const res = await admin(h, 'POST', '/organizations', {
    name: 'X',
    owner_email: email(),
    owner_password: 'long-enough',
    ownerEmail: 'x@example.com',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Unknown field "ownerEmail"; accepted fields: name, owner_email, owner_password, country.',
      T0,
      'ownerEmail',
    ),
  );
});

test('POST /organizations whose owner e-mail is taken (any case) answers 409 CONFLICT and rolls back', async () => {
  await createOrg({ owner_email: 'taken@example.com' });
  const before = await count('organizations');
  const res = await admin(h, 'POST', '/organizations', {
    name: 'Second',
    owner_email: 'TAKEN@example.com',
    owner_password: 'long-enough',
  });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(
    errorJson(res),
    errorBody('CONFLICT', 'A user with this e-mail already exists; choose another e-mail address.'),
  );
  assert.equal(await count('organizations'), before);
});

test('a malformed JSON body answers 400 BAD_REQUEST in the error shape', async () => {
  const res = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    payload: '{"name": "Acme",',
  });
  assert.equal(res.statusCode, 400);
  const body = res.json();
  assert.equal(body.success, false);
  assert.equal(body.error.code, 'BAD_REQUEST');
  assert.equal(typeof body.error.message, 'string');
  assert.deepEqual(body.meta, { timestamp: T0, request_id: res.headers['x-request-id'] });
});

test('a body that is not a JSON object answers 400 naming the expected fields', async () => {
  const res = await admin(h, 'POST', '/organizations', ['x']);
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'The request body must be a JSON object with the fields name, owner_email, owner_password, country.',
    ),
  );
});

// --- PATCH /organizations/{org} --------------------------------------------------------------------

test('PATCH /organizations/{org} applies every setting and answers 200 with the current settings', async () => {
  const { organization_id } = await createOrg({ country: 'US' });
  const res = await admin(h, 'PATCH', `/organizations/${organization_id}`, {
    entitlement: 'inactive',
    retention_days: 30,
    account_rate_limit_per_hour: 120,
    max_active_subscriptions: 0,
    country: 'ca',
  });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    organization_id,
    name: 'Acme Plumbing',
    entitlement: 'inactive',
    retention_days: 30,
    account_rate_limit_per_hour: 120,
    max_active_subscriptions: 0,
    country: 'CA',
    language: 'en',
    recording_consent: { enabled: false, text: null, language: null },
    redaction_enabled: true,
    created_at: T0,
  });
});

test('PATCH /organizations/{org} changes only the keys sent; retention_days null means keep forever', async () => {
  const { organization_id } = await createOrg();
  await admin(h, 'PATCH', `/organizations/${organization_id}`, { retention_days: 90 });
  const res = await admin(h, 'PATCH', `/organizations/${organization_id}`, { retention_days: null });
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.equal(body.retention_days, null);
  assert.equal(body.entitlement, 'active');
  assert.equal(body.account_rate_limit_per_hour, 5000);
  assert.equal(body.max_active_subscriptions, 20);
});

test('PATCH /organizations/{org} with an empty body answers 400 listing the settings', async () => {
  const { organization_id } = await createOrg();
  const res = await admin(h, 'PATCH', `/organizations/${organization_id}`, {});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Send at least one setting to change: name, entitlement, retention_days, account_rate_limit_per_hour, max_active_subscriptions, country, recording_consent, redaction_enabled.',
    ),
  );
});

test('PATCH /organizations/{org} with an unknown entitlement answers 400 naming entitlement', async () => {
  const { organization_id } = await createOrg();
  const res = await admin(h, 'PATCH', `/organizations/${organization_id}`, { entitlement: 'paused' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Field "entitlement": Invalid option: expected one of "active"|"inactive".',
      T0,
      'entitlement',
    ),
  );
});

test('PATCH /organizations/{org} with non-positive or fractional numbers answers 400 naming each field', async () => {
  const { organization_id } = await createOrg();
  for (const [field, value] of [
    ['retention_days', 0],
    ['account_rate_limit_per_hour', 1.5],
    ['max_active_subscriptions', -1],
    ['account_rate_limit_per_hour', '100'],
  ] as const) {
    const res = await admin(h, 'PATCH', `/organizations/${organization_id}`, { [field]: value });
    assert.equal(res.statusCode, 400, `${field}=${value}`);
    assert.match(res.json().error.message, new RegExp(`^Field "${field}": `));
  }
});

test('PATCH /organizations/{org} of an unknown organization answers 404 NOT_FOUND', async () => {
  const id = newId();
  const res = await admin(h, 'PATCH', `/organizations/${id}`, { entitlement: 'inactive' });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(errorJson(res), errorBody('NOT_FOUND', `No organization ${id}.`));
  const bad = await admin(h, 'PATCH', '/organizations/not-a-uuid', { entitlement: 'inactive' });
  assert.equal(bad.statusCode, 404);
  assert.deepEqual(errorJson(bad), errorBody('NOT_FOUND', 'No organization not-a-uuid.'));
});

test('GET /organizations/{org} answers the current settings', async () => {
  const { organization_id } = await createOrg({ country: 'US' });
  const res = await admin(h, 'GET', `/organizations/${organization_id}`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().country, 'US');
  assert.equal((await admin(h, 'GET', `/organizations/${newId()}`)).statusCode, 404);
});

// --- POST /organizations/{org}/users ---------------------------------------------------------------

test('POST /organizations/{org}/users creates a member and answers 201 {user_id}', async () => {
  const { organization_id } = await createOrg();
  const res = await admin(h, 'POST', `/organizations/${organization_id}/users`, {
    email: 'Member@Example.com',
    password: 'member-password',
  });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['user_id']);
  const { rows } = await h.db.query<{ organization_id: string; email: string; role: string }>(
    'SELECT organization_id, email, role FROM users WHERE id = $1',
    [body.user_id],
  );
  assert.deepEqual(rows[0], { organization_id, email: 'member@example.com', role: 'admin' });
});

test('POST /organizations/{org}/users with an e-mail already used answers 409 CONFLICT', async () => {
  const { organization_id } = await createOrg();
  await admin(h, 'POST', `/organizations/${organization_id}/users`, {
    email: 'twice@example.com',
    password: 'long-enough',
  });
  const res = await admin(h, 'POST', `/organizations/${organization_id}/users`, {
    email: ' Twice@Example.com ',
    password: 'long-enough',
  });
  assert.equal(res.statusCode, 409);
  assert.equal(res.json().error.code, 'CONFLICT');
});

test('POST /organizations/{org}/users with bad fields answers 400 naming them', async () => {
  const { organization_id } = await createOrg();
  const missing = await admin(h, 'POST', `/organizations/${organization_id}/users`, { email: email() });
  assert.equal(missing.statusCode, 400);
  assert.deepEqual(
    errorJson(missing),
    errorBody('BAD_REQUEST', 'Field "password" is required (string).', T0, 'password'),
  );
  const badEmail = await admin(h, 'POST', `/organizations/${organization_id}/users`, {
    email: 'a@b',
    password: 'long-enough',
  });
  assert.equal(badEmail.statusCode, 400);
  assert.deepEqual(
    errorJson(badEmail),
    errorBody(
      'BAD_REQUEST',
      'Field "email" must be an e-mail address such as name@example.com.',
      T0,
      'email',
    ),
  );
});

test('POST /organizations/{org}/users of an unknown organization answers 404', async () => {
  const id = newId();
  const res = await admin(h, 'POST', `/organizations/${id}/users`, {
    email: email(),
    password: 'long-enough',
  });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(errorJson(res), errorBody('NOT_FOUND', `No organization ${id}.`));
});

// --- POST /organizations/{org}/api-keys ------------------------------------------------------------

test('POST /organizations/{org}/api-keys answers 201 {api_key_id, key} and stores only the hash, for the owner', async () => {
  const { organization_id, owner_user_id } = await createOrg();
  const res = await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, {
    scopes: ['read.calls', 'read.recordings', 'read.calls'],
  });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['api_key_id', 'environment', 'key']);
  assert.equal(body.environment, 'live');
  assert.match(body.key, /^cc_live_[A-Za-z0-9_-]{43}$/);
  const { rows } = await h.db.query<Record<string, unknown>>(
    'SELECT organization_id, user_id, name, prefix, key_hash, scopes, rate_limit_per_hour, revoked_at FROM api_keys WHERE id = $1',
    [body.api_key_id],
  );
  assert.deepEqual(rows[0], {
    organization_id,
    user_id: owner_user_id,
    name: null,
    prefix: body.key.slice(0, 12),
    key_hash: hashApiKey(body.key),
    scopes: ['read.calls', 'read.recordings'],
    rate_limit_per_hour: 1000,
    revoked_at: null,
  });
});

test('POST /organizations/{org}/api-keys for a member with a name and rate limit stores them', async () => {
  const { organization_id } = await createOrg();
  const user = (
    await admin(h, 'POST', `/organizations/${organization_id}/users`, {
      email: email(),
      password: 'long-enough',
    })
  ).json();
  const res = await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, {
    scopes: ['read.calls', 'manage.webhooks'],
    user_id: user.user_id,
    rate_limit_per_hour: 60,
    name: 'CRM sync',
  });
  assert.equal(res.statusCode, 201);
  const { rows } = await h.db.query<Record<string, unknown>>(
    'SELECT user_id, name, scopes, rate_limit_per_hour FROM api_keys WHERE id = $1',
    [res.json().api_key_id],
  );
  assert.deepEqual(rows[0], {
    user_id: user.user_id,
    name: 'CRM sync',
    scopes: ['read.calls', 'manage.webhooks'],
    rate_limit_per_hour: 60,
  });
});

test('POST /organizations/{org}/api-keys with an unknown scope answers 400 naming the scope', async () => {
  const { organization_id } = await createOrg();
  const res = await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, {
    scopes: ['read.calls', 'read.everything'],
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Unknown scope "read.everything" in "scopes"; known scopes: read.calls, read.recordings, write.calls, read.contacts, write.contacts, manage.webhooks, manage.api_keys.',
      T0,
      'scopes',
    ),
  );
});

test('POST /organizations/{org}/api-keys with no scopes answers 400 naming scopes', async () => {
  const { organization_id } = await createOrg();
  const empty = await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, { scopes: [] });
  assert.equal(empty.statusCode, 400);
  assert.match(empty.json().error.message, /^Field "scopes" must list at least one scope/);
  const missing = await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, {});
  assert.equal(missing.statusCode, 400);
  assert.deepEqual(
    errorJson(missing),
    errorBody('BAD_REQUEST', 'Field "scopes" is required (array).', T0, 'scopes'),
  );
  const notStrings = await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, {
    scopes: ['read.calls', 7],
  });
  assert.equal(notStrings.statusCode, 400);
  assert.match(notStrings.json().error.message, /^Field "scopes\[1\]": /);
});

test('POST /organizations/{org}/api-keys with a non-positive rate limit answers 400', async () => {
  const { organization_id } = await createOrg();
  const res = await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, {
    scopes: ['read.calls'],
    rate_limit_per_hour: 0,
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.json().error.message, /^Field "rate_limit_per_hour": /);
});

test('POST /organizations/{org}/api-keys for a user of another organization answers 404 and creates no key', async () => {
  const a = await createOrg();
  const b = await createOrg();
  const before = await count('api_keys');
  const res = await admin(h, 'POST', `/organizations/${a.organization_id}/api-keys`, {
    scopes: ['read.calls'],
    user_id: b.owner_user_id,
  });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'NOT_FOUND',
      `No user ${b.owner_user_id} in organization ${a.organization_id}; "user_id" must name one of its users.`,
    ),
  );
  assert.equal(await count('api_keys'), before);
});

test('POST /organizations/{org}/api-keys of an unknown organization answers 404', async () => {
  const id = newId();
  const res = await admin(h, 'POST', `/organizations/${id}/api-keys`, { scopes: ['read.calls'] });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(errorJson(res), errorBody('NOT_FOUND', `No organization ${id}.`));
});

test('GET /organizations/{org}/api-keys lists keys without the key or its hash', async () => {
  const { organization_id, owner_user_id } = await createOrg();
  const created = (
    await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, {
      scopes: ['read.calls'],
      name: 'n1',
    })
  ).json();
  const res = await admin(h, 'GET', `/organizations/${organization_id}/api-keys`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    api_keys: [
      {
        api_key_id: created.api_key_id,
        user_id: owner_user_id,
        name: 'n1',
        environment: 'live',
        prefix: created.key.slice(0, 12),
        scopes: ['read.calls'],
        rate_limit_per_hour: 1000,
        created_at: T0,
        last_used_at: null,
        revoked: false,
        revoked_at: null,
      },
    ],
  });
  assert.equal(res.body.includes(created.key), false);
});

// --- DELETE /api-keys/{id} -------------------------------------------------------------------------

test('DELETE /api-keys/{id} answers 204 with no body, sets revoked_at, and answers 204 again', async () => {
  const { organization_id } = await createOrg();
  const { api_key_id } = (
    await admin(h, 'POST', `/organizations/${organization_id}/api-keys`, { scopes: ['read.calls'] })
  ).json();
  const res = await admin(h, 'DELETE', `/api-keys/${api_key_id}`);
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  const { rows } = await h.db.query<{ revoked_at: Date }>('SELECT revoked_at FROM api_keys WHERE id = $1', [
    api_key_id,
  ]);
  assert.deepEqual(rows[0].revoked_at, new Date(T0));
  h.clock.advance(60_000);
  assert.equal((await admin(h, 'DELETE', `/api-keys/${api_key_id}`)).statusCode, 204);
  const again = await h.db.query<{ revoked_at: Date }>('SELECT revoked_at FROM api_keys WHERE id = $1', [
    api_key_id,
  ]);
  assert.deepEqual(again.rows[0].revoked_at, new Date(T0), 'the first revocation time is kept');
  h.clock.set(T0);
});

test('DELETE /api-keys/{id} of an unknown key answers 404', async () => {
  const id = newId();
  const res = await admin(h, 'DELETE', `/api-keys/${id}`);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(errorJson(res), errorBody('NOT_FOUND', `No API key ${id}.`));
  assert.equal((await admin(h, 'DELETE', '/api-keys/123')).statusCode, 404);
});

// --- PUT /maintenance ------------------------------------------------------------------------------

test('PUT /maintenance stores the switch and answers 200 {public_api_enabled}', async () => {
  const off = await admin(h, 'PUT', '/maintenance', { public_api_enabled: false });
  assert.equal(off.statusCode, 200);
  assert.deepEqual(off.json(), { public_api_enabled: false });
  const stored = await h.db.query<{ value: unknown }>(
    `SELECT value FROM settings WHERE key = 'public_api_enabled'`,
  );
  assert.deepEqual(stored.rows, [{ value: false }]);
  const on = await admin(h, 'PUT', '/maintenance', { public_api_enabled: true });
  assert.deepEqual(on.json(), { public_api_enabled: true });
  const again = await h.db.query<{ value: unknown }>(
    `SELECT value FROM settings WHERE key = 'public_api_enabled'`,
  );
  assert.deepEqual(again.rows, [{ value: true }]);
});

test('PUT /maintenance with a non-boolean answers 400 naming public_api_enabled', async () => {
  const res = await admin(h, 'PUT', '/maintenance', { public_api_enabled: 'off' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'Field "public_api_enabled": Invalid input: expected boolean, received string.',
      T0,
      'public_api_enabled',
    ),
  );
});

// --- POST /organizations/{org}/trackers ------------------------------------------------------------

test('POST /organizations/{org}/trackers answers 201 {tracker_id} and stores trimmed, distinct terms', async () => {
  const { organization_id } = await createOrg();
  const res = await admin(h, 'POST', `/organizations/${organization_id}/trackers`, {
    name: 'Churn risk',
    terms: [' cancel ', 'refund', 'Cancel'],
  });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['tracker_id']);
  const { rows } = await h.db.query<Record<string, unknown>>(
    'SELECT organization_id, name, terms FROM trackers WHERE id = $1',
    [body.tracker_id],
  );
  assert.deepEqual(rows[0], { organization_id, name: 'Churn risk', terms: ['cancel', 'refund'] });
});

test('POST /organizations/{org}/trackers without terms answers 400 naming terms', async () => {
  const { organization_id } = await createOrg();
  const empty = await admin(h, 'POST', `/organizations/${organization_id}/trackers`, {
    name: 'T',
    terms: [],
  });
  assert.equal(empty.statusCode, 400);
  assert.deepEqual(
    errorJson(empty),
    errorBody(
      'BAD_REQUEST',
      'Field "terms" must list 1 to 50 terms, e.g. ["refund", "cancel"].',
      T0,
      'terms',
    ),
  );
  const missing = await admin(h, 'POST', `/organizations/${organization_id}/trackers`, { name: 'T' });
  assert.deepEqual(
    errorJson(missing),
    errorBody('BAD_REQUEST', 'Field "terms" is required (array).', T0, 'terms'),
  );
});

test('POST /organizations/{org}/trackers of an unknown organization answers 404', async () => {
  const { orgId } = await insertOrg(h.db);
  assert.equal(
    (await admin(h, 'POST', `/organizations/${orgId}/trackers`, { name: 'T', terms: ['x'] })).statusCode,
    201,
  );
  const id = newId();
  const res = await admin(h, 'POST', `/organizations/${id}/trackers`, { name: 'T', terms: ['x'] });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(errorJson(res), errorBody('NOT_FOUND', `No organization ${id}.`));
});
