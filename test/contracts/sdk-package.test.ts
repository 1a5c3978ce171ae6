/**
 * The SDK as integrators get it: `npm run build:sdk`, `npm pack`, the tarball installed (offline: the
 * package has no dependencies) into a temporary project, then its verifier and client run there
 * (the installed project is kept under the system temp folder by a hash of what the build and the
 * pack read, sdk/ and the TypeScript version, and copied for each run: the build, pack and install
 * run again whenever any of it changes),
 *
 * - on the installed Node (24) and on Node 20 and 22 (the `node` npm package at those versions,
 *   installed once into node_modules/.cache/sdk-node-versions, or SDK_NODE_CACHE_DIR; later runs
 *   reuse it),
 * - with Web Crypto only: `@callcap/sdk/web` in a process where importing any Node built-in fails
 *   (block-node-builtins.mjs), which also proves the Node entry point cannot load there,
 *
 * the client against the real service (the test harness listening on 127.0.0.1) and against a small
 * flaky server for the retries. A consumer file is type-checked against the installed `.d.ts`.
 */
import assert from 'node:assert/strict';
import { execFile, type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { newId } from '../../src/ids.ts';
import { signatureHeader } from '../../src/webhooks/delivery/signing.ts';
import { serializeEvent } from '../../src/webhooks/outbox/outbox.ts';
import { sampleEventData } from '../helpers/event-samples.ts';
import { insertApiKey, insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

const root = resolve(import.meta.dirname, '../..');
const sdkDir = join(root, 'sdk');
const fixtures = join(import.meta.dirname, 'sdk-package');
const cacheDir = resolve(
  process.env.SDK_NODE_CACHE_DIR ?? join(root, 'node_modules/.cache/sdk-node-versions'),
);
const OTHER_NODES = [20, 22];

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', ...env },
  });
  if (r.error) throw r.error;
  return r;
}

function mustRun(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  const r = run(cmd, args, cwd, env);
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The node binary of the `node` npm package at `major`, installed once into the cache. */
function nodeBinary(major: number): string {
  const dir = join(cacheDir, String(major));
  const bin = join(dir, 'node_modules', '.bin', 'node');
  if (existsSync(bin) && run(bin, ['--version'], dir).stdout.startsWith(`v${major}.`)) return bin;
  // Installed beside, then renamed into place: an interrupted install never looks complete.
  mkdirSync(cacheDir, { recursive: true });
  const staging = mkdtempSync(join(cacheDir, `.${major}-`));
  writeFileSync(
    join(staging, 'package.json'),
    JSON.stringify({ name: `sdk-node-${major}`, private: true, allowScripts: { node: true } }),
  );
  mustRun(
    'npm',
    ['install', `node@${major}`, '--no-save', '--no-package-lock', '--no-audit', '--no-fund'],
    staging,
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  const version = mustRun(bin, ['--version'], dir);
  assert.ok(version.startsWith(`v${major}.`), `node@${major} installed ${version}`);
  return bin;
}

/** What `npm run build:sdk` and `npm pack` read: sdk/ (but its build output and tests) and TypeScript. */
function sdkInputsKey(): string {
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!['dist', 'node_modules', 'test'].includes(e.name) || dir !== sdkDir) walk(path);
      } else if (!e.name.endsWith('.tgz')) {
        h.update(`${path.slice(sdkDir.length)}\0`);
        h.update(readFileSync(path));
      }
    }
  };
  walk(sdkDir);
  h.update(readFileSync(join(root, 'node_modules/typescript/package.json')));
  return h.digest('hex').slice(0, 16);
}

/**
 * A project with the packed SDK installed, and the packed file list: built, packed and installed
 * exactly as a release and an integrator would, once per sdkInputsKey (in a staging folder renamed
 * into place when complete, so an interrupted run never leaves one that looks done).
 */
