import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { silentMp3 } from '../../src/seed/demo-audio.ts';
import { type CliRun, cliInProcess } from '../helpers/cli.ts';
import { ADMIN_TOKEN } from '../helpers/deps.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

/**
 * `callcap` end to end against a real operator listener on a loopback port. The commands run through
 * runCli in this process (the CLI's whole logic: argument parsing, the HTTP calls, the output and the
 * exit code it answers), as in test/cli/operator-commands.test.ts; the entry points themselves —
 * src/cli.ts's stdin, stdout, stderr and exit status, `callcap serve`'s usage error, bin/callcap.js
 * on Node 24 and its re-exec from an older node — run as real processes (`{ process: true }`). A
 * process costs ~0.3 s of CPU for Node's start-up; the file ran 33 of them.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let h: Harness;
let base: string;
let tmp: string;
before(async () => {
  h = await createHarness();
  await h.operator.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.operator.server.address() as AddressInfo).port}`;
  tmp = await mkdtemp(join(tmpdir(), 'callcap-cli-'));
});
after(async () => {
  await h?.close();
  await rm(tmp, { recursive: true, force: true });
});

function run(
  args: string[],
  o: { env?: Record<string, string>; input?: string; node?: string; entry?: string; process?: boolean } = {},
): Promise<CliRun> {
  const env = { PATH: process.env.PATH ?? '', CALLCAP_ADMIN_URL: base, ADMIN_TOKEN, ...o.env };
  if (!o.process && !o.node && !o.entry) return cliInProcess(args, env, { input: o.input });
  return new Promise((resolve, reject) => {
    const child = spawn(o.node ?? process.execPath, [o.entry ?? 'src/cli.ts', ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(o.input ?? '');
  });
}

/** Runs a command that must succeed and answers its JSON output. */
async function ok(args: string[], o: Parameters<typeof run>[1] = {}) {
  const r = await run(args, o);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout);
}

let n = 0;
const email = () => `cli${++n}@example.com`;

test('callcap help lists serve and every operator command and exits 0', async () => {
  const r = await run(['help'], { process: true });
  assert.equal(r.code, 0);
  for (const line of [
    'callcap serve [--role api|operator|worker]...',
    'callcap org create --name <name> --owner-email <email> --owner-password <password|-> [--country <CC>]',
    'callcap org update <org-id> [--entitlement <active|inactive>] [--retention-days <days|none>]',
    'callcap user create --org <org-id> --email <email> --password <password|->',
    'callcap key create --org <org-id> --scopes <read.calls,read.recordings> [--user <user-id>]',
    'callcap key revoke <key-id>',
    'callcap maintenance <on|off>',
    'callcap tracker create --org <org-id> --name <name> --terms <term,term>',
    'callcap call create --org <org-id> --direction <inbound|outbound> --caller-phone <phone>',
    'callcap call recording <call-id> <file.mp3>',
  ]) {
    assert.ok(r.stdout.includes(line), line);
  }
});

test('org create, org update, user create, key create, key revoke and tracker create provision end to end', async () => {
  const org = await ok([
    'org',
    'create',
    '--name',
    'CLI Co',
    '--owner-email',
    email(),
    '--owner-password',
    'long-enough',
    '--country',
    'us',
  ]);
  assert.deepEqual(Object.keys(org).sort(), ['organization_id', 'owner_user_id']);
  const id = org.organization_id;

  const updated = await ok([
    'org',
    'update',
    id,
    '--entitlement',
    'inactive',
    '--retention-days',
    '30',
    '--account-rate-limit',
    '100',
    '--max-active-subscriptions',
    '3',
  ]);
  assert.deepEqual(
    { ...updated, created_at: undefined },
    {
      organization_id: id,
      name: 'CLI Co',
      entitlement: 'inactive',
      retention_days: 30,
      account_rate_limit_per_hour: 100,
      max_active_subscriptions: 3,
      country: 'US',
      language: 'en',
      recording_consent: { enabled: false, text: null, language: null },
      redaction_enabled: true,
      created_at: undefined,
    },
  );
  assert.equal((await ok(['org', 'update', id, '--retention-days', 'none'])).retention_days, null);

  const user = await ok(['user', 'create', '--org', id, '--email', email(), '--password', 'long-enough']);
  const agent = await ok([
    'user',
    'create',
    '--org',
    id,
    '--email',
    email(),
    '--password',
    'long-enough',
    '--role',
    'agent',
  ]);
  const roles = await h.db.query<{ role: string }>(
    'SELECT role FROM users WHERE id = ANY($1) ORDER BY role',
    [[user.user_id, agent.user_id]],
  );
  assert.deepEqual(
    roles.rows.map((r) => r.role),
    ['admin', 'agent'],
  );
  const key = await ok([
    'key',
    'create',
    '--org',
    id,
    '--scopes',
    'read.calls, read.recordings',
    '--user',
    user.user_id,
    '--rate-limit',
    '50',
    '--name',
    'CRM',
  ]);
  assert.match(key.key, /^cc_live_/);
  const stored = await h.db.query<Record<string, unknown>>(
    'SELECT user_id, name, scopes, rate_limit_per_hour FROM api_keys WHERE id = $1',
    [key.api_key_id],
  );
  assert.deepEqual(stored.rows[0], {
    user_id: user.user_id,
    name: 'CRM',
    scopes: ['read.calls', 'read.recordings'],
    rate_limit_per_hour: 50,
  });

  const listed = await run(['key', 'list', '--org', id]);
  assert.equal(listed.code, 0);
  assert.equal(listed.stdout.includes(key.key), false);
  assert.equal(JSON.parse(listed.stdout).api_keys[0].api_key_id, key.api_key_id);

  assert.deepEqual(await ok(['key', 'revoke', key.api_key_id]), {
    api_key_id: key.api_key_id,
    revoked: true,
  });
  const revoked = await h.db.query<{ revoked_at: Date | null }>(
    'SELECT revoked_at FROM api_keys WHERE id = $1',
    [key.api_key_id],
  );
  assert.ok(revoked.rows[0].revoked_at);

  const tracker = await ok(['tracker', 'create', '--org', id, '--name', 'Churn', '--terms', 'cancel,refund']);
  const t = await h.db.query<{ terms: string[] }>('SELECT terms FROM trackers WHERE id = $1', [
    tracker.tracker_id,
  ]);
  assert.deepEqual(t.rows[0].terms, ['cancel', 'refund']);
});

