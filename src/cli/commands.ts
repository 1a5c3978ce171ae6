import { readFile } from 'node:fs/promises';
import type { AdminRequest } from './admin-client.ts';
import { CliError } from './admin-client.ts';

/** What a command gets: its flags, its positional arguments, the API call and stdin. */
export interface CommandContext {
  flags: Record<string, string | undefined>;
  args: string[];
  call(r: AdminRequest): Promise<unknown>;
  readStdin(): Promise<string>;
}

export interface Flag {
  hint: string;
  required?: boolean;
}

/** One operator command: the words that name it, its flags and positionals, and what it sends. */
export interface Command {
  words: string[];
  args: string[];
  flags: Record<string, Flag>;
  summary: string;
  run(c: CommandContext): Promise<unknown>;
}

export const usageOf = (c: Command): string => {
  const flags = Object.entries(c.flags).map(([name, f]) =>
    f.required ? `--${name} <${f.hint}>` : `[--${name} <${f.hint}>]`,
  );
  return ['callcap', ...c.words, ...c.args.map((a) => `<${a}>`), ...flags].join(' ');
};

const usage = (message: string) => new CliError(message, 2, true);

function int(c: CommandContext, flag: string): number | undefined {
  const v = c.flags[flag];
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw usage(`--${flag} must be a whole number, got "${v}".`);
  return Number(v);
}

const list = (v: string | undefined): string[] | undefined =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

/** A password flag given as "-" is read from stdin, so it stays out of the shell history and ps. */
async function secret(c: CommandContext, flag: string): Promise<string | undefined> {
  const v = c.flags[flag];
  return v === '-' ? (await c.readStdin()).replace(/\r?\n$/, '') : v;
}

/** Drops undefined values so only the flags given are sent. */
const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const enc = encodeURIComponent;

export const COMMANDS: Command[] = [
  {
    words: ['org', 'create'],
    args: [],
    flags: {
      name: { hint: 'name', required: true },
      'owner-email': { hint: 'email', required: true },
      'owner-password': { hint: 'password|-', required: true },
      country: { hint: 'CC' },
    },
    summary: 'create an organization and its owner user',
    run: async (c) =>
      c.call({
        method: 'POST',
        path: '/organizations',
        json: defined({
          name: c.flags.name,
          owner_email: c.flags['owner-email'],
          owner_password: await secret(c, 'owner-password'),
          country: c.flags.country,
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
      entitlement: { hint: 'active|inactive' },
      'retention-days': { hint: 'days|none' },
      'account-rate-limit': { hint: 'requests/hour' },
      'max-active-subscriptions': { hint: 'n' },
      country: { hint: 'CC' },
      name: { hint: 'name' },
    },
    summary: "change an organization's settings",
    run: (c) => {
      const retention = c.flags['retention-days'];
      const json = defined({
        name: c.flags.name,
        entitlement: c.flags.entitlement,
        retention_days: retention === 'none' || retention === 'null' ? null : int(c, 'retention-days'),
        account_rate_limit_per_hour: int(c, 'account-rate-limit'),
        max_active_subscriptions: int(c, 'max-active-subscriptions'),
        country: c.flags.country,
      });
      if (Object.keys(json).length === 0) throw usage('Nothing to change: give at least one setting flag.');
      return c.call({ method: 'PATCH', path: `/organizations/${enc(c.args[0])}`, json });
    },
  },
  {
    words: ['user', 'create'],
    args: [],
    flags: {
      org: { hint: 'org-id', required: true },
      email: { hint: 'email', required: true },
      password: { hint: 'password|-', required: true },
    },
    summary: 'add a user to an organization',
    run: async (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(c.flags.org!)}/users`,
        json: { email: c.flags.email, password: await secret(c, 'password') },
      }),
  },
  {
    words: ['key', 'create'],
    args: [],
    flags: {
      org: { hint: 'org-id', required: true },
      scopes: { hint: 'read.calls,read.recordings', required: true },
      user: { hint: 'user-id' },
      'rate-limit': { hint: 'requests/hour' },
      name: { hint: 'name' },
    },
    summary: 'create an API key (the key is printed only now)',
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(c.flags.org!)}/api-keys`,
        json: defined({
          scopes: list(c.flags.scopes),
          user_id: c.flags.user,
          rate_limit_per_hour: int(c, 'rate-limit'),
          name: c.flags.name,
        }),
      }),
  },
  {
    words: ['key', 'list'],
    args: [],
    flags: { org: { hint: 'org-id', required: true } },
    summary: "list an organization's API keys (never the keys themselves)",
    run: (c) => c.call({ method: 'GET', path: `/organizations/${enc(c.flags.org!)}/api-keys` }),
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
        throw usage(`Use "maintenance on" or "maintenance off", not "${mode}".`);
      return c.call({ method: 'PUT', path: '/maintenance', json: { public_api_enabled: mode === 'off' } });
    },
  },
  {
    words: ['tracker', 'create'],
    args: [],
    flags: {
      org: { hint: 'org-id', required: true },
      name: { hint: 'name', required: true },
      terms: { hint: 'term,term', required: true },
    },
    summary: 'create a keyword tracker',
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(c.flags.org!)}/trackers`,
        json: { name: c.flags.name, terms: list(c.flags.terms) },
      }),
  },
  {
    words: ['call', 'create'],
    args: [],
    flags: {
      org: { hint: 'org-id', required: true },
      direction: { hint: 'inbound|outbound', required: true },
      'caller-phone': { hint: 'phone', required: true },
      'customer-phone': { hint: 'phone' },
      'company-phone': { hint: 'phone' },
      'caller-name': { hint: 'name' },
      'created-at': { hint: 'ISO date-time' },
      'agent-user': { hint: 'user-id' },
      'recording-mode': { hint: 'normal|no_recording' },
      'crm-status': { hint: 'status' },
      'review-status': { hint: 'status' },
      'transcript-original': { hint: 'text' },
    },
    summary: 'report a call (operator ingestion API)',
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(c.flags.org!)}/calls`,
        json: defined({
          direction: c.flags.direction,
          caller_phone: c.flags['caller-phone'],
          customer_phone: c.flags['customer-phone'],
          company_phone: c.flags['company-phone'],
          caller_name: c.flags['caller-name'],
          created_at: c.flags['created-at'],
          agent_user_id: c.flags['agent-user'],
          recording_mode: c.flags['recording-mode'],
          crm_status: c.flags['crm-status'],
          review_status: c.flags['review-status'],
          transcript_original: c.flags['transcript-original'],
        }),
      }),
  },
  {
    words: ['call', 'recording'],
    args: ['call-id', 'file.mp3'],
    flags: {},
    summary: "upload a call's recording (MP3)",
    run: async (c) => {
      let bytes: Buffer;
      try {
        bytes = await readFile(c.args[1]);
      } catch (err) {
        throw usage(`cannot read ${c.args[1]}: ${(err as Error).message}`);
      }
      await c.call({
        method: 'PUT',
        path: `/calls/${enc(c.args[0])}/recording`,
        body: { bytes, contentType: 'audio/mpeg' },
      });
      return { call_id: c.args[0], recording: 'stored', bytes: bytes.length };
    },
  },
];