function installedProject(): { dir: string; files: string[] } {
  const cache = join(tmpdir(), 'callcap-test-templates');
  const dir = join(cache, `sdk-package-${sdkInputsKey()}`);
  const listFile = join(dir, 'packed-files.json');
  if (existsSync(listFile)) return { dir, files: JSON.parse(readFileSync(listFile, 'utf8')) };
  // Build and pack exactly as a release would.
  mustRun('npm', ['run', 'build:sdk'], root);
  mkdirSync(cache, { recursive: true });
  const staging = mkdtempSync(join(cache, '.sdk-package-'));
  const packed = JSON.parse(
    mustRun('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', staging], sdkDir),
  ) as { filename: string; files: { path: string }[] }[];
  const tarball = join(staging, packed[0].filename);
  // A fresh project installs the tarball without the network.
  writeFileSync(
    join(staging, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  mustRun('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--no-package-lock'], staging);
  const files = packed[0].files.map((f) => f.path);
  writeFileSync(join(staging, 'packed-files.json'), JSON.stringify(files));
  try {
    renameSync(staging, dir);
  } catch (err) {
    // Another run made it meanwhile: the same inputs, so the same project.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(listFile)) throw err;
  }
  return { dir, files };
}

let h: Harness;
let installedDir: string;
let project: string;
let flaky: Server;
let input: Record<string, unknown>;
const flakyRequests: string[] = [];
const runtimes: { label: string; bin: string }[] = [];

before(
  async () => {
    // 1-2. The packed SDK installed into a fresh project (made once per hash of its inputs).
    const installed = installedProject();
    installedDir = installed.dir;
    assert.ok(
      installed.files.includes('dist/index.js') &&
        installed.files.includes('dist/index.d.ts') &&
        installed.files.includes('dist/web.js'),
    );
    assert.ok(
      !installed.files.some((f) => f.startsWith('src/') || f.startsWith('test/')),
      installed.files.join(', '),
    );
    project = mkdtempSync(join(tmpdir(), 'callcap-sdk-package-'));
    cpSync(installed.dir, project, { recursive: true });
    for (const f of ['node-check.mjs', 'web-check.mjs', 'block-node-builtins.mjs']) {
      copyFileSync(join(fixtures, f), join(project, f));
    }

    // 3. The runtimes.
    runtimes.push({ label: 'installed', bin: process.execPath });
    for (const major of OTHER_NODES) runtimes.push({ label: `node@${major}`, bin: nodeBinary(major) });

    // 4. The real service on a socket, with an organization, a key and five calls.
    h = await createHarness();
    const { orgId, ownerId } = await insertOrg(h.db);
    const { key } = await insertApiKey(h.db, { orgId, userId: ownerId });
    const callIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      callIds.push(await insertCall(h.db, { orgId, createdAt: new Date(Date.UTC(2026, 5, 1 + i)) }));
    }
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = h.app.server.address() as AddressInfo;

    // 5. A flaky server: per run, 503 + Retry-After 0, a reset connection, 429 + Retry-After 1, then 200.
    const attempts = new Map<string, number>();
    flaky = createServer((req, res) => {
      const [, kind, runId] = /^\/(flaky|down)\/([^/]+)\//.exec(req.url ?? '') ?? [];
      const n = (attempts.get(`${kind}${runId}`) ?? 0) + 1;
      attempts.set(`${kind}${runId}`, n);
      flakyRequests.push(`${kind}:${runId}:${n}`);
      const error = (status: number, code: string, retryAfter: string) =>
        res
          .writeHead(status, { 'content-type': 'application/json', 'retry-after': retryAfter })
          .end(JSON.stringify({ success: false, error: { code, message: code }, meta: { timestamp: 'x' } }));
      if (kind === 'down') return error(503, 'MAINTENANCE', '1');
      if (n === 1) return error(503, 'MAINTENANCE', '0');
      if (n === 2) return void req.socket.destroy();
      if (n === 3) return error(429, 'RATE_LIMITED', '1');
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          success: true,
          data: { api_key_id: newId(), user_id: newId(), organization_id: 'flaky-org', scopes: [] },
        }),
      );
    });
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    const flakyPort = (flaky.address() as AddressInfo).port;

    // A delivery exactly as the service signs it (server code, not the SDK's).
    const eventId = newId();
    const callId = callIds[0];
    const body = serializeEvent(
      {
        organizationId: orgId,
        environment: 'live',
        eventType: 'call.completed',
        resourceId: callId,
        callId,
        factKey: callId,
        data: sampleEventData('call.completed', callId, new Date()),
        createdAt: new Date(),
      },
      eventId,
    );
    const secret = `whsec_${newId()}`;
    const timestamp = Math.floor(Date.now() / 1000);
    input = {
      body,
      secret,
      timestamp,
      headers: {
        'content-type': 'application/json',
        'service-signature': signatureHeader(secret, body, timestamp),
        'service-event-id': eventId,
        'service-event-type': 'call.completed',
      },
      eventId,
      apiKey: key,
      baseUrl: `http://127.0.0.1:${port}/api/v1`,
      flakyPort,
      missingId: newId(),
      orgId,
      callIds: [...callIds].reverse(), // newest first
    };
  },
  { timeout: 600_000 },
);

