import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { orgWithLogin, PASSWORD, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let email: string;

before(async () => {
  h = await createHarness({ PUBLIC_BASE_URL: 'http://localhost:3000' });
  ({ email } = await orgWithLogin(h.db, await passwordHash()));
});
after(() => h.close());

test('behind a plain-http origin the session cookie is not marked Secure', async () => {
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/api/login',
    payload: { email, password: PASSWORD },
  });
  assert.equal(res.statusCode, 200);
  assert.match(
    res.headers['set-cookie'] as string,
    /^cc_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/$/,
  );
});
