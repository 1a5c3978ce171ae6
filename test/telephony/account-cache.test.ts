/**
 * findAccountBySid's short cache (src/capture/telephony/accounts.ts): one call's callbacks read the
 * account once; changing an organization's account takes effect at once in this process — a new
 * token is the one used, and a replaced AccountSid is unknown.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { findAccountBySid, setTelephonyAccount } from '../../src/capture/telephony/accounts.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(() => h.close());

const SID = `AC${'c3'.repeat(16)}`;
const OTHER_SID = `AC${'d4'.repeat(16)}`;

test('a new token, or a new account, is used at once after it is set; an unknown AccountSid stays unknown', async () => {
  const { orgId } = await insertOrg(h.db);
  assert.equal(await findAccountBySid(h.deps, SID), null);
  await setTelephonyAccount(h.deps, orgId, {
    provider: 'twilio',
    accountSid: SID,
    authToken: 'first-token-0001',
  });
  assert.equal((await findAccountBySid(h.deps, SID))?.authToken, 'first-token-0001', 'connected at once');
  assert.equal((await findAccountBySid(h.deps, SID))?.authToken, 'first-token-0001');
  await setTelephonyAccount(h.deps, orgId, {
    provider: 'twilio',
    accountSid: SID,
    authToken: 'second-token-002',
  });
  assert.equal((await findAccountBySid(h.deps, SID))?.authToken, 'second-token-002');
  await setTelephonyAccount(h.deps, orgId, {
    provider: 'twilio',
    accountSid: OTHER_SID,
    authToken: 'third-token-0003',
  });
  assert.equal(await findAccountBySid(h.deps, SID), null, 'the replaced account no longer authenticates');
  const account = await findAccountBySid(h.deps, OTHER_SID);
  assert.deepEqual(account, {
    organizationId: orgId,
    provider: 'twilio',
    accountSid: OTHER_SID,
    authToken: 'third-token-0003',
  });
});