after(async () => {
  await h?.close();
  await new Promise<void>((r) => (flaky ? flaky.close(() => r()) : r()));
  if (project) rmSync(project, { recursive: true, force: true });
});

/**
 * Runs a check script in the consumer project. Asynchronously: the service it calls runs in this
 * process, and a synchronous spawn would block the very event loop that must answer it.
 */
async function check(bin: string, script: string, runId: string, extraArgs: string[] = []) {
  const env = {
    ...process.env,
    SDK_CHECK_INPUT: JSON.stringify({
      ...input,
      flakyUrl: `http://127.0.0.1:${input.flakyPort}/flaky/${runId}/api/v1`,
      downUrl: `http://127.0.0.1:${input.flakyPort}/down/${runId}/api/v1`,
    }),
  };
  const { stdout, stderr, error } = await new Promise<{
    stdout: string;
    stderr: string;
    error: Error | null;
  }>((done) =>
    execFile(bin, [...extraArgs, script], { cwd: project, env, timeout: 60_000 }, (err, out, errOut) =>
      done({ stdout: String(out), stderr: String(errOut), error: err }),
    ),
  );
  assert.equal(error, null, `${bin} ${script} failed:\n${stdout}\n${stderr}`);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
}

test('the packed SDK verifies and calls the API on the installed Node and on Node 20 and 22', async () => {
  // The runtimes run at once (each has its own run id on the flaky server): their waits are
  // Retry-After seconds, not work.
  const outs = await Promise.all(
    runtimes.map(({ label, bin }) => check(bin, 'node-check.mjs', `node-${label}`)),
  );
  for (const [i, { label }] of runtimes.entries()) {
    const runId = `node-${label}`;
    const out = outs[i];
    const major = label === 'installed' ? process.versions.node.split('.')[0] : label.split('@')[1];
    assert.match(out.runtime, new RegExp(`^v${major}\\.`), label);
    assert.equal(out.verified, input.eventId, label);
    assert.equal(out.verifiedSubpath, 'call.completed', label);
    assert.equal(out.verifiedSync, input.eventId, label);
    assert.equal(out.verifiedAsync, input.eventId, label);
    assert.equal(out.tamperedRejected, true, label);
    assert.equal(out.me, input.orgId, label);
    assert.deepEqual(out.calls, input.callIds, `${label}: every call, page by page`);
    assert.equal(out.notFound.status, 404, label);
    assert.equal(out.notFound.code, 'NOT_FOUND', label);
    assert.equal(out.notFound.retryable, false, label);
    assert.match(out.notFound.requestId, /^[A-Za-z0-9._:-]{1,128}$/, `${label}: the request id`);
    assert.deepEqual(out.badRequest, { status: 400, code: 'BAD_REQUEST', param: 'limit' }, label);
    assert.equal(out.flakyMe, 'flaky-org', label);
    assert.deepEqual(
      flakyRequests.filter((r) => r.startsWith(`flaky:${runId}:`)),
      [1, 2, 3, 4].map((n) => `flaky:${runId}:${n}`),
      `${label}: 503, reset, 429, then success`,
    );
    assert.deepEqual(out.maintenance, { retryable: true, retryAfterSeconds: 1 }, label);
    assert.equal(flakyRequests.filter((r) => r.startsWith(`down:${runId}:`)).length, 2, `${label}: bounded`);
  }
});

