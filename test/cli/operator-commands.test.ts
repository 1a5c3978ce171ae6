import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { usageOf } from '../../src/cli/command.ts';
import { commandHelp } from '../../src/cli/help.ts';
import { COMMANDS } from '../../src/cli/registry.ts';
import { silentMp3 } from '../../src/seed/demo-audio.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { ADMIN_TOKEN } from '../helpers/deps.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

/**
 * The operator CLI beyond provisioning (test/cli/cli.test.ts): help at every level, the list
 * commands, and every call and contact command against a real operator listener; the telephony,
 * phone-number, outbound-call and reprocess commands against a recording HTTP server (their routes
 * are spec/operator-api.md contracts served by other parts of the service).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let h: Harness;
let base: string;
let tmp: string;
before(async () => {
  h = await createHarness();
  await h.operator.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.operator.server.address() as AddressInfo).port}`;
  tmp = await mkdtemp(join(tmpdir(), 'callcap-ops-'));
});
after(async () => {
  await h?.close();
  await rm(tmp, { recursive: true, force: true });
});

/** The CLI in this process against `adminUrl` (default: the harness's operator listener). */
function cli(args: string[], o: { input?: string; adminUrl?: string } = {}) {
  return cliInProcess(args, { CALLCAP_ADMIN_URL: o.adminUrl ?? base, ADMIN_TOKEN }, { input: o.input });
}

async function ok(args: string[], o: Parameters<typeof cli>[1] = {}) {
  const r = await cli(args, o);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout);
}

let n = 0;
async function newOrg() {
  return ok([
    'org',
    'create',
    '--name',
    `Ops ${++n}`,
    '--owner-email',
    `ops${n}@example.com`,
    '--owner-password',
    'long-enough',
    '--country',
    'US',
  ]);
}

test('"callcap org --help", "callcap org" and "callcap help org" list the topic\'s commands (as a real process)', async () => {
  const r = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['src/cli.ts', 'org', '--help'], { cwd: ROOT, env: { PATH: '' } });
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
  assert.equal(r.code, 0);
  assert.ok(
    r.stdout.startsWith('callcap org: organizations (operator API).\n\nCommands:\n  callcap org create '),
  );
  for (const usage of [
    'callcap org create --name <name>',
    'callcap org show <org-id>',
    'callcap org update <org-id>',
    'callcap org list [--page <n>] [--limit <n>]',
  ]) {
    assert.ok(r.stdout.includes(`\n  ${usage}`), usage);
  }
  assert.match(r.stdout, /Exit codes: 0 success, 1 the request failed/);
  assert.equal((await cli(['org'])).stdout, r.stdout);
  assert.equal((await cli(['help', 'org'])).stdout, r.stdout);
  const calls = await cli(['call', '-h']);
  assert.equal(calls.code, 0);
  for (const c of COMMANDS.filter((c) => c.words[0] === 'call'))
    assert.ok(calls.stdout.includes(c.words.join(' ')));
  // a topic typed in the plural is the same topic: `callcap calls reprocess <id>`
  assert.equal((await cli(['calls', '-h'])).stdout, calls.stdout);
  assert.equal((await cli(['orgs'])).stdout, r.stdout);
});

test('every command explains itself with --help: usage, summary and each option', async () => {
  for (const c of COMMANDS) {
    const r = await cli([...c.words, '--help']);
    assert.equal(r.code, 0, c.words.join(' '));
    assert.equal(r.stdout, commandHelp(c));
    assert.ok(r.stdout.startsWith(`Usage: callcap ${c.words.join(' ')}`));
    for (const flag of Object.keys(c.flags))
      assert.ok(r.stdout.includes(`  --${flag}`), `${c.words} --${flag}`);
  }
  const erase = await cli(['call', 'erase', '--help']);
  assert.match(erase.stdout, /\n {2}--yes +confirms: erasing cannot be undone \(required\)\n/);
  assert.equal((await cli(['help', 'call', 'erase'])).stdout, erase.stdout);
  const serve = await cli(['serve', '--help']);
  assert.equal(serve.code, 0);
  assert.match(serve.stdout, /callcap serve \[--role api\|operator\|worker\]\.\.\./);
  const none = await cli(['help', 'nothing']);
  assert.equal(none.code, 2);
  assert.equal(none.stderr, 'callcap: no help for "nothing". Run "callcap help".\n');
});

