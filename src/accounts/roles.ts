/**
 * Who may do what in the web app and the console JSON API (docs/decisions.md "Roles"). The one
 * place a role is turned into a permission: page guards (pages/kit/guard.ts requireCan) and the
 * console API's hook ask `can(user, capability)`, never `role === …`.
 *
 * - owner: everything, including what cannot be undone (erasing a call), turning redaction off, and
 *   making, demoting or removing owners.
 * - admin: integrations (API keys, webhook subscriptions, the delivery log, `callcap listen`),
 *   the organization settings, the team (invite, change roles, remove) — but not owners.
 * - agent: calls, contacts, trackers and their own profile.
 */
export const ROLES = ['owner', 'admin', 'agent'] as const;
export type UserRole = (typeof ROLES)[number];

export const isRole = (v: unknown): v is UserRole => (ROLES as readonly unknown[]).includes(v);

const GRANTS = {
  manage_integrations: ['owner', 'admin'],
  manage_settings: ['owner', 'admin'],
  manage_team: ['owner', 'admin'],
  manage_owners: ['owner'],
  change_redaction: ['owner'],
  erase_calls: ['owner'],
} as const satisfies Record<string, readonly UserRole[]>;

export type Capability = keyof typeof GRANTS;

/** True when a user of this role may do it. */
export function can(user: { role: UserRole }, capability: Capability): boolean {
  return (GRANTS[capability] as readonly UserRole[]).includes(user.role);
}

/** What a capability lets one do, for the 403 message ("Your role (agent) does not allow …"). */
export const CAPABILITY_WORDS: Record<Capability, string> = {
  manage_integrations: 'managing API keys and webhooks',
  manage_settings: "changing the organization's settings",
  manage_team: 'managing the team',
  manage_owners: 'making, demoting or removing an owner',
  change_redaction: 'turning redaction on or off',
  erase_calls: 'erasing a call',
};

/** The refusal of a capability, in words: who may, and whom to ask. */
export function refusal(role: UserRole, capability: Capability): string {
  const who = (GRANTS[capability] as readonly UserRole[]).map((r) => `${r}s`).join(' and ');
  return `Your role (${role}) does not allow ${CAPABILITY_WORDS[capability]}: only ${who} can. Ask an owner of your organization.`;
}

/** A role in words for the pages. */
export const ROLE_WORDS: Record<UserRole, { label: string; text: string }> = {
  owner: { label: 'Owner', text: 'everything, including erasing calls and managing owners' },
  admin: { label: 'Admin', text: 'integrations, settings and the team, besides calls and contacts' },
  agent: { label: 'Agent', text: 'calls, contacts, trackers and their own profile' },
};