test('with Web Crypto only (every Node built-in blocked), @callcap/sdk/web verifies and calls the API', async () => {
  const outs = await Promise.all(
    runtimes.map(({ label, bin }) =>
      check(bin, 'web-check.mjs', `web-${label}`, ['--import', './block-node-builtins.mjs']),
    ),
  );
  for (const [i, { label }] of runtimes.entries()) {
    const out = outs[i];
    assert.equal(out.verified, input.eventId, label);
    assert.equal(out.verifiedFn, 'call.completed', label);
    assert.equal(out.tamperedRejected, true, label);
    assert.equal(out.syncRefused, true, label);
    assert.equal(out.signatureEqual, true, label);
    assert.equal(out.handled, 'processed', label);
    assert.equal(out.nodeEntry, 'ERR_BLOCKED_BUILTIN', `${label}: the hook blocks node:crypto`);
    assert.equal(out.me, input.orgId, label);
    assert.deepEqual(out.notFound, [404, 'NOT_FOUND'], label);
  }
});

test('a consumer type-checks against the installed .d.ts (no skipLibCheck)', () => {
  writeFileSync(
    join(project, 'consumer.ts'),
    [
      "import { CallCaptureClient, NodeCryptoProvider, verifyWebhook, type WebhookEvent } from '@callcap/sdk';",
      "import { SubtleCryptoProvider, WebhookVerifier } from '@callcap/sdk/web';",
      "const verifier = new WebhookVerifier({ secrets: 's', crypto: new SubtleCryptoProvider() });",
      'export async function receive(body: string, headers: Record<string, string>): Promise<string | null> {',
      '  const event = (await verifier.verifyAsync(body, headers)) as WebhookEvent;',
      "  if (event.event_type === 'call.completed') return event.data.transcript_processed.summary;",
      '  return null;',
      '}',
      "export const client = new CallCaptureClient({ apiKey: 'k', baseUrl: 'https://x.test/api/v1' });",
      'export const sync = (b: string) => verifyWebhook(b, {}, "s", { crypto: new NodeCryptoProvider() });',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2022'],
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        // tsc's own incremental mode, its state kept with the installed project (CONSUMER_BUILD_INFO).
        incremental: true,
        tsBuildInfoFile: `./${CONSUMER_BUILD_INFO}`,
        types: ['node'],
        typeRoots: [join(root, 'node_modules/@types')],
      },
      files: ['consumer.ts'],
    }),
  );
  const r = run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', '.'], project);
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  // Kept for the next run (written aside and renamed: a concurrent run reads a whole file or none).
  const kept = join(installedDir, `.${CONSUMER_BUILD_INFO}.${process.pid}`);
  copyFileSync(join(project, CONSUMER_BUILD_INFO), kept);
  renameSync(kept, join(installedDir, CONSUMER_BUILD_INFO));
});

/**
 * The consumer's type-check state (tsc --incremental's build info). cpSync copies the last run's into
 * the project; tsc re-checks every file whose content hash changed since and reuses the diagnostics
 * of the others (most of the ~2.5 s it saves of ~5 s is @types/node, which skipLibCheck: false
 * checks too). The installed .d.ts only change with sdkInputsKey, which names a new project.
 */
const CONSUMER_BUILD_INFO = 'consumer.tsbuildinfo';
