import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getOrganization, updateOrganization } from '../../src/accounts/organizations.ts';
import { createTracker, deleteTracker, listTrackers, updateTracker } from '../../src/accounts/trackers.ts';
import { createContact, getContact, listContacts, updateContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { insertOrg, MISSING } from '../helpers/fixtures.ts';
import { createEnv, type Env } from '../helpers/webhooks.ts';

/** The services behind the settings pages: trackers, the account language, contacts of one organization. */
let env: Env;
let org: string;
let other: string;

before(async () => {
  env = await createEnv();
  org = (await insertOrg(env.db)).orgId;
  other = (await insertOrg(env.db)).orgId;
});
after(() => env.close());

test('trackers: list by name, update name and terms, delete; another organization sees 404 / false', async () => {
  const now = env.clock.now();
  const { tracker_id: b } = await createTracker(env.db, {
    organizationId: org,
    name: 'beta',
    terms: ['x'],
    now,
  });
  await createTracker(env.db, { organizationId: org, name: 'Alpha', terms: ['y'], now });
  assert.deepEqual(
    (await listTrackers(env.db, org)).map((t) => t.name),
    ['Alpha', 'beta'],
  );
  const u = await updateTracker(env.db, {
    organizationId: org,
    trackerId: b,
    name: ' Churn ',
    terms: ['cancel', 'Cancel', ' refund '],
  });
  assert.deepEqual([u.name, u.terms], ['Churn', ['cancel', 'refund']]);
  await assert.rejects(
    updateTracker(env.db, { organizationId: other, trackerId: b, name: 'x', terms: ['x'] }),
    { code: 'NOT_FOUND' },
  );
  await assert.rejects(updateTracker(env.db, { organizationId: org, trackerId: b, name: 'x', terms: [] }), {
    code: 'BAD_REQUEST',
  });
  assert.equal(await deleteTracker(env.db, other, b), false);
  assert.equal(await deleteTracker(env.db, org, 'not-a-uuid'), false);
  assert.equal(await deleteTracker(env.db, org, b), true);
  assert.deepEqual(
    (await listTrackers(env.db, org)).map((t) => t.name),
    ['Alpha'],
  );
});

test('organization language: one of the analyzer languages, stored lower-case', async () => {
  assert.equal((await updateOrganization(env.db, org, { language: ' FR ' })).language, 'fr');
  await assert.rejects(updateOrganization(env.db, org, { language: 'xx' }), {
    code: 'BAD_REQUEST',
    message: 'Field "language" must be one of en, de, fr, es.',
  });
  assert.equal((await getOrganization(env.db, org))?.language, 'fr');
});

test('contacts: listed and read per organization, searched, edited only within it', async () => {
  const { contact_id: id } = await createContact(env.deps, tenantScope(org), {
    phone: '+14155550123',
    first_name: 'Ana',
    company: '50%_Off',
  });
  await createContact(env.deps, tenantScope(org), { phone: '+14155550124', first_name: 'Ben' });
  assert.equal((await listContacts(env.db, tenantScope(org), { limit: 10, offset: 0 })).items.length, 2);
  const one = await listContacts(env.db, tenantScope(org), { limit: 1, offset: 0 });
  assert.equal(one.has_more, true);
  assert.deepEqual(
    (await listContacts(env.db, tenantScope(org), { search: '50%_', limit: 10, offset: 0 })).items.map(
      (c) => c.contact_id,
    ),
    [id],
  );
  assert.equal(
    (await listContacts(env.db, tenantScope(org), { search: '%', limit: 10, offset: 0 })).items.length,
    1,
    '% is literal',
  );
  assert.equal((await listContacts(env.db, tenantScope(other), { limit: 10, offset: 0 })).items.length, 0);
  assert.equal(await getContact(env.db, tenantScope(other), id), null);
  assert.equal(await getContact(env.db, tenantScope(org), MISSING), null);
  assert.equal((await getContact(env.db, tenantScope(org), id))?.first_name, 'Ana');
  await assert.rejects(updateContact(env.deps, tenantScope(other), id, { first_name: 'Eve' }), {
    code: 'NOT_FOUND',
  });
  assert.equal(
    (await updateContact(env.deps, tenantScope(org), id, { first_name: 'Anna' })).first_name,
    'Anna',
  );
});
