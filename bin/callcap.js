#!/usr/bin/env node
// The `callcap` executable. The service needs Node 24 (it runs its TypeScript sources natively);
// on an older node this re-executes itself with the Node 24 binary pinned by the `node` npm
// dependency, with the same arguments, stdio and exit status. Plain JS so any node can parse it.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);

if (major >= 24) {
  await import('../src/cli.ts');
} else if (process.env.CALLCAP_REEXEC === '1') {
  process.stderr.write(`callcap: needs Node 24 or newer, but the pinned node is ${process.version}.\n`);
  process.exit(1);
} else {
  const require = createRequire(import.meta.url);
  let nodeBin;
  try {
    nodeBin = require.resolve('node/bin/node');
  } catch {
    process.stderr.write(
      `callcap: needs Node 24 or newer (this is ${process.version}) and the "node" package is not installed; ` +
        'run "npm install" in the callcap directory or use Node 24.\n',
    );
    process.exit(1);
  }
  const child = spawn(nodeBin, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, CALLCAP_REEXEC: '1' },
  });
  // Ctrl-C reaches the child through the terminal's process group: the parent only waits for it.
  // SIGTERM/SIGHUP sent to this process alone are passed on, so the child can close gracefully.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code ?? 1);
    }
  });
}