test('maintenance on disables the public API and maintenance off enables it again', async () => {
  assert.deepEqual(await ok(['maintenance', 'on']), { public_api_enabled: false });
  const value = async () =>
    (await h.db.query<{ value: unknown }>(`SELECT value FROM settings WHERE key = 'public_api_enabled'`))
      .rows[0].value;
  assert.equal(await value(), false);
  assert.deepEqual(await ok(['maintenance', 'off']), { public_api_enabled: true });
  assert.equal(await value(), true);
  const bad = await run(['maintenance', 'maybe']);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    'callcap: Use "maintenance on" or "maintenance off", not "maybe".\nUsage: callcap maintenance <on|off>\n',
  );
});

test('a password given as "-" is read from stdin', async () => {
  const org = await ok(
    ['org', 'create', '--name', 'Stdin Co', '--owner-email', email(), '--owner-password', '-'],
    { input: 'from stdin 123\n', process: true },
  );
  const { rows } = await h.db.query<{ password_hash: string }>(
    'SELECT password_hash FROM users WHERE id = $1',
    [org.owner_user_id],
  );
  const { verifyPassword } = await import('../../src/accounts/passwords.ts');
  assert.equal(await verifyPassword('from stdin 123', rows[0].password_hash), true);
});

test("an API error is printed on stderr with the API's code and message, and exits 1", async () => {
  const org = await ok([
    'org',
    'create',
    '--name',
    'Err Co',
    '--owner-email',
    email(),
    '--owner-password',
    'long-enough',
  ]);
  const r = await run(['key', 'create', '--org', org.organization_id, '--scopes', 'read.all'], {
    process: true,
  });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.equal(
    r.stderr,
    'callcap: 400 BAD_REQUEST: Unknown scope "read.all" in "scopes"; known scopes: read.calls, read.recordings, write.calls, read.contacts, write.contacts, manage.webhooks, manage.api_keys.\n',
  );
  const missing = await run([
    'org',
    'update',
    '7f0c6d7e-3f5b-4c1e-9a55-0d1f4a0b2c3d',
    '--entitlement',
    'active',
  ]);
  assert.equal(missing.code, 1);
  assert.equal(
    missing.stderr,
    'callcap: 404 NOT_FOUND: No organization 7f0c6d7e-3f5b-4c1e-9a55-0d1f4a0b2c3d.\n',
  );
});

test('a wrong operator token exits 1 with the 401 message', async () => {
  const r = await run(['maintenance', 'off'], { env: { ADMIN_TOKEN: 'wrong-token-0123456789' } });
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    'callcap: 401 UNAUTHORIZED: Missing or invalid operator token: send Authorization: Bearer <ADMIN_TOKEN>.\n',
  );
});

test('without ADMIN_TOKEN the token is read from DATA_DIR/admin-token', async () => {
  const dir = join(tmp, 'with-token');
  await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
  await writeFile(join(dir, 'admin-token'), `${ADMIN_TOKEN}\n`);
  const r = await run(['maintenance', 'off'], { env: { ADMIN_TOKEN: '', DATA_DIR: dir } });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { public_api_enabled: true });
});