test('"callcap completion" prints a bash completion script that knows every command and option', async () => {
  const r = await cli(['completion']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /\ncomplete -o default -F _callcap callcap\n$/);
  assert.match(r.stdout, /'org'\) words='create show update list' ;;/);
  assert.match(r.stdout, /'maintenance'\*\) words='on off --help' ;;/);
  assert.match(r.stdout, /'export'\*\) words='--output --from --to --format /);
});

test('org list and user list', async () => {
  const a = await newOrg();
  await ok(
    ['user', 'create', '--org', a.organization_id, '--email', `member${n}@example.com`, '--password', '-'],
    {
      input: 'long-enough\n',
    },
  );
  const page = await ok(['org', 'list', '--limit', '100']);
  assert.ok(page.items.some((o: { organization_id: string }) => o.organization_id === a.organization_id));
  assert.equal(page.limit, 100);
  const users = await ok(['user', 'list', '--org', a.organization_id]);
  assert.deepEqual(
    users.users.map((u: { email: string; role: string }) => [u.email, u.role]),
    [
      [`ops${n}@example.com`, 'owner'],
      [`member${n}@example.com`, 'admin'],
    ],
  );
  const bad = await cli(['org', 'list', '--limit', 'many']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^callcap: --limit must be a whole number, got "many"\./);
});

test('contact create and contact update', async () => {
  const org = await newOrg();
  const c = await ok([
    'contact',
    'create',
    '--org',
    org.organization_id,
    '--phone',
    '(415) 555-0199',
    '--first-name',
    'Ana',
    '--company',
    'Leaky Co',
  ]);
  const updated = await ok([
    'contact',
    'update',
    c.contact_id,
    '--tags',
    'vip, plumbing',
    '--notes',
    'Prefers mornings',
  ]);
  assert.equal(updated.contact_id, c.contact_id);
  const { rows } = await h.db.query<Record<string, unknown>>(
    'SELECT phone_e164, first_name, company, notes, tags FROM contacts WHERE id = $1',
    [c.contact_id],
  );
  assert.deepEqual(rows[0], {
    phone_e164: '+14155550199',
    first_name: 'Ana',
    company: 'Leaky Co',
    notes: 'Prefers mornings',
    tags: ['vip', 'plumbing'],
  });
  const nothing = await cli(['contact', 'update', c.contact_id]);
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /^callcap: Nothing to change: give at least one field flag\./);
});

