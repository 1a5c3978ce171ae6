import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import { migratedDataDir } from '../helpers/pglite-datadir.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { compileCacheEnv, SERVICE_NODE_ARGS } from '../helpers/service-process.ts';

/**
 * `callcap listen` end to end: a real service process (embedded database in a new DATA_DIR, free
 * loopback ports; the database starts as the migrated template of test/helpers/pglite-datadir.ts,
 * the very first start being test/seed/first-run.test.ts's subject), `callcap login`, `callcap
 * listen --forward-to` a local receiver that verifies every delivery with the official stripe
 * package, a call ingested through the operator API, `callcap trigger webhook.test`; then the
 * service is stopped while an event is out and started again: the stream reconnects, resumes the
 * session, and every event arrives (the one that was out again, with the same event_id).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OWNER = 'owner@demo-plumbing.example';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

interface Proc {
  child: ChildProcessWithoutNullStreams;
  out: string;
  err: string;
  exited: Promise<number | null>;
}

function start(args: string[], env: Record<string, string>, input?: string): Proc {
  // The service (not the CLI, which has no WebAssembly) with SERVICE_NODE_ARGS: a cheaper start.
  const nodeArgs = args[0] === 'src/main.ts' ? SERVICE_NODE_ARGS : [];
  const child = spawn(process.execPath, [...nodeArgs, ...args], { cwd: ROOT, env });
  const p: Proc = {
    child,
    out: '',
    err: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
  child.stdout.on('data', (d) => {
    p.out += d;
  });
  child.stderr.on('data', (d) => {
    p.err += d;
  });
  child.stdin.end(input ?? '');
  return p;
}

async function until<T>(
  check: () => T | undefined | false | null,
  what: string,
  more: () => string,
  ms = 60_000,
) {
  const end = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${more()}`);
    await sleep(25);
  }
}

async function stop(p: Proc | undefined) {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  // The 15 s bound is cleared once the process exits: a pending timer would keep the file open
  // (its process, or its test worker) for the rest of the 15 s.
  let bound: NodeJS.Timeout | undefined;
  const done = await Promise.race([
    p.exited.then(() => true),
    new Promise<false>((r) => (bound = setTimeout(() => r(false), 15_000))),
  ]);
  clearTimeout(bound);
  if (!done) p.child.kill('SIGKILL');
}

interface Verified {
  event_id: string;
  event_type: string;
  resource_id: string;
  data: Record<string, unknown>;
}

test('callcap listen forwards verified events, survives a service restart and loses nothing', {
  skip: process.env.TEST_DATABASE_URL ? 'starts the service on its embedded database (PGlite pass)' : false,
  timeout: 300_000,
}, async () => {
  const [publicPort, adminPort] = [await freePort(), await freePort()];
  const tmp = await mkdtemp(join(tmpdir(), 'callcap-listen-'));
  const serviceEnv = {
    PATH: process.env.PATH ?? '',
    HOME: tmp,
    HOST: '127.0.0.1',
    PORT: String(publicPort),
    ADMIN_PORT: String(adminPort),
    DATA_DIR: join(tmp, 'data'),
    LOG_LEVEL: 'warn',
    // The run's compile cache: the ~12 service and CLI processes reuse compiled code.
    ...compileCacheEnv(),
  };
  const cliEnv = {
    ...serviceEnv,
    CALLCAP_URL: `http://127.0.0.1:${publicPort}`,
    XDG_CONFIG_HOME: join(tmp, 'config'),
  };
  const cli = async (args: string[], input?: string) => {
    const p = start(['src/cli.ts', ...args], cliEnv, input);
    const code = await p.exited;
    assert.equal(code, 0, `callcap ${args.join(' ')} failed:\n${p.err}`);
    return JSON.parse(p.out) as Record<string, unknown>;
  };

  const stripe = new Stripe('sk_test_x');
  let secret = '';
  const verified: Verified[] = [];
  let rejected = 0;
  /** event_type → what the receiver waits for before answering */
  const holds = new Map<string, Promise<void>>();
  let release = () => {};
  let receiver: Receiver | undefined;
  let service: Proc | undefined;
  let listen: Proc | undefined;
  const logs = () =>
    `--- listen stdout:\n${listen?.out}\n--- listen stderr:\n${listen?.err}\n--- service:\n${service?.out}${service?.err}`;
  try {
    receiver = await startReceiver((req, res) => {
      try {
        const e = stripe.webhooks.constructEvent(
          req.body,
          String(req.headers['service-signature']),
          secret,
        ) as unknown as Verified;
        assert.equal(req.headers['service-event-id'], e.event_id);
        assert.equal(req.headers['service-event-type'], e.event_type);
        verified.push(e);
        const hold = holds.get(e.event_type);
        if (hold) void hold.then(() => res.writeHead(200).end());
        else res.writeHead(200).end();
      } catch {
        rejected++;
        res.writeHead(400).end();
      }
    });

    await migratedDataDir(serviceEnv.DATA_DIR);
    service = start(['src/main.ts', 'serve'], serviceEnv);
    const password = await until(
      () => /password (\S+)/.exec(service?.out ?? '')?.[1],
      'the demo credentials',
      logs,
      120_000,
    );

    const login = await cli(['login', '--email', OWNER, '--password', '-'], `${password}\n`);
    assert.equal(login.email, OWNER);
    const org = String(login.organization_id);
    assert.equal(login.saved_to, join(tmp, 'config', 'callcap', 'session.json'));
    assert.equal(statSync(String(login.saved_to)).mode & 0o777, 0o600, 'the session file is private');

    listen = start(['src/cli.ts', 'listen', '--forward-to', receiver.url], cliEnv);
    secret = await until(
      () => /signing secret is (whsec_\S+)/.exec(listen?.err ?? '')?.[1],
      'the signing secret',
      logs,
    );

    // callcap trigger webhook.test reaches the receiver, verified, and listen prints its line.
    const trig = await cli(['trigger', 'webhook.test']);
    assert.equal(trig.event_type, 'webhook.test');
    assert.equal(trig.sessions, 1);
    await until(() => verified.some((e) => e.event_id === trig.event_id), 'the test event', logs);
    await until(
      () => new RegExp(`webhook\\.test\\s+${trig.event_id}  \\[200\\] \\d+ ms`).test(listen?.out ?? ''),
      'the listen line of the test event',
      logs,
    );

    // A call ingested through the operator API: its events arrive, verified.
    const ingest = async (name: string) => {
      const call = await cli([
        'call',
        'create',
        '--org',
        org,
        '--direction',
        'inbound',
        '--caller-phone',
        '+1 415 555 0132',
        '--caller-name',
        name,
        '--transcript-original',
        `Hi, this is ${name}. Water is leaking under my kitchen sink. Can someone come tomorrow morning?`,
      ]);
      await cli(['call', 'recording', String(call.call_id), 'examples/sample-call.mp3']);
      return String(call.call_id);
    };
    const typesOf = (callId: string) =>
      [...new Set(verified.filter((e) => e.resource_id === callId).map((e) => e.event_type))].sort();
    const first = await ingest('Sarah Johnson');
    await until(() => typesOf(first).includes('call.completed'), 'call.completed of the first call', logs);
    assert.ok(typesOf(first).includes('call.recording.ready'), typesOf(first).join());

    // A test event is out (the receiver holds its reply until the service has stopped) when the
    // service stops: its acknowledgement cannot arrive, so it is sent again after the restart with
    // the same event_id.
    holds.set('webhook.test', new Promise<void>((r) => (release = r)));
    const inFlight = await cli(['trigger', 'webhook.test']);
    await until(
      () => verified.some((e) => e.event_id === inFlight.event_id),
      'the in-flight test event',
      logs,
    );
    await stop(service);
    holds.delete('webhook.test');
    release();
    await until(() => /Stream (lost|closed)/.test(listen?.err ?? ''), 'the CLI noticing the restart', logs);

    service = start(['src/main.ts', 'serve'], serviceEnv);
    // Ingested as soon as the operator API answers: possibly before the stream is back.
    const second = await until(
      () => /Operator API/.test(service?.out ?? '') || undefined,
      'the restarted service',
      logs,
      120_000,
    ).then(() => ingest('Tom Baker'));
    await until(
      () => /Reconnected; session [0-9a-f-]{36} resumed/.test(listen?.err ?? ''),
      'the resumed session',
      logs,
    );
    await until(
      () =>
        typesOf(second).includes('call.completed') &&
        verified.filter((e) => e.event_id === inFlight.event_id).length >= 2,
      'every event of the second call and the redelivered test event',
      logs,
    );
    await until(
      () => typesOf(second).join() === typesOf(first).join(),
      'the second call bringing the same event types as the first',
      () => `${typesOf(first)} / ${typesOf(second)}\n${logs()}`,
    );

    const counts = new Map<string, number>();
    for (const e of verified) counts.set(e.event_id, (counts.get(e.event_id) ?? 0) + 1);
    const redelivered = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    assert.ok(redelivered.includes(String(inFlight.event_id)), 'the event out during the restart came again');
    assert.equal(rejected, 0, 'every forwarded delivery verified');
    console.log(
      `listen e2e: ${verified.length} deliveries verified, ${counts.size} distinct events, ${redelivered.length} redelivered with the same event_id (${redelivered.join(', ')})`,
    );

    // ^C ends the session: the CLI deletes it and says how many it forwarded.
    listen.child.kill('SIGINT');
    assert.equal(await listen.exited, 0);
    assert.match(listen.err, /Session ended; \d+ event\(s\) forwarded\./);
    const after = start(['src/cli.ts', 'trigger', 'webhook.test'], cliEnv);
    assert.equal(await after.exited, 1);
    assert.match(after.err, /No `callcap listen` session of your organization is connected/);

    const out = await cli(['logout']);
    assert.equal(out.logged_out, true);
  } finally {
    await stop(listen);
    await stop(service);
    release();
    await receiver?.close();
    await rm(tmp, { recursive: true, force: true });
  }
});
