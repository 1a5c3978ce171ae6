import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The commands of README.md's first code block (comments dropped): how a newcomer starts the service.
 */
export function firstBlockCommands(readme: string): string[] {
  const m = /^```sh\n([\s\S]*?)^```$/m.exec(readme);
  assert.ok(m, 'README.md starts with a sh block');
  return m[1]
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** Every file under dir (relative paths; a symbolic link is listed, not followed). */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) => {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    return e.isDirectory() ? filesUnder(dir, rel) : [rel];
  });
}

/**
 * README.md "From zero to your first verified event", followed command by command: the section's
 * numbered steps are read from README.md and their shell blocks run in order, each in the terminal
 * it names (`# terminal N`): "(keeps running)" blocks start in the background, the other blocks of
 * a terminal run one after the other in one bash (so variables carry over; any failing command
 * fails the test). A ```text terminal=N block lists lines that must appear in that terminal's output
 * (each up to its first "…") before the walkthrough goes on.
 *
 * What the test changes, and nothing else: the service listens on free loopback ports (PORT,
 * ADMIN_PORT and HOST=127.0.0.1 in the environment; "localhost:3000" in commands becomes
 * 127.0.0.1:<PORT>, 4242 becomes a free port), the password pasted in step 2 is the one step 1
 * printed, and the directory is a fresh one whose entries link to the repository (so ./data and
 * the files the steps write start empty). Step 1's start command is the one README.md's first block
 * gives a newcomer (its `npm install` is not run: node_modules is linked), so a newcomer who
 * started from the top is already running the walkthrough's service. After the last step, every
 * file the steps wrote is one the repository's .gitignore ignores (the secrets stay out of git).
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SECTION = '## From zero to your first verified event';
/** What the test links into its fresh directory: everything else there was written by the steps. */
const LINKED = ['package.json', 'node_modules', 'src', 'bin', 'examples', 'sdk'];
const STEP_TIMEOUT_MS = 120_000;

interface Block {
  kind: 'sh' | 'text';
  terminal: number;
  keepsRunning: boolean;
  body: string;
}

