import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseFile } from 'music-metadata';
import { hashApiKey } from '../../src/accounts/api-key-format.ts';
import { verifyPassword } from '../../src/accounts/passwords.ts';
import { DAY } from '../../src/clock.ts';
import { silentMp3 } from '../../src/seed/demo-audio.ts';
import { demoResetCommand } from '../../src/seed/demo-owner.ts';
import { DEMO_OWNER_EMAIL, demoLaterStartNotice, seedDemoIfEmpty } from '../../src/seed/seed.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders } from '../helpers/http.ts';

let h: Harness;
let printed: string | null;
before(async () => {
  h = await createHarness();
  printed = await seedDemoIfEmpty(h.deps);
});
after(async () => {
  await h.close();
});

const NOW = new Date('2026-06-15T10:00:00.000Z');

interface CallRow {
  id: string;
  direction: string;
  caller_phone: string;
  customer_phone_e164: string | null;
  customer_phone_national: string | null;
  customer_phone_rdigits: string | null;
  company_phone_e164: string | null;
  crm_status: string;
  review_status: string | null;
  outbound_lifecycle: string | null;
  recording_state: string;
  recording_key: string | null;
  recording_bytes: number | null;
  duration: number | null;
  processing_state: string;
  trashed_at: Date | null;
  deletion_scheduled_at: Date | null;
  pending_deletion_at: Date | null;
  created_at: Date;
}
const calls = async () => (await h.db.query<CallRow>('SELECT * FROM calls ORDER BY created_at DESC')).rows;

test('seeding an empty database creates the demo organization, its owner and a read key', async () => {
  const orgs = await h.db.query<{ id: string; name: string; country: string; entitlement: string }>(
    'SELECT id, name, country, entitlement FROM organizations',
  );
  assert.equal(orgs.rows.length, 1);
  assert.deepEqual(
    { ...orgs.rows[0], id: undefined },
    {
      id: undefined,
      name: 'Demo Plumbing Co.',
      country: 'US',
      entitlement: 'active',
    },
  );
  const users = await h.db.query<{ email: string; role: string; password_hash: string }>(
    'SELECT email, role, password_hash FROM users',
  );
  assert.equal(users.rows.length, 1);
  assert.equal(users.rows[0].email, DEMO_OWNER_EMAIL);
  assert.equal(users.rows[0].role, 'owner');
  const password = /password (\S+)/.exec(printed ?? '')?.[1] ?? '';
  assert.equal(await verifyPassword(password, users.rows[0].password_hash), true);
  const keys = await h.db.query<{ key_hash: string; scopes: string[]; revoked_at: Date | null }>(
    'SELECT key_hash, scopes, revoked_at FROM api_keys',
  );
  const key = /API key .*: (cc_live_\S+)/.exec(printed ?? '')?.[1] ?? '';
  assert.deepEqual(keys.rows, [
    { key_hash: hashApiKey(key), scopes: ['read.calls', 'read.recordings'], revoked_at: null },
  ]);
});

test('the printed text gives the API key, the console login and a ready-to-paste curl', async () => {
  const key = /API key .*: (cc_live_\S+)/.exec(printed ?? '')?.[1];
  assert.ok(key, printed ?? 'nothing printed');
  assert.match(
    printed!,
    /Console: https:\/\/calls\.example\.test\/app {2}e-mail owner@demo-plumbing\.example {2}password \S{16}/,
  );
  assert.ok(
    printed!.includes(
      `curl -s -H "Authorization: Bearer ${key}" "https://calls.example.test/api/v1/calls?limit=5"`,
    ),
  );
});

test('the demo has 12 calls covering every recording state, the trash and a scheduled deletion', async () => {
  const rows = await calls();
  assert.equal(rows.length, 12);
  const states = new Set(rows.map((r) => r.recording_state));
  assert.deepEqual([...states].sort(), ['available', 'deleted', 'not_captured', 'pending', 'refused']);
  assert.deepEqual(new Set(rows.map((r) => r.direction)), new Set(['inbound', 'outbound']));
  assert.deepEqual(
    new Set(rows.map((r) => r.crm_status)),
    new Set(['new', 'to_call', 'contacted', 'qualified']),
  );
  assert.deepEqual(
    new Set(rows.map((r) => r.review_status)),
    new Set([null, 'new', 'needs_decision', 'needs_review', 'handled', 'no_action']),
  );
  const trashed = rows.filter((r) => r.trashed_at);
  assert.equal(trashed.length, 1);
  assert.equal(trashed[0].recording_state, 'available');
  const scheduled = rows.filter((r) => r.pending_deletion_at);
  assert.equal(scheduled.length, 1);
  assert.ok(scheduled[0].deletion_scheduled_at! < NOW && scheduled[0].pending_deletion_at! > NOW);
  const refused = rows.find((r) => r.recording_state === 'refused')!;
  assert.equal(refused.direction, 'inbound');
  const notCaptured = rows.find((r) => r.recording_state === 'not_captured')!;
  assert.equal(notCaptured.direction, 'outbound');
  assert.equal(notCaptured.outbound_lifecycle, 'customer_no_answer');
});