test('the call commands: transcript, lifecycle, trash, restore, deletion, recording, erase', async () => {
  const org = await newOrg();
  const id = (
    await ok([
      'call',
      'create',
      '--org',
      org.organization_id,
      '--direction',
      'inbound',
      '--caller-phone',
      '+14155550123',
    ])
  ).call_id;
  const state = async () =>
    (
      await h.db.query<Record<string, unknown>>(
        `SELECT processing_state, recording_state, trashed_at IS NOT NULL AS trashed,
                pending_deletion_at IS NOT NULL AS pending, erased_at IS NOT NULL AS erased
           FROM calls WHERE id = $1`,
        [id],
      )
    ).rows[0];

  const transcript = await ok(['call', 'transcript', id, '--file', '-', '--language', 'en'], {
    input: 'Hello, my basement is flooded.',
  });
  assert.deepEqual(Object.keys(transcript).sort(), ['call_id', 'processing_state']);
  const both = await cli(['call', 'transcript', id, '--text', 'a', '--file', 'b']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^callcap: Give exactly one of --text or --file\./);

  assert.deepEqual(await ok(['call', 'trash', id]), { call_id: id, trashed: true });
  assert.equal((await state()).trashed, true);
  assert.deepEqual(await ok(['call', 'restore', id]), { call_id: id, restored: true });
  assert.equal((await state()).trashed, false);
  assert.deepEqual(await ok(['call', 'schedule-deletion', id, '--reason', 'consent_withdrawn']), {
    call_id: id,
    deletion_scheduled: true,
  });
  assert.equal((await state()).pending, true);
  assert.deepEqual(await ok(['call', 'cancel-deletion', id]), { call_id: id, deletion_cancelled: true });
  assert.equal((await state()).pending, false);

  const mp3 = join(tmp, 'c.mp3');
  await writeFile(mp3, silentMp3(1).bytes);
  assert.equal((await ok(['call', 'recording', id, mp3, '--recording-sid', 'RE123'])).recording, 'stored');
  const sid = await h.db.query<{ recording_sid: string }>('SELECT recording_sid FROM calls WHERE id = $1', [
    id,
  ]);
  assert.equal(sid.rows[0].recording_sid, 'RE123');
  assert.deepEqual(await ok(['call', 'recording-delete', id, '--kind', 'hard_deleted', '--reason', 'test']), {
    call_id: id,
    recording_deleted: true,
  });
  assert.equal((await state()).recording_state, 'deleted');

  const unconfirmed = await cli(['call', 'erase', id]);
  assert.equal(unconfirmed.code, 2);
  assert.equal(unconfirmed.stderr, `callcap: missing --yes.\nUsage: callcap call erase <call-id> --yes\n`);
  assert.equal((await state()).erased, false);
  assert.deepEqual(await ok(['call', 'erase', id, '--yes']), { call_id: id, erased: true });
  assert.equal((await state()).erased, true);

  const outbound = (
    await ok([
      'call',
      'create',
      '--org',
      org.organization_id,
      '--direction',
      'outbound',
      '--caller-phone',
      '+14155550100',
      '--customer-phone',
      '+14155550124',
    ])
  ).call_id;
  assert.deepEqual(await ok(['call', 'lifecycle', outbound, '--state', 'agent_answered']), {
    call_id: outbound,
    outbound_lifecycle: 'agent_answered',
  });
  const impossible = await cli(['call', 'lifecycle', outbound, '--state', 'ringing_agent']);
  assert.equal(impossible.code, 1);
  assert.match(impossible.stderr, /^callcap: 422 VALIDATION_ERROR: /);
  assert.deepEqual(await ok(['call', 'recording-refused', outbound]), {
    call_id: outbound,
    recording_refused: true,
  });
});

test('call create reads a transcript file and an analysis file', async () => {
  const org = await newOrg();
  const transcript = join(tmp, 't.txt');
  await writeFile(transcript, 'Hi, this is Bob. My water heater is broken.');
  const analysis = join(tmp, 'a.json');
  await writeFile(analysis, JSON.stringify({ summary: 'Water heater broken.', caller_name: 'Bob' }));
  const id = (
    await ok([
      'call',
      'create',
      '--org',
      org.organization_id,
      '--direction',
      'inbound',
      '--caller-phone',
      '+14155550125',
      '--transcript-file',
      transcript,
      '--transcript-processed-file',
      analysis,
    ])
  ).call_id;
  const { rows } = await h.db.query<{ transcript_original: string; summary: string }>(
    `SELECT transcript_original, analysis ->> 'summary' AS summary FROM call_analyses WHERE call_id = $1`,
    [id],
  );
  assert.deepEqual(rows[0], {
    transcript_original: 'Hi, this is Bob. My water heater is broken.',
    summary: 'Water heater broken.',
  });
  const notJson = join(tmp, 'bad.json');
  await writeFile(notJson, '{');
  const r = await cli([
    'call',
    'create',
    '--org',
    org.organization_id,
    '--direction',
    'inbound',
    '--caller-phone',
    '1',
    '--transcript-processed-file',
    notJson,
  ]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^callcap: analysis file .*bad\.json is not JSON: /);
});

