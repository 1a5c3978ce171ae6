/**
 * The fault suite's machinery (npm run test:faults): a PostgreSQL server of the test's own, service
 * processes started exactly as an operator starts them (`node src/main.ts serve --role …`), and
 * receivers that misbehave on purpose. Everything listens on 127.0.0.1 only.
 *
 * - startPostgres(): initdb + pg_ctl into a temporary directory on a free port (as the `postgres`
 *   user when run as root). The test may stop, restart or kill it without touching the machine's
 *   own PostgreSQL, which other test runs use.
 * - startNode(roles, env): one service process; resolves when it printed its ready banner, with
 *   the ports it listens on. kill('SIGKILL') / kill('SIGTERM') + exited() for faults.
 * - startFaultReceiver(behaviour): a real HTTP server that answers 200, hangs, answers slowly,
 *   streams a 10 MB body, resets the connection, redirects, or breaks its chunked encoding; it counts
 *   deliveries per event id.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmod, chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');

/** The same 32-byte master key in every node and in the test process (test/helpers/deps.ts). */
export const MASTER_KEY = '07'.repeat(32);
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

async function freePort(): Promise<number> {
  const srv = createNetServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function pgBin(): Promise<string> {
  const versions = (await readdir('/usr/lib/postgresql')).sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

export interface PgServer {
  url: string;
  port: number;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A private PostgreSQL server (fsync off: a test server), running until close(). */
export async function startPostgres(): Promise<PgServer> {
  const bin = await pgBin();
  const dir = await mkdtemp(join(tmpdir(), 'callcap-faults-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const as = async (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
    return run(file, argv, { timeout: 60_000 });
  };
  if (asRoot) {
    await chmod(dir, 0o755);
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout), Number(gid));
  }
  await as(`${bin}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = async () => {
    await as(`${bin}/pg_ctl`, ['-D', data, '-l', join(dir, 'log'), '-o', opts, '-w', '-t', '60', 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await as(`${bin}/pg_ctl`, ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  };
  await start();
  let up = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await start();
      up = true;
    },
    async stop(mode) {
      await stop(mode);
      up = false;
    },
    async close() {
      if (up) await stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface ServiceNode {
  roles: string[];
  child: ChildProcess;
  /** http://127.0.0.1:<PORT> when the api role runs */
  publicUrl: string | null;
  /** http://127.0.0.1:<ADMIN_PORT> when the operator role runs */
  operatorUrl: string | null;
  output(): string;
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited(): Promise<number | string>;
  dataDir: string;
}

/**
 * Starts `node src/main.ts serve --role …` (Node of this test process: the project's Node 24) and
 * waits for its ready banner. `env` comes on top of a minimal environment: DATABASE_URL,
 * MASTER_KEY, ADMIN_TOKEN, ports 0 (read back from the banner), loopback receivers allowed.
 */
export async function startNode(roles: string[], env: Record<string, string>): Promise<ServiceNode> {
  const dataDir = await mkdtemp(join(tmpdir(), 'callcap-faults-node-'));
  const child = spawn(process.execPath, ['src/main.ts', 'serve', ...roles.flatMap((r) => ['--role', r])], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ADMIN_HOST: '127.0.0.1',
      MASTER_KEY,
      ADMIN_TOKEN,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exit = new Promise<number | string>((r) =>
    child.once('exit', (code, sig) => r(code ?? sig ?? 'unknown')),
  );
  const ready = await Promise.race([
    new Promise<boolean>((r) => {
      const check = () => {
        if (out.includes('Call Capture Service is ready.')) {
          child.stdout?.off('data', check);
          r(true);
        }
      };
      child.stdout?.on('data', check);
    }),
    exit.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(false), 60_000).unref()),
  ]);
  if (!ready) {
    child.kill('SIGKILL');
    throw new Error(`node ${roles.join(',')} did not start:\n${out}`);
  }
  const pub = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
  const op = /Operator API\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
  return {
    roles,
    child,
    dataDir,
    publicUrl: pub ? `http://127.0.0.1:${pub[1]}` : null,
    operatorUrl: op ? `http://127.0.0.1:${op[1]}` : null,
    output: () => out,
    kill: (signal) => child.kill(signal),
    exited: () => exit,
  };
}

/** Stops a node for good (SIGKILL if SIGTERM did not end it within 15 s) and removes its DATA_DIR. */
export async function stopNode(node: ServiceNode | undefined): Promise<void> {
  if (!node) return;
  if (node.child.exitCode === null && node.child.signalCode === null) {
    node.kill('SIGTERM');
    const t = setTimeout(() => node.kill('SIGKILL'), 15_000);
    await node.exited();
    clearTimeout(t);
  }
  await rm(node.dataDir, { recursive: true, force: true });
}

export type Behaviour = 'ok' | 'hang' | 'slow' | 'huge' | 'reset' | 'redirect' | 'broken-chunked';

export interface FaultReceiver {
  url: string;
  behaviour: Behaviour;
  /** deliveries received per event id (service-event-id header) */
  seen: Map<string, number>;
  /** arrival times (ms since epoch) of every request */
  arrivals: number[];
  close(): Promise<void>;
}

/**
 * A receiver that behaves as told: ok (200 at once), hang (never answers), slow (200 after
 * slowMs), huge (200 with a 10 MB body), reset (destroys the socket), redirect (302 to another
 * URL), broken-chunked (200 with an invalid chunk size mid-body).
 */
export async function startFaultReceiver(
  behaviour: Behaviour,
  opts: { slowMs?: number; delayMs?: number } = {},
): Promise<FaultReceiver> {
  const seen = new Map<string, number>();
  const arrivals: number[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrivals.push(Date.now());
      const id = String(req.headers['service-event-id'] ?? '');
      seen.set(id, (seen.get(id) ?? 0) + 1);
      const answer = () => {
        switch (behaviour) {
          case 'ok':
            res.writeHead(200).end();
            return;
          case 'hang':
            return; // never answers; the service's time-out must end it
          case 'slow':
            setTimeout(() => res.writeHead(200).end('slow but fine'), opts.slowMs ?? 2_000);
            return;
          case 'huge': {
            res.writeHead(200, { 'content-type': 'text/plain' });
            const block = Buffer.alloc(64 * 1024, 'x');
            let sent = 0;
            const pump = () => {
              while (sent < 10 * 1024 * 1024) {
                sent += block.length;
                if (!res.write(block)) {
                  res.once('drain', pump);
                  return;
                }
              }
              res.end();
            };
            pump();
            return;
          }
          case 'reset':
            req.socket.destroy();
            return;
          case 'redirect':
            res.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' }).end();
            return;
          case 'broken-chunked':
            // A valid status line and headers, then garbage where a chunk size must be.
            req.socket.write(
              'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nZZZ\r\nxx\r\n',
            );
            req.socket.end();
            return;
        }
      };
      if (opts.delayMs) setTimeout(answer, opts.delayMs);
      else answer();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    behaviour,
    seen,
    arrivals,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Polls until check() is true or the time is up; returns how long it took (ms) or throws. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  everyMs = 100,
): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await check()) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Emitted / delivered / duplicated / lost for a set of event ids at a set of receivers; printed. */
export function tally(label: string, eventIds: string[], receivers: FaultReceiver[]) {
  let delivered = 0;
  let duplicated = 0;
  let lost = 0;
  for (const r of receivers) {
    for (const id of eventIds) {
      const n = r.seen.get(id) ?? 0;
      if (n === 0) lost++;
      else {
        delivered++;
        duplicated += n - 1;
      }
    }
  }
  const emitted = eventIds.length * receivers.length;
  console.log(
    `[faults] ${label}: events emitted ${emitted}, delivered ${delivered}, duplicated ${duplicated}, lost ${lost}`,
  );
  return { emitted, delivered, duplicated, lost };
}