test('demo calls spread over the last two weeks relative to the clock', async () => {
  for (const r of await calls()) {
    assert.ok(r.created_at <= NOW && r.created_at.getTime() > NOW.getTime() - 14 * DAY, String(r.created_at));
  }
});

test('demo phone numbers written in mixed spellings are stored normalized', async () => {
  for (const r of await calls()) {
    assert.match(r.customer_phone_e164 ?? '', /^\+1\d{10}$/);
    assert.match(r.customer_phone_national ?? '', /^\(\d{3}\) \d{3}-\d{4}$/);
    assert.equal(r.customer_phone_rdigits, r.customer_phone_e164!.slice(1).split('').reverse().join(''));
    assert.equal(r.company_phone_e164, '+14155550100');
  }
  const spelled = new Set((await calls()).map((r) => r.caller_phone));
  assert.ok(spelled.has('2125550147') && spelled.has('+1 (303) 555 0126') && spelled.has('415.555.0178'));
});

test('every available demo call has a stored MP3 whose measured duration is the stored one', async () => {
  const available = (await calls()).filter((r) => r.recording_state === 'available');
  assert.ok(available.length >= 2);
  for (const r of available) {
    const path = h.deps.store.localPath(r.recording_key!)!;
    assert.equal(await h.deps.store.size(r.recording_key!), r.recording_bytes);
    const meta = await parseFile(path, { duration: true });
    assert.equal(meta.format.container, 'MPEG');
    assert.equal(meta.format.codec, 'MPEG 1 Layer 3');
    assert.equal(meta.format.sampleRate, 44100);
    assert.equal(Math.round(meta.format.duration! * 1000) / 1000, r.duration);
  }
  const others = (await calls()).filter((r) => r.recording_state !== 'available');
  assert.ok(others.every((r) => r.recording_key === null));
});

test('the demo MP3 generator writes 417-byte frames of 1152 samples at 44.1 kHz', () => {
  const { bytes, duration } = silentMp3(10);
  assert.equal(bytes.length, 383 * 417);
  assert.deepEqual([...bytes.subarray(0, 4)], [0xff, 0xfb, 0x90, 0x64]);
  assert.deepEqual([...bytes.subarray(417, 421)], [0xff, 0xfb, 0x90, 0x64]);
  assert.equal(duration, (383 * 1152) / 44100);
});

test('processed demo calls have an analysis with every field, some with a follow-up e-mail draft', async () => {
  const { rows } = await h.db.query<{
    analysis: Record<string, unknown>;
    followup_email: { subject: string; body: string; language: string } | null;
    transcript_original: string | null;
    processing_state: string;
  }>(
    `SELECT a.analysis, a.followup_email, a.transcript_original, c.processing_state
       FROM call_analyses a JOIN calls c ON c.id = a.call_id`,
  );
  assert.ok(rows.length >= 8);
  for (const r of rows) {
    assert.equal(r.processing_state, 'processed');
    assert.ok(r.transcript_original);
    // One turn per line, as the pipeline stores transcripts: the call page shows the speakers apart.
    for (const line of r.transcript_original.split('\n'))
      assert.match(line, /^(Agent|Agente|Caller|Customer|Cliente|Voicemail): \S/);
    for (const f of [
      'caller_name',
      'summary',
      'subject',
      'service_needed',
      'services_match',
      'lead_score',
      'preferred_date',
      'client_city',
      'client_address',
      'additional_details',
      'proposal_items',
    ]) {
      assert.ok(f in r.analysis, f);
    }
    assert.ok(typeof r.analysis.subject === 'string' && r.analysis.subject.length <= 80);
  }
  const drafts = rows.filter((r) => r.followup_email);
  assert.ok(drafts.length >= 3);
  assert.ok(drafts.some((d) => d.followup_email!.language === 'es'));
  for (const d of drafts)
    assert.deepEqual(Object.keys(d.followup_email!).sort(), ['body', 'language', 'subject']);
  const unprocessed = (await calls()).filter((r) => r.processing_state === 'none');
  assert.deepEqual(unprocessed.map((r) => r.recording_state).sort(), ['not_captured', 'pending', 'refused']);
});

