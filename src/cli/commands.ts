import {
  type Command,
  type CommandContext,
  defined,
  enc,
  int,
  list,
  req,
  secret,
  str,
  usageError,
} from './command.ts';

/**
 * Provisioning commands of the operator CLI: organizations, users (and their passwords), API keys,
 * maintenance, trackers, contacts, telephony and phone numbers. Each is one operator API request (spec/operator-api.md);
 * calls are in call-commands.ts. A path id that is not a UUID answers the API's own 404.
 */

const org = { hint: 'org-id', required: true, help: 'the organization (organization_id)' };

export const PROVISIONING_COMMANDS: Command[] = [
  {
    words: ['org', 'create'],
    args: [],
    flags: {
      name: { hint: 'name', required: true },
      'owner-email': { hint: 'email', required: true },
      'owner-password': { hint: 'password|-', required: true, help: '"-" reads it from stdin' },
      country: { hint: 'CC', help: 'ISO 3166-1 alpha-2, e.g. US (national phone formats)' },
    },
    summary: 'create an organization and its owner user',
    run: async (c) =>
      c.call({
        method: 'POST',
        path: '/organizations',
        json: defined({
          name: str(c, 'name'),
          owner_email: str(c, 'owner-email'),
          owner_password: await secret(c, 'owner-password'),
          country: str(c, 'country'),
        }),
      }),
  },
  {
    words: ['org', 'show'],
    args: ['org-id'],
    flags: {},
    summary: "print an organization's settings",
    run: (c) => c.call({ method: 'GET', path: `/organizations/${enc(c.args[0])}` }),
  },
  {
    words: ['org', 'update'],
    args: ['org-id'],
    flags: {
      entitlement: { hint: 'active|inactive', help: 'inactive: the API answers 402 to its keys' },
      'retention-days': { hint: 'days|none', help: 'recordings older than this are deleted' },
      'account-rate-limit': { hint: 'requests/hour', help: 'all keys of the organization together' },
      'max-active-subscriptions': { hint: 'n' },
      country: { hint: 'CC' },
      name: { hint: 'name' },
    },
    summary: "change an organization's settings",
    run: (c) => {
      const retention = str(c, 'retention-days');
      const json = defined({
        name: str(c, 'name'),
        entitlement: str(c, 'entitlement'),
        retention_days: retention === 'none' || retention === 'null' ? null : int(c, 'retention-days'),
        account_rate_limit_per_hour: int(c, 'account-rate-limit'),
        max_active_subscriptions: int(c, 'max-active-subscriptions'),
        country: str(c, 'country'),
      });
      if (Object.keys(json).length === 0)
        throw usageError('Nothing to change: give at least one setting flag.');
      return c.call({ method: 'PATCH', path: `/organizations/${enc(c.args[0])}`, json });
    },
  },
  {
    words: ['org', 'list'],
    args: [],
    flags: {
      page: { hint: 'n', help: 'page number, 1-based (default 1)' },
      limit: { hint: 'n', help: 'organizations per page, 1 to 100 (default 50)' },
    },
    summary: 'list organizations, oldest first',
    run: (c) => {
      const q = new URLSearchParams(
        defined({ page: int(c, 'page')?.toString(), limit: int(c, 'limit')?.toString() }) as Record<
          string,
          string
        >,
      ).toString();
      return c.call({ method: 'GET', path: `/organizations${q ? `?${q}` : ''}` });
    },
  },
  {
    words: ['user', 'create'],
    args: [],
    flags: {
      org,
      email: { hint: 'email', required: true },
      password: { hint: 'password|-', required: true, help: '"-" reads it from stdin' },
      role: { hint: 'owner|admin|agent', help: 'what the user may do in the web app; admin when omitted' },
    },
    summary: 'add a user to an organization',
    run: async (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(req(c, 'org'))}/users`,
        json: {
          email: str(c, 'email'),
          password: await secret(c, 'password'),
          ...(str(c, 'role') === undefined ? {} : { role: str(c, 'role') }),
        },
      }),
  },
  {
    words: ['user', 'list'],
    args: [],
    flags: { org },
    summary: "list an organization's users (owner first)",
    run: (c) => c.call({ method: 'GET', path: `/organizations/${enc(req(c, 'org'))}/users` }),
  },
  {
    words: ['user', 'find'],
    args: [],
    flags: { email: { hint: 'email', required: true } },
    summary: 'find a user of any organization by e-mail',
    run: (c) => c.call({ method: 'GET', path: `/users?email=${enc(req(c, 'email'))}` }),
  },
  {
    words: ['user', 'set-password'],
    args: ['user-id'],
    flags: {
      password: { hint: 'password|-', required: true, help: '"-" reads it from stdin' },
    },
    summary: "set a user's console password; the user's sessions end",
    run: async (c) => {
      await c.call({
        method: 'PUT',
        path: `/users/${enc(c.args[0])}/password`,
        json: { password: await secret(c, 'password') },
      });
      return { user_id: c.args[0], password_set: true };
    },
  },
  {
    words: ['key', 'create'],
    args: [],
    flags: {
      org,
      scopes: { hint: 'read.calls,read.recordings', required: true, help: 'comma-separated' },
      user: { hint: 'user-id', help: 'the user the key acts for (default: the owner)' },
      'rate-limit': { hint: 'requests/hour', help: 'default 1000' },
      name: { hint: 'name' },
    },
    summary: 'create an API key (the key is printed only now)',
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(req(c, 'org'))}/api-keys`,
        json: defined({
          scopes: list(str(c, 'scopes')),
          user_id: str(c, 'user'),
          rate_limit_per_hour: int(c, 'rate-limit'),
          name: str(c, 'name'),
        }),
      }),
  },
  {
    words: ['key', 'list'],
    args: [],
    flags: { org },
    summary: "list an organization's API keys (never the keys themselves)",
    run: (c) => c.call({ method: 'GET', path: `/organizations/${enc(req(c, 'org'))}/api-keys` }),
  },
  {
    words: ['key', 'revoke'],
    args: ['key-id'],
    flags: {},
    summary: 'revoke an API key; it answers 401 from then on',
    run: async (c) => {
      await c.call({ method: 'DELETE', path: `/api-keys/${enc(c.args[0])}` });
      return { api_key_id: c.args[0], revoked: true };
    },
  },
  {
    words: ['maintenance'],
    args: ['on|off'],
    flags: {},
    summary: 'on: every /api/v1 request answers 503 MAINTENANCE; off: back to normal',
    run: (c) => {
      const mode = c.args[0];
      if (mode !== 'on' && mode !== 'off')
        throw usageError(`Use "maintenance on" or "maintenance off", not "${mode}".`);
      return c.call({ method: 'PUT', path: '/maintenance', json: { public_api_enabled: mode === 'off' } });
    },
  },
  {
    words: ['tracker', 'create'],
    args: [],
    flags: {
      org,
      name: { hint: 'name', required: true },
      terms: { hint: 'term,term', required: true, help: 'comma-separated words or phrases' },
    },
    summary: 'create a keyword tracker',
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(req(c, 'org'))}/trackers`,
        json: { name: str(c, 'name'), terms: list(str(c, 'terms')) },
      }),
  },
  {
    words: ['contact', 'create'],
    args: [],
    flags: {
      org,
      phone: { hint: 'phone', required: true },
      'first-name': { hint: 'name' },
      'last-name': { hint: 'name' },
      email: { hint: 'email' },
      company: { hint: 'name' },
    },
    summary: 'create a contact (emits contact.created)',
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(req(c, 'org'))}/contacts`,
        json: contactFields(c),
      }),
  },
  {
    words: ['contact', 'update'],
    args: ['contact-id'],
    flags: {
      phone: { hint: 'phone' },
      'first-name': { hint: 'name', help: 'an empty value clears the field' },
      'last-name': { hint: 'name' },
      email: { hint: 'email' },
      company: { hint: 'name' },
      notes: { hint: 'text' },
      tags: { hint: 'tag,tag', help: 'replaces the tags; "" clears them' },
    },
    summary: 'change a contact (emits contact.updated with the changed keys)',
    run: (c) => {
      const tags = str(c, 'tags');
      const json = defined({
        ...contactFields(c),
        notes: str(c, 'notes'),
        tags: tags === undefined ? undefined : (list(tags) ?? []),
      });
      if (Object.keys(json).length === 0)
        throw usageError('Nothing to change: give at least one field flag.');
      return c.call({ method: 'PATCH', path: `/contacts/${enc(c.args[0])}`, json });
    },
  },
  {
    words: ['telephony', 'set'],
    args: [],
    flags: {
      org,
      'account-sid': { hint: 'AC…', required: true, help: 'the Twilio account SID' },
      'auth-token': {
        hint: 'token|-',
        required: true,
        help: 'the Twilio auth token; "-" reads it from stdin (stored encrypted, never echoed)',
      },
    },
    summary: "connect an organization's Twilio account",
    run: async (c) =>
      c.call({
        method: 'PUT',
        path: `/organizations/${enc(req(c, 'org'))}/telephony`,
        json: {
          provider: 'twilio',
          account_sid: str(c, 'account-sid'),
          auth_token: await secret(c, 'auth-token'),
        },
      }),
  },
  {
    words: ['number', 'add'],
    args: [],
    flags: {
      org,
      number: { hint: 'E.164', required: true, help: 'the Twilio number, e.g. +14155550100' },
      'ring-to': { hint: 'E.164', help: 'the phone the service rings; without it callers reach voicemail' },
      'recording-mode': { hint: 'normal|no_recording' },
    },
    summary: 'assign a phone number to an organization',
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(req(c, 'org'))}/phone-numbers`,
        json: defined({
          number: str(c, 'number'),
          ring_to: str(c, 'ring-to'),
          recording_mode: str(c, 'recording-mode'),
        }),
      }),
  },
];

function contactFields(c: CommandContext) {
  return defined({
    phone: str(c, 'phone'),
    first_name: str(c, 'first-name'),
    last_name: str(c, 'last-name'),
    email: str(c, 'email'),
    company: str(c, 'company'),
  });
}
