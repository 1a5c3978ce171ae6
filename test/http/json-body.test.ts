import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { insertCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders, errorBody, errorJson } from '../helpers/http.ts';

/** A body-less action with Content-Type: application/json and an empty body (issue 11, item 3). */
let h: Harness;
let orgId: string;
let email: string;
before(async () => {
  h = await createHarness();
  ({ orgId, email } = await orgWithLogin(h.db, await passwordHash()));
});
after(async () => {
  await h.close();
});

const EMPTY_BODIES = [
  ['application/json', ''],
  ['application/json; charset=utf-8', ''],
  ['application/json', ' \r\n'],
] as const;

test('operator: POST /calls/{id}/trash and /restore with Content-Type: application/json and no body answer 204', async () => {
  const callId = await insertCall(h.db, { orgId });
  for (const [type, payload] of EMPTY_BODIES) {
    for (const action of ['trash', 'restore']) {
      const res = await h.operator.inject({
        method: 'POST',
        url: `/admin/v1/calls/${callId}/${action}`,
        headers: { ...adminHeaders, 'content-type': type },
        payload,
      });
      assert.equal(res.statusCode, 204, `${action} ${JSON.stringify(type)}: ${res.body}`);
      assert.equal(res.body, '');
    }
  }
  const { rows } = await h.db.query<{ trashed_at: Date | null }>(
    'SELECT trashed_at FROM calls WHERE id = $1',
    [callId],
  );
  assert.equal(rows[0].trashed_at, null);
});

test('operator: an operation that needs fields still answers 400 naming them when the JSON body is empty', async () => {
  const res = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: { ...adminHeaders, 'content-type': 'application/json' },
    payload: '',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'BAD_REQUEST',
      'The request body must be a JSON object with the fields name, owner_email, owner_password, country.',
    ),
  );
});

test('console: POST /app/api/logout with Content-Type: application/json and no body answers 204', async () => {
  for (const [type, payload] of EMPTY_BODIES) {
    const c = await login(h, email);
    const res = await h.app.inject({
      method: 'POST',
      url: '/app/api/logout',
      headers: { cookie: c.cookie, 'x-csrf-token': c.csrf, 'content-type': type },
      payload,
    });
    assert.equal(res.statusCode, 204, `${JSON.stringify(type)}: ${res.body}`);
    const after = await h.app.inject({
      method: 'GET',
      url: '/app/api/session',
      headers: { cookie: c.cookie },
    });
    assert.equal(after.statusCode, 401);
  }
});

test('a JSON body with a __proto__ key is still refused (the default parser behind the empty-body rule)', async () => {
  const res = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: { ...adminHeaders, 'content-type': 'application/json' },
    payload: '{"__proto__":{"x":1},"name":"a"}',
  });
  assert.equal(res.statusCode, 400);
  assert.equal(JSON.parse(res.body).error.code, 'BAD_REQUEST');
});