test('telephony set, number add, call outbound and call reprocess send the operator API contract', async () => {
  const seen: { method: string; url: string; auth: string; type: string; body: string }[] = [];
  const fake = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      auth: req.headers.authorization ?? '',
      type: req.headers['content-type'] ?? '',
      body,
    });
    const answers: Record<string, [number, unknown]> = {
      PUT: [200, { provider: 'twilio', account_sid: 'AC1' }],
      'POST /admin/v1/organizations/o1/phone-numbers': [201, { phone_number_id: 'p1' }],
      'POST /admin/v1/organizations/o1/outbound-calls': [201, { call_id: 'c9' }],
    };
    const [status, json] = answers[req.method ?? ''] ?? answers[`${req.method} ${req.url}`] ?? [204, null];
    if (json === null) res.writeHead(status).end();
    else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  const adminUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  try {
    assert.deepEqual(
      await ok(['telephony', 'set', '--org', 'o1', '--account-sid', 'AC1', '--auth-token', '-'], {
        adminUrl,
        input: 'tok-secret\n',
      }),
      { provider: 'twilio', account_sid: 'AC1' },
    );
    assert.deepEqual(
      await ok(['number', 'add', '--org', 'o1', '--number', '+14155550100', '--ring-to', '+14155550111'], {
        adminUrl,
      }),
      { phone_number_id: 'p1' },
    );
    assert.deepEqual(
      await ok(
        [
          'call',
          'outbound',
          '--org',
          'o1',
          '--agent-user',
          'u1',
          '--agent-phone',
          '+14155550111',
          '--customer-phone',
          '+14155550122',
          '--from',
          '+14155550100',
          '--recording-mode',
          'no_recording',
        ],
        { adminUrl },
      ),
      { call_id: 'c9' },
    );
    assert.deepEqual(await ok(['call', 'reprocess', 'c9'], { adminUrl }), {
      call_id: 'c9',
      reprocess: 'queued',
    });
  } finally {
    await new Promise((r) => fake.close(r));
  }
  const auth = `Bearer ${ADMIN_TOKEN}`;
  const json = 'application/json';
  assert.deepEqual(seen, [
    {
      method: 'PUT',
      url: '/admin/v1/organizations/o1/telephony',
      auth,
      type: json,
      body: '{"provider":"twilio","account_sid":"AC1","auth_token":"tok-secret"}',
    },
    {
      method: 'POST',
      url: '/admin/v1/organizations/o1/phone-numbers',
      auth,
      type: json,
      body: '{"number":"+14155550100","ring_to":"+14155550111"}',
    },
    {
      method: 'POST',
      url: '/admin/v1/organizations/o1/outbound-calls',
      auth,
      type: json,
      body: '{"agent_user_id":"u1","agent_phone":"+14155550111","customer_phone":"+14155550122","from_number":"+14155550100","recording_mode":"no_recording"}',
    },
    { method: 'POST', url: '/admin/v1/calls/c9/reprocess', auth, type: '', body: '' },
  ]);
});

test('docs/cli.md lists every operator command with its usage line', async () => {
  const doc = await readFile(join(ROOT, 'docs/cli.md'), 'utf8');
  for (const c of COMMANDS.filter((c) => c.section !== 'integrator')) {
    assert.ok(doc.includes(`- \`${usageOf(c)}\``), usageOf(c));
  }
  assert.ok(doc.includes('## `callcap export`'));
  for (const c of COMMANDS.filter((c) => c.section === 'integrator' && c.words[0] !== 'export')) {
    assert.ok(doc.includes(`- \`${usageOf(c)}\``), usageOf(c));
  }
});
