import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, errorBody, errorJson } from '../helpers/http.ts';

/** GET /admin/v1/organizations (list, paged) and GET /admin/v1/organizations/{org}/users. */
let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

async function createOrg(name: string, at: string) {
  h.clock.set(at);
  const res = await admin(h, 'POST', '/organizations', {
    name,
    owner_email: `${name.toLowerCase()}@example.com`,
    owner_password: 'long-enough',
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { organization_id: string; owner_user_id: string };
}

test('organizations are listed oldest first, a page at a time, with has_more', async () => {
  const a = await createOrg('Alpha', '2026-06-15T10:00:00.000Z');
  const b = await createOrg('Bravo', '2026-06-15T10:00:01.000Z');
  const c = await createOrg('Charlie', '2026-06-15T10:00:02.000Z');

  const first = await admin(h, 'GET', '/organizations?limit=2');
  assert.equal(first.statusCode, 200);
  const body = first.json();
  assert.deepEqual(Object.keys(body), ['items', 'has_more', 'page', 'limit']);
  assert.deepEqual(
    body.items.map((o: { organization_id: string }) => o.organization_id),
    [a.organization_id, b.organization_id],
  );
  assert.equal(body.has_more, true);
  assert.equal(body.page, 1);
  assert.equal(body.limit, 2);
  assert.deepEqual(body.items[0], {
    organization_id: a.organization_id,
    name: 'Alpha',
    entitlement: 'active',
    retention_days: null,
    account_rate_limit_per_hour: 5000,
    max_active_subscriptions: 20,
    country: null,
    language: 'en',
    recording_consent: { enabled: false, text: null, language: null },
    redaction_enabled: true,
    created_at: '2026-06-15T10:00:00.000Z',
  });

  const second = (await admin(h, 'GET', '/organizations?limit=2&page=2')).json();
  assert.deepEqual(
    second.items.map((o: { organization_id: string }) => o.organization_id),
    [c.organization_id],
  );
  assert.equal(second.has_more, false);
  const all = (await admin(h, 'GET', '/organizations')).json();
  assert.equal(all.limit, 50);
  assert.equal(all.items.length, 3);
});

test('a bad page or limit answers 400 naming the parameter', async () => {
  for (const [query, param] of [
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['page=0', 'page'],
    ['page=x', 'page'],
  ]) {
    const res = await admin(h, 'GET', `/organizations?${query}`);
    assert.equal(res.statusCode, 400, query);
    const e = errorJson(res) as ReturnType<typeof errorBody>;
    assert.equal(e.error.code, 'BAD_REQUEST');
    assert.equal(e.error.param, param, query);
  }
  const unknown = await admin(h, 'GET', '/organizations?sort=name');
  assert.equal(unknown.statusCode, 400);
});

test("an organization's users are listed owner first, without password hashes", async () => {
  const org = await createOrg('Delta', '2026-06-15T11:00:00.000Z');
  h.clock.set('2026-06-15T11:00:05.000Z');
  const member = await admin(h, 'POST', `/organizations/${org.organization_id}/users`, {
    email: 'member@delta.example',
    password: 'long-enough',
  });
  assert.equal(member.statusCode, 201);
  const res = await admin(h, 'GET', `/organizations/${org.organization_id}/users`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    users: [
      {
        user_id: org.owner_user_id,
        email: 'delta@example.com',
        role: 'owner',
        created_at: '2026-06-15T11:00:00.000Z',
      },
      {
        user_id: member.json().user_id,
        email: 'member@delta.example',
        role: 'admin',
        created_at: '2026-06-15T11:00:05.000Z',
      },
    ],
  });
  const missing = await admin(h, 'GET', `/organizations/${MISSING}/users`);
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(
    errorJson(missing),
    errorBody('NOT_FOUND', `No organization ${MISSING}.`, '2026-06-15T11:00:05.000Z'),
  );
  const notAnId = await admin(h, 'GET', '/organizations/nope/users');
  assert.equal(notAnId.statusCode, 404);
});

test('both lists need the operator token', async () => {
  for (const url of ['/admin/v1/organizations', `/admin/v1/organizations/${MISSING}/users`]) {
    const res = await h.operator.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 401, url);
  }
});
