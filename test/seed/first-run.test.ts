import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { migratedDataDir } from '../helpers/pglite-datadir.ts';
import { compileCacheEnv, SERVICE_NODE_ARGS } from '../helpers/service-process.ts';

/**
 * `callcap serve` on a new DATA_DIR, as a new operator runs it: the first start seeds the demo
 * and prints the operator token, the demo key and the console login; the second start prints none of
 * them but where they were shown and the command that gives new ones, and that command works.
 *
 * DATA_DIR's database starts as the migrated, empty template (test/helpers/pglite-datadir.ts): what
 * these starts decide (seed or not, print or not) depends on the database being empty, not on who
 * ran initdb, and initdb with every migration would cost each run seconds. The start from a bare
 * directory, initdb included, is test/readme-walkthrough.test.ts's `npm start` on an empty ./data.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'callcap-first-run-'));
  await migratedDataDir(dataDir);
});
/** Servers still running when a test ends (it failed before stopping them) are killed in `after`. */
const children = new Set<ChildProcess>();
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

function spawnServe(env: Record<string, string> = {}): ChildProcess {
  // SERVICE_NODE_ARGS and the compile cache: a cheaper start of the same code (service-process.ts).
  const child = spawn(process.execPath, [...SERVICE_NODE_ARGS, 'src/cli.ts', 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      PUBLIC_BASE_URL: 'https://calls.example.test',
      LOG_LEVEL: 'silent',
      ...compileCacheEnv(),
      ...env,
    },
  });
  return child;
}

/** Runs a `callcap serve` that must fail to start: its exit code, stdout and stderr (killed after 60 s). */
function failedServe(
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawnServe(env);
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, out, err });
    }),
  );
}

