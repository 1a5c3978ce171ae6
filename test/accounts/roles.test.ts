import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Capability, can, refusal, type UserRole } from '../../src/accounts/roles.ts';

/** Who may do what: one row per capability, the roles that have it (docs/decisions.md "Roles"). */
const TABLE: [Capability, UserRole[]][] = [
  ['manage_integrations', ['owner', 'admin']],
  ['manage_settings', ['owner', 'admin']],
  ['manage_team', ['owner', 'admin']],
  ['manage_owners', ['owner']],
  ['change_redaction', ['owner']],
  ['erase_calls', ['owner']],
];

for (const [capability, roles] of TABLE) {
  test(`${capability} is granted to ${roles.join(' and ')} only`, () => {
    for (const role of ['owner', 'admin', 'agent'] as const) {
      assert.equal(can({ role }, capability), roles.includes(role), `${role} / ${capability}`);
    }
  });
}

test('a refusal names the role, what it does not allow, and who can', () => {
  assert.equal(
    refusal('agent', 'manage_integrations'),
    'Your role (agent) does not allow managing API keys and webhooks: only owners and admins can. Ask an owner of your organization.',
  );
});