test('without any operator token the CLI exits 2 and says where it looked', async () => {
  const r = await run(['maintenance', 'off'], { env: { ADMIN_TOKEN: '', DATA_DIR: join(tmp, 'empty') } });
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^callcap: no operator token: set ADMIN_TOKEN, or set DATA_DIR .*\(looked for .*empty\/admin-token\)\.\n$/,
  );
});

test('wrong usage exits 2 with the usage line and sends nothing', async () => {
  const before = (await h.db.query<{ n: number }>('SELECT count(*) AS n FROM organizations')).rows[0].n;
  const missing = await run(['org', 'create', '--name', 'X', '--owner-password', 'long-enough']);
  assert.equal(missing.code, 2);
  assert.equal(
    missing.stderr,
    'callcap: missing --owner-email.\nUsage: callcap org create --name <name> --owner-email <email> --owner-password <password|-> [--country <CC>]\n',
  );
  const unknownFlag = await run(['key', 'revoke', 'x', '--force']);
  assert.equal(unknownFlag.code, 2);
  assert.match(unknownFlag.stderr, /--force/);
  const notANumber = await run([
    'key',
    'create',
    '--org',
    'x',
    '--scopes',
    'read.calls',
    '--rate-limit',
    'lots',
  ]);
  assert.equal(notANumber.code, 2);
  assert.match(notANumber.stderr, /^callcap: --rate-limit must be a whole number, got "lots"\./);
  const unknownCommand = await run(['org', 'delete']);
  assert.equal(unknownCommand.code, 2);
  assert.match(
    unknownCommand.stderr,
    /unknown command "org delete"\. Did you mean: org create, org show, org update, org list\?/,
  );
  const badRole = await run(['serve', '--role', 'db'], { process: true });
  assert.equal(badRole.code, 2);
  assert.equal(
    badRole.stderr,
    'callcap: Unknown role "db": use api, operator or worker.\nUsage: callcap serve [--role api|operator|worker]...\n',
  );
  assert.equal(
    (await h.db.query<{ n: number }>('SELECT count(*) AS n FROM organizations')).rows[0].n,
    before,
  );
});

test('an unreachable operator API exits 1 and says what to check', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const r = await run(['maintenance', 'off'], {
    env: { CALLCAP_ADMIN_URL: '', ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(port) },
  });
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    `callcap: cannot reach the operator API at http://127.0.0.1:${port} (ECONNREFUSED). Is "callcap serve" running? Set CALLCAP_ADMIN_URL or ADMIN_HOST/ADMIN_PORT to where it listens.\n`,
  );
});

test('call create and call recording pass a call and its MP3 to the ingestion API', async () => {
  const org = await ok([
    'org',
    'create',
    '--name',
    'Calls Co',
    '--owner-email',
    email(),
    '--owner-password',
    'long-enough',
    '--country',
    'US',
  ]);
  const call = await ok([
    'call',
    'create',
    '--org',
    org.organization_id,
    '--direction',
    'inbound',
    '--caller-phone',
    '(415) 555-0132',
    '--caller-name',
    'Sarah Johnson',
  ]);
  const file = join(tmp, 'call.mp3');
  const audio = silentMp3(3);
  await writeFile(file, audio.bytes);
  assert.deepEqual(await ok(['call', 'recording', call.call_id, file]), {
    call_id: call.call_id,
    recording: 'stored',
    bytes: audio.bytes.length,
  });
  const { rows } = await h.db.query<Record<string, unknown>>(
    'SELECT caller_name, customer_phone_e164, recording_state, recording_bytes FROM calls WHERE id = $1',
    [call.call_id],
  );
  assert.deepEqual(rows[0], {
    caller_name: 'Sarah Johnson',
    customer_phone_e164: '+14155550132',
    recording_state: 'available',
    recording_bytes: audio.bytes.length,
  });
});

test('bin/callcap.js runs the CLI on Node 24', async () => {
  const r = await run(['--version'], { entry: 'bin/callcap.js' });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^callcap \d+\.\d+\.\d+\n$/);
});

/** An older node on this machine, if any, to check the re-exec with the pinned Node 24. */
const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => {
  if (!existsSync(p)) return false;
  const v = spawnSync(p, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout;
  return Number(v.split('.')[0]) < 24;
});

test('bin/callcap.js on an older node re-executes itself with the pinned Node 24', {
  skip: !oldNode && 'no node < 24 installed',
}, async () => {
  const r = await run(['maintenance', 'off'], { entry: 'bin/callcap.js', node: oldNode });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { public_api_enabled: true });
  const failing = await run(['key', 'revoke', 'nope'], { entry: 'bin/callcap.js', node: oldNode });
  assert.equal(failing.code, 1, 'the exit status of the re-executed CLI is passed through');
});