test('a second start seeds nothing', async () => {
  const before = (await calls()).length;
  assert.equal(await seedDemoIfEmpty(h.deps), null);
  assert.equal((await calls()).length, before);
  const orgs = await h.db.query<{ n: number }>('SELECT count(*) AS n FROM organizations');
  assert.equal(orgs.rows[0].n, 1);
});

test('with DATABASE_URL set nothing is seeded, even on an empty database', async () => {
  const other = await createHarness({ DATABASE_URL: 'postgres://operator@db.example.test:5432/callcap' });
  try {
    assert.equal(await seedDemoIfEmpty(other.deps), null);
    const orgs = await other.db.query<{ n: number }>('SELECT count(*) AS n FROM organizations');
    assert.equal(orgs.rows[0].n, 0);
  } finally {
    await other.close();
  }
});

test('a later start on the demo data says where its credentials were shown and how to get new ones', async () => {
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM organizations');
  const notice = await demoLaterStartNotice(h.deps, { resetCommand: 'npx callcap demo reset-password' });
  assert.equal(
    notice,
    [
      `Demo data: "Demo Plumbing Co." (organization ${rows[0].id}). Its console password and API key were printed once, by the first start, and are not kept.`,
      '  Console: https://calls.example.test/app  e-mail owner@demo-plumbing.example',
      '  New password (--api-key: and a new API key): npx callcap demo reset-password',
      `  Or start over: stop the service, delete ${h.config.DATA_DIR} and start again (the first start prints new credentials).`,
    ].join('\n'),
  );
  const key = /API key .*: (cc_live_\S+)/.exec(printed ?? '')?.[1] ?? '';
  const password = /password (\S+)/.exec(printed ?? '')?.[1] ?? '';
  assert.ok(key && password && !notice?.includes(key) && !notice?.includes(password), 'no secret in it');
});

test('no later-start notice without the demo owner, nor with DATABASE_URL', async () => {
  const other = await createHarness();
  const pg = await createHarness({ DATABASE_URL: 'postgres://operator@db.example.test:5432/callcap' });
  try {
    const org = (h: Harness, email: string) =>
      h.operator.inject({
        method: 'POST',
        url: '/admin/v1/organizations',
        headers: adminHeaders,
        payload: { name: 'Acme', owner_email: email, owner_password: 'long enough' },
      });
    assert.equal((await org(other, 'someone@acme.example')).statusCode, 201);
    assert.equal(await demoLaterStartNotice(other.deps, { resetCommand: 'x' }), null);
    assert.equal((await org(pg, DEMO_OWNER_EMAIL)).statusCode, 201);
    assert.equal(await demoLaterStartNotice(pg.deps, { resetCommand: 'x' }), null);
  } finally {
    await other.close();
    await pg.close();
  }
});

test('the reset command names the settings the CLI would otherwise get wrong, and never a token', () => {
  const defaults = { dataDir: './data', adminTokenFromEnv: false, adminHost: '127.0.0.1', adminPort: 3001 };
  assert.equal(demoResetCommand(defaults), 'npx callcap demo reset-password');
  assert.equal(demoResetCommand({ ...defaults, dataDir: 'data/' }), 'npx callcap demo reset-password');
  assert.equal(demoResetCommand({ ...defaults, adminHost: '0.0.0.0' }), 'npx callcap demo reset-password');
  assert.equal(
    demoResetCommand({ ...defaults, dataDir: '/srv/callcap data', adminPort: 4001 }),
    "DATA_DIR='/srv/callcap data' ADMIN_PORT=4001 npx callcap demo reset-password",
  );
  assert.equal(
    demoResetCommand({ ...defaults, dataDir: '/srv/x', adminTokenFromEnv: true, adminHost: '10.0.0.5' }),
    'ADMIN_TOKEN=<the operator token> ADMIN_HOST=10.0.0.5 npx callcap demo reset-password',
  );
});

test('a demo call with a recording and a transcript has a time for each line, within the recording', async () => {
  const { rows } = await h.db.query<{ times: [number, number][] | null; t: string; duration: number }>(
    `SELECT c.transcript_times AS times, ca.transcript_original AS t, c.duration
       FROM calls c JOIN call_analyses ca ON ca.call_id = c.id
      WHERE c.recording_state = 'available' AND ca.transcript_original IS NOT NULL`,
  );
  assert.ok(rows.length >= 3, `${rows.length} demo calls to play`);
  for (const r of rows) {
    assert.ok(r.times, 'times stored');
    assert.equal(r.times.length, r.t.split('\n').length);
    for (const [i, [start, end]] of r.times.entries()) {
      assert.ok(start < end && end <= r.duration, `line ${i}: ${start}–${end} of ${r.duration}`);
      if (i > 0) assert.ok(start > r.times[i - 1][1]);
    }
  }
});