/** A port held by this test process, as another program would hold it. */
async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    release: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Starts `callcap serve` and resolves with its ready banner (the whole first write). */
function serve(): Promise<{ child: ChildProcess; banner: string }> {
  const child = spawnServe();
  children.add(child);
  child.on('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (/is ready\.[\s\S]*\n\n$/.test(out)) resolve({ child, banner: out });
    });
    child.stderr!.on('data', (d) => {
      err += d;
    });
    child.on('exit', (code) =>
      reject(new Error(`serve exited with ${code} before it was ready:\n${out}\n${err}`)),
    );
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.removeAllListeners('exit');
    child.on('exit', (code) => {
      children.delete(child);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

test('a first start on a busy PORT or ADMIN_PORT names the setting, exits 78 and seeds nothing', async () => {
  const held = await holdPort();
  try {
    const api = await failedServe({ PORT: String(held.port) });
    assert.equal(
      api.err,
      `callcap: PORT=${held.port} (HOST=127.0.0.1): 127.0.0.1:${held.port} is already in use: stop what listens there, or set PORT to a free port (EADDRINUSE).\n`,
    );
    assert.equal(api.code, 78);
    assert.equal(api.out, '');
    const operator = await failedServe({ ADMIN_PORT: String(held.port) });
    assert.equal(
      operator.err,
      `callcap: ADMIN_PORT=${held.port} (ADMIN_HOST=127.0.0.1): 127.0.0.1:${held.port} is already in use: stop what listens there, or set ADMIN_PORT to a free port (EADDRINUSE).\n`,
    );
    assert.equal(operator.code, 78);
    assert.equal(operator.out, '');
  } finally {
    await held.release();
  }
  // Nothing was seeded: the next test's first successful start still prints the demo credentials.
});

test('the first start seeds the demo and prints how to use it; a later start names the reset, which works', async () => {
  const first = await serve();
  let oldPassword = '';
  try {
    const b = first.banner;
    const publicPort = /listening on 127\.0\.0\.1:(\d+)/.exec(b)?.[1];
    const operatorUrl = /Operator API {2}(http:\/\/127\.0\.0\.1:\d+)\/admin\/v1/.exec(b)?.[1];
    const token = /Operator token \(saved in .*admin-token\): (cc_admin_[0-9a-f]+)/.exec(b)?.[1];
    const key = /API key \(read\.calls, read\.recordings; shown only now\): (cc_live_\S+)/.exec(b)?.[1];
    assert.ok(publicPort && operatorUrl && token && key, b);
    oldPassword =
      /Console: https:\/\/calls\.example\.test\/app {2}e-mail owner@demo-plumbing\.example {2}password (\S+)/.exec(
        b,
      )?.[1] ?? '';
    assert.ok(oldPassword, b);
    assert.ok(
      b.includes(
        `curl -s -H "Authorization: Bearer ${key}" "https://calls.example.test/api/v1/calls?limit=5"`,
      ),
    );
    assert.equal((await readFile(join(dataDir, 'admin-token'), 'utf8')).trim(), token);

    const me = await fetch(`http://127.0.0.1:${publicPort}/api/v1/me`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(me.status, 200);
    const calls = await fetch(`http://127.0.0.1:${publicPort}/api/v1/calls?limit=100`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(((await calls.json()) as { data: { items: unknown[] } }).data.items.length, 12);
    const health = await fetch(`${operatorUrl}/admin/v1/maintenance`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ public_api_enabled: true }),
    });
    assert.equal(health.status, 200);
  } finally {
    assert.equal(await stop(first.child), 0);
  }

  const second = await serve();
  try {
    const b = second.banner;
    assert.match(b, /Call Capture Service is ready\./);
    // No secret again: no key, no operator token, no password; where they were and how to get new ones.
    assert.doesNotMatch(b, /Demo data created|cc_live_|cc_admin_|Operator token/);
    assert.ok(!b.includes(oldPassword), 'the old password is not printed again');
    const publicPort = /listening on 127\.0\.0\.1:(\d+)/.exec(b)?.[1];
    const adminPort = /Operator API {2}http:\/\/127\.0\.0\.1:(\d+)\/admin\/v1/.exec(b)?.[1];
    const org = /^Demo data: "Demo Plumbing Co\." \(organization ([0-9a-f-]{36})\)\. /m.exec(b)?.[1];
    assert.ok(publicPort && adminPort && org, b);
    const notice = b.slice(b.indexOf('Demo data: '));
    assert.equal(
      notice,
      [
        `Demo data: "Demo Plumbing Co." (organization ${org}). Its console password and API key were printed once, by the first start, and are not kept.`,
        '  Console: https://calls.example.test/app  e-mail owner@demo-plumbing.example',
        `  New password (--api-key: and a new API key): DATA_DIR=${dataDir} ADMIN_PORT=${adminPort} npx callcap demo reset-password`,
        `  Or start over: stop the service, delete ${dataDir} and start again (the first start prints new credentials).`,
        '',
        '',
      ].join('\n'),
    );

    // The reset as printed (its environment, the CLI run by this node rather than npx): a new
    // password that signs in, the old one no longer does.
    const reset = await cli(['demo', 'reset-password'], { DATA_DIR: dataDir, ADMIN_PORT: adminPort });
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal(reset.stderr, '');
    const out = JSON.parse(reset.stdout);
    assert.deepEqual(Object.keys(out), ['organization_id', 'user_id', 'email', 'password']);
    assert.equal(out.organization_id, org);
    assert.equal(out.email, 'owner@demo-plumbing.example');
    assert.match(out.password, /^[A-Za-z0-9_-]{16}$/);
    const signIn = (password: string) =>
      fetch(`http://127.0.0.1:${publicPort}/app/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'owner@demo-plumbing.example', password }),
      });
    const old = await signIn(oldPassword);
    assert.equal(old.status, 401);
    assert.equal(((await old.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
    const fresh = await signIn(out.password);
    assert.equal(fresh.status, 200);
    const session = (await fresh.json()) as { user_id: string; organization_id: string };
    assert.deepEqual([session.user_id, session.organization_id], [out.user_id, org]);
  } finally {
    assert.equal(await stop(second.child), 0);
  }
});

/** `callcap <args>` run by this node from the repository, with `env` (and nothing else but PATH). */
function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/cli.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), ...env },
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}
