import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * `npx callcap …` on a system Node older than 24 prints nothing but the command's own output. npx
 * installs the project itself (it has a `callcap` bin) into its cache and checks the package's
 * `engines` on the way: with `"engines": {"node": ">=24"}` every call printed ten `npm warn
 * EBADENGINE` lines before bin/callcap.js could re-execute itself with the pinned Node 24. The
 * package states no `engines`: Node 24 comes with it (the `node` dependency), the bin re-executes
 * with it and `.node-version` names it for version managers.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** A node older than 24 on PATH (or in the usual places) with its npx beside it, as `which -a node` lists them. */
function systemNode(): { node: string; npx: string; version: string } | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/bin', '/usr/bin'];
  for (const dir of dirs) {
    if (!dir || dir.includes('node_modules')) continue;
    const node = join(dir, 'node');
    const npx = join(dir, 'npx');
    try {
      accessSync(node, constants.X_OK);
      accessSync(npx, constants.X_OK);
      if (realpathSync(node).startsWith(join(ROOT, 'node_modules'))) continue;
    } catch {
      continue;
    }
    const version = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (Number(version.split('.')[0]) < 24) return { node, npx, version };
  }
  return null;
}

const found = systemNode();

test('the package states no engines that an older system node fails (npx checks them)', () => {
  assert.equal(
    pkg.engines,
    undefined,
    'an "engines" field makes npx warn EBADENGINE on every call under an older system node',
  );
  assert.match(
    pkg.dependencies.node,
    /^\^24\./,
    'Node 24 is a dependency: npm scripts and the bin run on it',
  );
  assert.equal(readFileSync(join(ROOT, '.node-version'), 'utf8').trim(), '24');
});

test('npx callcap --help under the system node prints the help and not one warning', {
  skip: !found && 'no node < 24 with an npx beside it on this machine',
  timeout: 120_000,
}, async () => {
  const { node, npx, version } = found as NonNullable<typeof found>;
  // A fresh npx cache, as a newcomer's first `npx callcap` has (the project is installed into it).
  const cache = await mkdtemp(join(tmpdir(), 'callcap-npx-cache-'));
  try {
    // Without npm's own variables (this test may run under `npm test`) and with the system node
    // first on PATH: npx's `#!/usr/bin/env node` then runs on it, as in a newcomer's shell.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const path = (process.env.PATH ?? '').split(delimiter).filter((d) => !d.includes('node_modules'));
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn(npx, ['callcap', '--help'], {
          cwd: ROOT,
          env: {
            ...env,
            PATH: [dirname(node), ...path].join(delimiter),
            npm_config_cache: cache,
            // npm's own "new npm version" notice is not ours to judge
            npm_config_update_notifier: 'false',
          },
        });
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
      },
    );
    console.log(`system node ${node} v${version}, ${npx}`);
    assert.equal(r.stderr, '', 'nothing on stderr');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^callcap: the Call Capture Service\.\n/);
  } finally {
    await rm(cache, { recursive: true, force: true });
  }
});