/** The numbered steps of the section, each with its code blocks in document order. */
export function walkthroughSteps(readme: string): { n: number; blocks: Block[] }[] {
  const start = readme.indexOf(`\n${SECTION}\n`);
  assert.ok(start >= 0, `README.md has no section "${SECTION}"`);
  const rest = readme.slice(start + SECTION.length + 2);
  const section = rest.slice(0, rest.search(/^## /m) < 0 ? undefined : rest.search(/^## /m));
  const parts = section.split(/^(?=\d+\. )/m).slice(1);
  return parts.map((part, i) => {
    const n = Number(/^(\d+)\. /.exec(part)?.[1]);
    assert.equal(n, i + 1, 'steps are numbered 1, 2, 3, …');
    const blocks: Block[] = [];
    for (const m of part.matchAll(/^( *)```(\w+)([^\n]*)\n([\s\S]*?)^ *```$/gm)) {
      const [, indent, lang, info, raw] = m;
      const body = raw
        .split('\n')
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n')
        .trimEnd();
      if (lang === 'sh') {
        const head = /^# terminal (\d+)( \(keeps running\))?$/.exec(body.split('\n')[0]);
        assert.ok(head, `step ${n}: a sh block starts with "# terminal N": ${body}`);
        blocks.push({ kind: 'sh', terminal: Number(head[1]), keepsRunning: Boolean(head[2]), body });
      } else if (lang === 'text') {
        const t = /terminal=(\d+)/.exec(info);
        assert.ok(t, `step ${n}: a text block names its terminal (\`\`\`text terminal=N)`);
        blocks.push({ kind: 'text', terminal: Number(t[1]), keepsRunning: false, body });
      }
    }
    return { n, blocks };
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, what: string, output: () => string) {
  const end = Date.now() + STEP_TIMEOUT_MS;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; output so far:\n${output()}`);
    await sleep(50);
  }
}

const tools = ['bash', 'curl', 'jq'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);

test('the README walkthrough runs command by command and the receiver prints the verified events', {
  skip: process.env.TEST_DATABASE_URL
    ? 'the walkthrough starts the service on its embedded database; it runs in the PGlite pass'
    : false,
  timeout: 600_000,
}, async () => {
  assert.deepEqual(
    tools,
    [],
    `the walkthrough needs ${tools.join(', ')} (README: "You need Node, curl and jq")`,
  );
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const steps = walkthroughSteps(readme);
  assert.ok(steps.length >= 5, 'the walkthrough has its steps');
  const start = steps[0].blocks.find((b) => b.kind === 'sh' && b.keepsRunning);
  assert.ok(start, 'step 1 starts the service');
  const startCommands = start.body.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
  assert.deepEqual(startCommands, ['npm start'], 'step 1 starts the service with npm start');
  assert.deepEqual(
    firstBlockCommands(readme),
    ['npm install && npm start'],
    "README's first block installs and starts the service with step 1's command",
  );

  const [publicPort, adminPort, receiverPort] = [await freePort(), await freePort(), await freePort()];
  const work = await mkdtemp(join(tmpdir(), 'callcap-walkthrough-'));
  for (const entry of LINKED) {
    await symlink(join(ROOT, entry), join(work, entry));
  }
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? work,
    LANG: 'C.UTF-8',
    HOST: '127.0.0.1',
    PORT: String(publicPort),
    ADMIN_PORT: String(adminPort),
  };
  let password: string | null = null;
  const command = (s: string) =>
    s
      .replaceAll('localhost:3000', `127.0.0.1:${publicPort}`)
      .replaceAll('4242', String(receiverPort))
      .replaceAll('paste-the-password-here', password ?? 'paste-the-password-here');
  const expected = (s: string) =>
    s.replaceAll('localhost:3000', `localhost:${publicPort}`).replaceAll('4242', String(receiverPort));

  const background = new Map<number, { child: ChildProcessWithoutNullStreams; output: string }>();
  const shells = new Map<
    number,
    { child: ChildProcessWithoutNullStreams; output: string; exited: boolean }
  >();
  const outputOf = (t: number) => background.get(t)?.output ?? shells.get(t)?.output ?? '';
  const transcript: string[] = [];

  try {
    for (const step of steps) {
      for (const block of step.blocks) {
        if (block.kind === 'text') {
          for (const line of expected(block.body).split('\n')) {
            const prefix = line.split('…')[0].trim();
            await waitFor(
              () => outputOf(block.terminal).includes(prefix),
              `step ${step.n}: "${prefix}" in terminal ${block.terminal}`,
              () =>
                `${outputOf(block.terminal)}\n--- terminal 1:\n${outputOf(1)}\n--- terminal 2:\n${outputOf(2)}`,
            );
          }
          if (step.n === 1) {
            password = /password (\S+)/.exec(outputOf(1))?.[1] ?? null;
            assert.ok(password, 'step 1 printed the console password');
          }
          continue;
        }
        const script = command(block.body);
        transcript.push(`--- step ${step.n}, terminal ${block.terminal}\n${script}`);
        if (block.keepsRunning) {
          const child = spawn('bash', ['-c', script], { cwd: work, env, detached: true });
          const entry = { child, output: '' };
          child.stdout.on('data', (d) => {
            entry.output += d;
          });
          child.stderr.on('data', (d) => {
            entry.output += d;
          });
          background.set(block.terminal, entry);
          continue;
        }
        let shell = shells.get(block.terminal);
        if (!shell) {
          const child = spawn('bash', ['--noprofile', '--norc'], { cwd: work, env });
          const entry = { child, output: '', exited: false };
          child.stdout.on('data', (d) => {
            entry.output += d;
          });
          child.stderr.on('data', (d) => {
            entry.output += d;
          });
          child.on('exit', () => {
            entry.exited = true;
          });
          child.stdin.write('set -eo pipefail\n');
          shells.set(block.terminal, entry);
          shell = entry;
        }
        const marker = `__walkthrough_step_${step.n}_done__`;
        shell.child.stdin.write(`${script}\necho ${marker}\n`);
        const s = shell;
        await waitFor(
          () => s.output.includes(marker) || s.exited,
          `step ${step.n} in terminal ${block.terminal}`,
          () => s.output,
        );
        assert.ok(
          !s.exited,
          `step ${step.n} failed in terminal ${block.terminal}:\n${transcript.at(-1)}\noutput:\n${s.output}\nservice:\n${outputOf(1)}`,
        );
      }
    }

    const t2 = outputOf(2);
    assert.match(t2, /"state": "active"/, 'step 5: the subscription is active');
    assert.match(t2, /"environment": "test"/, 'step 5: the subscription is a test one');
    // the simulated carrier's inbound lead script (src/domain/simulated-call.ts), analysed by the rules
    assert.match(t2, /"caller": "Jordan Lee"/, 'step 7: the test call reads back through REST');
    const t3 = outputOf(3);
    assert.match(t3, /^verified call\.completed [0-9a-f-]{36} call [0-9a-f-]{36}$/m);
    assert.doesNotMatch(t3, /rejected|no secret/, 'no delivery was refused');

    // The receiver really verifies: a forged signature is refused with 400.
    const forged = await fetch(`http://127.0.0.1:${receiverPort}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
      },
      body: '{"event_id":"00000000-0000-4000-8000-000000000000","event_type":"webhook.test","data":{}}',
    });
    assert.equal(forged.status, 400);
    await waitFor(
      () => outputOf(3).includes('rejected: signature mismatch'),
      'the forged event refused',
      () => outputOf(3),
    );

    // What the steps wrote (the session cookie, the subscription with its secret, ./data) is ignored.
    const written = filesUnder(work).filter((f) => !LINKED.includes(f.split('/')[0]));
    assert.ok(written.includes('walkthrough/webhook-secret.txt'), written.join('\n'));
    const check = spawnSync('git', ['check-ignore', '--no-index', '--verbose', '--non-matching', '--stdin'], {
      cwd: ROOT,
      input: written.join('\n'),
      encoding: 'utf8',
    });
    const tracked = check.stdout.split('\n').filter((l) => l.startsWith('::'));
    assert.deepEqual(tracked, [], 'files the walkthrough wrote that git would offer to commit');
    assert.ok(check.stdout.includes('walkthrough/cookies.txt'), check.stdout + check.stderr);
  } finally {
    for (const s of shells.values()) if (!s.exited) s.child.stdin.end('exit 0\n');
    for (const b of background.values()) {
      if (b.child.exitCode !== null || b.child.signalCode !== null) continue;
      const exited = new Promise((r) => b.child.once('exit', r));
      process.kill(-(b.child.pid as number), 'SIGTERM');
      // The 15 s bound is cleared once the child exits: a pending timer would keep the file open
      // (its process, or its test worker) for the rest of the 15 s.
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (bound = setTimeout(r, 15_000)))]);
      clearTimeout(bound);
      if (b.child.exitCode === null && b.child.signalCode === null)
        process.kill(-(b.child.pid as number), 'SIGKILL');
    }
    await rm(work, { recursive: true, force: true });
  }
});
