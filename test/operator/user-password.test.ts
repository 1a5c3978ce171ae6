import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { login } from '../helpers/app-api.ts';
import { MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, errorBody, errorJson } from '../helpers/http.ts';

/**
 * GET /admin/v1/users?email= and PUT /admin/v1/users/{id}/password: an operator finds a user by
 * e-mail and gives them a new console password (the reset behind `callcap user set-password` and
 * `callcap demo reset-password`). The user signs in with the new password only, and every session
 * opened with the old one ends.
 */
let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

let n = 0;
async function createOrg(password: string) {
  const email = `reset${++n}@example.com`;
  const res = await admin(h, 'POST', '/organizations', {
    name: 'Reset Co',
    owner_email: email,
    owner_password: password,
  });
  assert.equal(res.statusCode, 201, res.body);
  return { ...(res.json() as { organization_id: string; owner_user_id: string }), email };
}

const signIn = (email: string, password: string) =>
  h.app.inject({ method: 'POST', url: '/app/api/login', payload: { email, password } });

test('a new password signs in, the old one no longer does, and the sessions of the old one end', async () => {
  const org = await createOrg('the old password');
  const other = await createOrg('another owner pw');
  const before = await login(h, org.email, 'the old password');
  const bystander = await login(h, other.email, 'another owner pw');

  const res = await admin(h, 'PUT', `/users/${org.owner_user_id}/password`, { password: 'the new password' });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');

  const old = await signIn(org.email, 'the old password');
  assert.equal(old.statusCode, 401);
  assert.deepEqual(errorJson(old), errorBody('UNAUTHORIZED', 'Wrong e-mail or password.'));
  const fresh = await signIn(org.email, 'the new password');
  assert.equal(fresh.statusCode, 200);
  assert.equal(fresh.json().user_id, org.owner_user_id);
  assert.equal(fresh.json().organization_id, org.organization_id);

  assert.equal((await before.get('/app/api/session')).status, 401, 'the session of the old password ended');
  assert.equal((await bystander.get('/app/api/session')).status, 200, "another user's session is untouched");
});

test('a password outside the policy answers 400 and changes nothing', async () => {
  const org = await createOrg('stays the same');
  for (const password of ['short', 'x'.repeat(257)]) {
    const res = await admin(h, 'PUT', `/users/${org.owner_user_id}/password`, { password });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(
      errorJson(res),
      errorBody('BAD_REQUEST', 'Field "password" must be 8 to 256 characters long.', undefined, 'password'),
    );
  }
  const unknown = await admin(h, 'PUT', `/users/${org.owner_user_id}/password`, {
    password: 'long enough',
    email: 'x@example.com',
  });
  assert.equal(unknown.statusCode, 400);
  assert.equal(unknown.json().error.param, 'email');
  const missing = await admin(h, 'PUT', `/users/${org.owner_user_id}/password`, {});
  assert.equal(missing.statusCode, 400);
  assert.equal(missing.json().error.param, 'password');
  assert.equal((await signIn(org.email, 'stays the same')).statusCode, 200);
});

test('an unknown user answers 404 NOT_FOUND', async () => {
  for (const id of [MISSING, 'not-a-uuid']) {
    const res = await admin(h, 'PUT', `/users/${id}/password`, { password: 'long enough' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(errorJson(res), errorBody('NOT_FOUND', `No user ${id}.`));
  }
});

test('without the operator token the password stays', async () => {
  const org = await createOrg('kept password');
  const res = await h.operator.inject({
    method: 'PUT',
    url: `/admin/v1/users/${org.owner_user_id}/password`,
    payload: { password: 'attacker password' },
  });
  assert.equal(res.statusCode, 401);
  assert.equal((await signIn(org.email, 'kept password')).statusCode, 200);
  assert.equal((await signIn(org.email, 'attacker password')).statusCode, 401);
});

test('GET /users?email= finds the one user with that e-mail, in any organization, case-insensitively', async () => {
  const org = await createOrg('whatever pw');
  const res = await admin(h, 'GET', `/users?email=${encodeURIComponent(org.email.toUpperCase())}`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    users: [
      {
        user_id: org.owner_user_id,
        organization_id: org.organization_id,
        email: org.email,
        role: 'owner',
        created_at: '2026-06-15T10:00:00.000Z',
      },
    ],
  });
  const nobody = await admin(h, 'GET', '/users?email=nobody%40example.com');
  assert.equal(nobody.statusCode, 200);
  assert.deepEqual(nobody.json(), { users: [] });
});

test('GET /users without an e-mail, or with something else, answers 400 naming the parameter', async () => {
  for (const [url, param, message] of [
    ['/users', 'email', null],
    [
      '/users?email=not-an-email',
      'email',
      'Field "email" must be an e-mail address such as name@example.com.',
    ],
    ['/users?email=a%40b.example&role=owner', 'role', null],
  ] as const) {
    const res = await admin(h, 'GET', url);
    assert.equal(res.statusCode, 400, url);
    const error = res.json().error;
    assert.equal(error.code, 'BAD_REQUEST', url);
    assert.equal(error.param, param, url);
    if (message) assert.equal(error.message, message);
  }
});
